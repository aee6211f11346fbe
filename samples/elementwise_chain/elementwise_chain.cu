// A chain of four elementwise kernels over the same tensor: y = relu(x * a + b) * c, one kernel per step.
// Each kernel reads and writes the whole array, so the chain moves 8 arrays' worth of bytes where one fused
// kernel would move 2: the case gpuscope's fusion finder and runtime are for.
#include <vector>

#include "../common/sample_check.h"

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void add_bias(float* x, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += b;
}
__global__ void relu(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] > 0.f ? x[i] : 0.f;
}
__global__ void multiply(float* x, float c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= c;
}

int main() {
  constexpr int kN = 1 << 24;  // 16 Mi floats = 64 MiB
  constexpr int kIterations = 50;
  std::vector<float> host(kN);
  for (int i = 0; i < kN; ++i) host[i] = static_cast<float>(i % 1000) / 500.f - 1.f;  // in [-1, 1)
  float* x = nullptr;
  SAMPLE_CUDA(cudaMalloc(&x, kN * sizeof(float)));
  const dim3 block(256), grid((kN + 255) / 256);
  for (int it = 0; it < kIterations; ++it) {
    SAMPLE_CUDA(cudaMemcpy(x, host.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
    scale<<<grid, block>>>(x, 2.f, kN);
    add_bias<<<grid, block>>>(x, 0.5f, kN);
    relu<<<grid, block>>>(x, kN);
    multiply<<<grid, block>>>(x, 3.f, kN);
  }
  std::vector<float> out(kN);
  SAMPLE_CUDA(cudaMemcpy(out.data(), x, kN * sizeof(float), cudaMemcpyDeviceToHost));
  SAMPLE_CUDA(cudaFree(x));
  bool ok = true;
  for (int i = 0; i < kN && ok; i += 9973) {
    const float expect = (host[i] * 2.f + 0.5f > 0.f ? host[i] * 2.f + 0.5f : 0.f) * 3.f;
    ok = out[i] == expect;
  }
  return sampleResult("elementwise_chain", ok, "50 iterations of 4 kernels over 16 Mi floats match the CPU");
}
