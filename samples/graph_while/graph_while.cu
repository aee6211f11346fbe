// A CUDA graph whose loop runs on the GPU: a while node (a conditional node, CUDA 12.4+) repeats its body, one
// damping kernel over 32 M floats, until the body's counter runs out; the graph is replayed for about two
// seconds. XLA's command buffers run JAX's while loops and branches this way.
#include <cmath>
#include <vector>

#include "../common/sample_check.h"

constexpr int kN = 32 << 20;
constexpr int kIterations = 16;  // body runs per replay
constexpr int kReplays = 1500;

__global__ void reset(int* left) { *left = kIterations; }

// One loop iteration: x = x / 2 + 1; the last block to finish counts the iteration down and ends the loop at zero.
__global__ void damp(float* x, int n, int* left, unsigned int* done, cudaGraphConditionalHandle loop) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] = 0.5f * x[i] + 1.0f;
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence();
  if (atomicAdd(done, 1u) != gridDim.x - 1) return;
  *done = 0;
  if (--*left == 0) cudaGraphSetConditional(loop, 0);
}

int main() {
  float* x;
  int* left;
  unsigned int* done;
  SAMPLE_CUDA(cudaMalloc(&x, kN * sizeof(float)));
  SAMPLE_CUDA(cudaMalloc(&left, sizeof(int)));
  SAMPLE_CUDA(cudaMalloc(&done, sizeof(unsigned int)));
  SAMPLE_CUDA(cudaMemset(x, 0, kN * sizeof(float)));
  SAMPLE_CUDA(cudaMemset(done, 0, sizeof(unsigned int)));

  cudaGraph_t graph;
  SAMPLE_CUDA(cudaGraphCreate(&graph, 0));
  cudaGraphConditionalHandle loop;
  SAMPLE_CUDA(cudaGraphConditionalHandleCreate(&loop, graph, 1, cudaGraphCondAssignDefault));

  cudaGraphNode_t reset_node;
  cudaKernelNodeParams reset_params = {};
  void* reset_args[] = {&left};
  reset_params.func = reinterpret_cast<void*>(reset);
  reset_params.gridDim = dim3(1);
  reset_params.blockDim = dim3(1);
  reset_params.kernelParams = reset_args;
  SAMPLE_CUDA(cudaGraphAddKernelNode(&reset_node, graph, nullptr, 0, &reset_params));

  cudaGraphNodeParams while_params = {};
  while_params.type = cudaGraphNodeTypeConditional;
  while_params.conditional.handle = loop;
  while_params.conditional.type = cudaGraphCondTypeWhile;
  while_params.conditional.size = 1;
  cudaGraphNode_t while_node;
  SAMPLE_CUDA(cudaGraphAddNode(&while_node, graph, &reset_node, nullptr, 1, &while_params));
  cudaGraph_t body = while_params.conditional.phGraph_out[0];

  int n = kN;
  void* damp_args[] = {&x, &n, &left, &done, &loop};
  cudaKernelNodeParams damp_params = {};
  damp_params.func = reinterpret_cast<void*>(damp);
  damp_params.gridDim = dim3(1056);
  damp_params.blockDim = dim3(256);
  damp_params.kernelParams = damp_args;
  cudaGraphNode_t damp_node;
  SAMPLE_CUDA(cudaGraphAddKernelNode(&damp_node, body, nullptr, 0, &damp_params));

  cudaGraphExec_t exec;
  SAMPLE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  cudaStream_t stream;
  SAMPLE_CUDA(cudaStreamCreate(&stream));
  for (int r = 0; r < kReplays; ++r) SAMPLE_CUDA(cudaGraphLaunch(exec, stream));
  SAMPLE_CUDA(cudaStreamSynchronize(stream));

  // x after kReplays * kIterations steps of x = x / 2 + 1 from 0, as the host computes it.
  float expected = 0.0f;
  for (int k = 0; k < kReplays * kIterations; ++k) expected = std::fmaf(0.5f, expected, 1.0f);
  std::vector<float> host(kN);
  SAMPLE_CUDA(cudaMemcpy(host.data(), x, kN * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (float v : host) bad += std::fabs(v - expected) > 1e-5f;
  std::printf("%d replays of %d loop iterations, x = %.6f (expected %.6f)\n", kReplays, kIterations, host[kN - 1],
              expected);
  SAMPLE_CUDA(cudaGraphExecDestroy(exec));
  SAMPLE_CUDA(cudaGraphDestroy(graph));
  return sampleResult("graph_while", bad == 0, "every element matches the host's 24,000 steps");
}
