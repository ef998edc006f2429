// File: fabric/api/core/export.h
//
// Marks the C entry points that libfabric.so.1 exports. The version script
// (fabric/libfabric.map) decides which of them are public and at which version.
#ifndef FABRIC_API_CORE_EXPORT_H_
#define FABRIC_API_CORE_EXPORT_H_

#define FABRIC_EXPORT __attribute__((visibility("default")))

#endif  // FABRIC_API_CORE_EXPORT_H_
