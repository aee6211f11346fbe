// Shared by the samples: stop on a CUDA error with its location, and report the self-check.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define SAMPLE_CUDA(call)                                                                           \
  do {                                                                                              \
    cudaError_t err_ = (call);                                                                      \
    if (err_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(2);                                                                                 \
    }                                                                                               \
  } while (0)

// Prints "NAME: self-check passed" or the failure, and returns the process exit code.
inline int sampleResult(const char* name, bool ok, const char* what) {
  if (ok) {
    std::printf("%s: self-check passed (%s)\n", name, what);
    return 0;
  }
  std::fprintf(stderr, "%s: self-check FAILED (%s)\n", name, what);
  return 1;
}
