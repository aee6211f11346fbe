// A 32 MiB array in unified memory, written by the host and updated by a kernel in turns, 20 times: each turn the
// host's writes pull its pages back from the GPU and the kernel's reads fault them over again. No copy is made;
// the pages migrate on demand.
#include "../common/sample_check.h"

__global__ void increment(float* x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) x[i] += 1.0f;
}

int main() {
  constexpr int kN = 8 << 20;  // 32 MiB of floats
  constexpr int kTurns = 20;
  float* x = nullptr;
  SAMPLE_CUDA(cudaMallocManaged(&x, kN * sizeof(float)));
  bool ok = true;
  for (int turn = 0; turn < kTurns; ++turn) {
    for (int i = 0; i < kN; ++i) x[i] = static_cast<float>(turn);  // the host writes: pages come back
    increment<<<264, 256>>>(x, kN);                                // the kernel reads: pages go over
    SAMPLE_CUDA(cudaGetLastError());
    SAMPLE_CUDA(cudaDeviceSynchronize());
    ok = ok && x[0] == turn + 1.0f && x[kN - 1] == turn + 1.0f;
  }
  SAMPLE_CUDA(cudaFree(x));
  return sampleResult("managed_memory", ok, "the kernel saw every turn's host writes, and the host its results");
}
