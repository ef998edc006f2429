// File: bench/pin_cpu.h
//
// Pins the calling process to one CPU, as the benchmarks' two processes
// are pinned (floor_pingpong.cc, rma_window.cc).
#ifndef BENCH_PIN_CPU_H_
#define BENCH_PIN_CPU_H_

#include <sched.h>

// True when pinned to `cpu`, or when `cpu` is negative (not pinned).
inline bool PinToCpu(int cpu) {
  if (cpu < 0) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

#endif  // BENCH_PIN_CPU_H_
