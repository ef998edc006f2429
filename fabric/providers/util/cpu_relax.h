// File: fabric/providers/util/cpu_relax.h
//
// The pause a spin-wait loop takes between two looks at shared memory: it
// lets the other hyperthread run and keeps the loop from flooding the
// memory system (PAUSE on x86; nothing elsewhere).
#ifndef FABRIC_PROVIDERS_UTIL_CPU_RELAX_H_
#define FABRIC_PROVIDERS_UTIL_CPU_RELAX_H_

namespace fabric {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_CPU_RELAX_H_
