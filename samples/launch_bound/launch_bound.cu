// 20,000 launches of a kernel that does almost nothing: the GPU finishes each in a few microseconds and
// then waits for the next launch, so the program is bound by launch overhead, not by the GPU.
#include "../common/sample_check.h"

__global__ void tiny(float* x) { x[threadIdx.x] += 1.f; }

int main() {
  constexpr int kLaunches = 20000;
  float* x = nullptr;
  SAMPLE_CUDA(cudaMalloc(&x, 32 * sizeof(float)));
  SAMPLE_CUDA(cudaMemset(x, 0, 32 * sizeof(float)));
  for (int i = 0; i < kLaunches; ++i) tiny<<<1, 32>>>(x);
  float out[32];
  SAMPLE_CUDA(cudaMemcpy(out, x, sizeof out, cudaMemcpyDeviceToHost));
  SAMPLE_CUDA(cudaFree(x));
  bool ok = true;
  for (float v : out) ok = ok && v == static_cast<float>(kLaunches);
  return sampleResult("launch_bound", ok, "20000 launches of a 32-thread kernel each added 1");
}
