// A loop as XLA's command buffers run one: each iteration replays a CUDA graph (a kernel, a device-to-device copy
// node, a kernel that computes a flag), copies the flag to pinned host memory, waits for it, and launches one of
// two kernels by its value, as XLA's conditional thunk reads a branch index. 40,000 iterations, a few seconds.
#include <vector>

#include "../common/sample_check.h"

constexpr int kN = 1 << 18;
constexpr int kIterations = 40000;

__global__ void advance(float* x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] += 1.0f;
}

// The flag is the iteration's parity, read from the copy: x[0] counts the iterations.
__global__ void parity(const float* y, int* flag) { *flag = static_cast<int>(y[0]) & 1; }

__global__ void branch(float* z, int n, float add) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) z[i] += add;
}

int main() {
  float *x, *y, *z;
  int* flag;
  int* host_flag;
  SAMPLE_CUDA(cudaMalloc(&x, kN * sizeof(float)));
  SAMPLE_CUDA(cudaMalloc(&y, kN * sizeof(float)));
  SAMPLE_CUDA(cudaMalloc(&z, kN * sizeof(float)));
  SAMPLE_CUDA(cudaMalloc(&flag, sizeof(int)));
  SAMPLE_CUDA(cudaMallocHost(&host_flag, sizeof(int)));
  SAMPLE_CUDA(cudaMemset(x, 0, kN * sizeof(float)));
  SAMPLE_CUDA(cudaMemset(z, 0, kN * sizeof(float)));

  cudaStream_t stream;
  SAMPLE_CUDA(cudaStreamCreate(&stream));
  cudaGraph_t graph;
  SAMPLE_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  advance<<<256, 256, 0, stream>>>(x, kN);
  SAMPLE_CUDA(cudaMemcpyAsync(y, x, kN * sizeof(float), cudaMemcpyDeviceToDevice, stream));
  parity<<<1, 1, 0, stream>>>(y, flag);
  SAMPLE_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  SAMPLE_CUDA(cudaGraphInstantiate(&exec, graph, 0));

  int odd = 0;
  for (int i = 0; i < kIterations; ++i) {
    SAMPLE_CUDA(cudaGraphLaunch(exec, stream));
    SAMPLE_CUDA(cudaMemcpyAsync(host_flag, flag, sizeof(int), cudaMemcpyDeviceToHost, stream));
    SAMPLE_CUDA(cudaStreamSynchronize(stream));
    odd += *host_flag;
    branch<<<256, 256, 0, stream>>>(z, kN, *host_flag ? 1.0f : 2.0f);
  }
  SAMPLE_CUDA(cudaStreamSynchronize(stream));

  // Iteration i (from 0) sees x = i + 1: odd for even i, so half the iterations add 1 and half add 2.
  std::vector<float> host(kN);
  SAMPLE_CUDA(cudaMemcpy(host.data(), z, kN * sizeof(float), cudaMemcpyDeviceToHost));
  const float expected = 1.5f * kIterations;
  int bad = 0;
  for (float v : host) bad += v != expected;
  std::printf("%d iterations, %d odd flags, z = %.1f (expected %.1f)\n", kIterations, odd, host[0], expected);
  SAMPLE_CUDA(cudaGraphExecDestroy(exec));
  SAMPLE_CUDA(cudaGraphDestroy(graph));
  return sampleResult("graph_copies", bad == 0 && odd == kIterations / 2,
                      "every element and the host's count of odd flags match the loop's");
}
