// File: tools/openmpi/mapped_libfabric.h
//
// For MPI programs run over a libfabric chosen by LD_LIBRARY_PATH (the
// Open MPI test and bench:mpi): which libfabric.so the process mapped, so
// that a run proves which library it measured or tested.
#ifndef TOOLS_OPENMPI_MAPPED_LIBFABRIC_H_
#define TOOLS_OPENMPI_MAPPED_LIBFABRIC_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Writes the path of the libfabric.so this process mapped (from
// /proc/self/maps) into `path` (`len` bytes), or "none".
void MappedLibfabric(char* path, size_t len);

#ifdef __cplusplus
}
#endif

#endif  // TOOLS_OPENMPI_MAPPED_LIBFABRIC_H_
