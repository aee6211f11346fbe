// A loop that copies from pageable host memory and synchronises the whole device after every step: each
// copy is staged through a driver buffer and blocks the host, and each sync drains the GPU, so the host
// and the GPU take turns instead of overlapping. Pinned memory and one sync at the end would fix both.
#include <vector>

#include "../common/sample_check.h"

__global__ void accumulate(const float* in, float* sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) sum[i] += in[i];
}

int main() {
  constexpr int kN = 1 << 22;  // 16 MiB per copy
  constexpr int kSteps = 40;
  std::vector<float> host(kN, 1.f);  // pageable: plain heap memory
  float *in = nullptr, *sum = nullptr;
  SAMPLE_CUDA(cudaMalloc(&in, kN * sizeof(float)));
  SAMPLE_CUDA(cudaMalloc(&sum, kN * sizeof(float)));
  SAMPLE_CUDA(cudaMemset(sum, 0, kN * sizeof(float)));
  for (int step = 0; step < kSteps; ++step) {
    SAMPLE_CUDA(cudaMemcpy(in, host.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
    accumulate<<<(kN + 255) / 256, 256>>>(in, sum, kN);
    SAMPLE_CUDA(cudaDeviceSynchronize());
  }
  std::vector<float> out(kN);
  SAMPLE_CUDA(cudaMemcpy(out.data(), sum, kN * sizeof(float), cudaMemcpyDeviceToHost));
  SAMPLE_CUDA(cudaFree(in));
  SAMPLE_CUDA(cudaFree(sum));
  bool ok = out[0] == kSteps && out[kN - 1] == kSteps;
  return sampleResult("pageable_sync", ok, "40 pageable copies and device syncs summed to 40");
}
