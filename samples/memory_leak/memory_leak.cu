// Each step allocates a 8 MiB work buffer and frees only every fourth one: device memory in use grows by
// about 6 MiB a step, the shape of a leak that ends in an out-of-memory error in a long run.
#include <vector>

#include "../common/sample_check.h"

__global__ void fill(float* x, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}

int main() {
  constexpr int kN = 1 << 21;  // 8 MiB
  constexpr int kSteps = 64;
  std::vector<float*> kept;
  size_t free_before = 0, free_after = 0, total = 0;
  SAMPLE_CUDA(cudaMemGetInfo(&free_before, &total));
  for (int step = 0; step < kSteps; ++step) {
    float* work = nullptr;
    SAMPLE_CUDA(cudaMalloc(&work, kN * sizeof(float)));
    fill<<<(kN + 255) / 256, 256>>>(work, static_cast<float>(step), kN);
    if (step % 4 == 0) {
      SAMPLE_CUDA(cudaFree(work));
    } else {
      kept.push_back(work);  // the leak: never freed inside the loop
    }
  }
  SAMPLE_CUDA(cudaDeviceSynchronize());
  SAMPLE_CUDA(cudaMemGetInfo(&free_after, &total));
  const size_t leaked = kept.size() * kN * sizeof(float);
  for (float* p : kept) SAMPLE_CUDA(cudaFree(p));
  const bool ok = kept.size() == 48 && free_before - free_after >= leaked;
  return sampleResult("memory_leak", ok, "48 of 64 buffers of 8 MiB stayed allocated until the end");
}
