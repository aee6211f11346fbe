// Explicit heat diffusion on a 1024x1024 grid (the top edge held at 1, the other edges at 0). One time step is four
// kernels: the 5-point stencil update (which also sums each block's squared change), the boundary fix, the copy of
// the new grid back, and a one-block kernel that adds up the change. Ten time steps are captured once into a CUDA
// graph, and the graph is replayed: the clock's step is one replay, that is ten time steps.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

constexpr int N = 1024;
constexpr float KAPPA = 0.2f;  // diffusivity * dt / dx^2, stable below 0.25
constexpr int BX = 32, BY = 8;
constexpr int BLOCKS = (N / BX) * (N / BY);
constexpr int STEPS_PER_GRAPH = 10;

__global__ void diffuse(const float* u, float* next, float* block_change) {
  __shared__ float change[BX * BY];
  int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
  int t = threadIdx.y * BX + threadIdx.x;
  float d = 0.f;
  if (x > 0 && y > 0 && x < N - 1 && y < N - 1) {
    int i = y * N + x;
    float v = u[i] + KAPPA * (u[i - 1] + u[i + 1] + u[i - N] + u[i + N] - 4.f * u[i]);
    next[i] = v;
    d = v - u[i];
  }
  change[t] = d * d;
  __syncthreads();
  for (int k = BX * BY / 2; k > 0; k >>= 1) {
    if (t < k) change[t] += change[t + k];
    __syncthreads();
  }
  if (t == 0) block_change[blockIdx.y * gridDim.x + blockIdx.x] = change[0];
}

__global__ void fix_boundary(float* next) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  next[i] = 1.f;                         // top edge: hot
  next[(N - 1) * N + i] = 0.f;           // bottom
  if (i > 0) next[i * N] = 0.f;          // left
  if (i > 0) next[i * N + N - 1] = 0.f;  // right
}

__global__ void copy_grid(const float* from, float* to) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N * N) to[i] = from[i];
}

// One block adds up the blocks' squared changes: the change of this time step, and the running total.
__global__ void accumulate_change(const float* block_change, float* last, float* total) {
  __shared__ float s[1024];
  float sum = 0.f;
  for (int b = threadIdx.x; b < BLOCKS; b += blockDim.x) sum += block_change[b];
  s[threadIdx.x] = sum;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    *last = sqrtf(s[0]);
    *total += *last;
  }
}

int main() {
  const size_t bytes = size_t(N) * N * sizeof(float);
  float *u, *next, *block_change, *change;
  CHECK(cudaMalloc(&u, bytes));
  CHECK(cudaMalloc(&next, bytes));
  CHECK(cudaMalloc(&block_change, BLOCKS * sizeof(float)));
  CHECK(cudaMalloc(&change, 2 * sizeof(float)));  // the last time step's change, the running total
  CHECK(cudaMemset(change, 0, 2 * sizeof(float)));
  // A synthetic start: a noisy warm patch in the middle of a cold plate.
  std::vector<float> host(size_t(N) * N, 0.f);
  for (int y = N / 4; y < 3 * N / 4; ++y)
    for (int x = N / 4; x < 3 * N / 4; ++x)
      host[size_t(y) * N + x] = 0.5f + 0.5f * (((y * N + x) * 2654435761u) % 1000) / 1000.0f;
  for (int x = 0; x < N; ++x) host[x] = 1.f;
  CHECK(cudaMemcpy(u, host.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(next, host.data(), bytes, cudaMemcpyHostToDevice));

  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  dim3 block(BX, BY), grid(N / BX, N / BY);
  auto time_step = [&] {
    diffuse<<<grid, block, 0, stream>>>(u, next, block_change);
    fix_boundary<<<N / 256, 256, 0, stream>>>(next);
    copy_grid<<<N * N / 256, 256, 0, stream>>>(next, u);
    accumulate_change<<<1, 1024, 0, stream>>>(block_change, change, change + 1);
  };

  // Capture ten time steps once; every replay advances the simulation by ten steps.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int s = 0; s < STEPS_PER_GRAPH; ++s) time_step();
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGetLastError());
  CHECK(cudaGraphInstantiate(&exec, graph, 0));

  for (int i = 0; i < 5; ++i) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaDeviceSynchronize());
  const int timed = 300;  // replays: 3000 time steps
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < timed; ++i) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  float host_change[2];
  CHECK(cudaMemcpy(host_change, change, sizeof(host_change), cudaMemcpyDeviceToHost));
  std::printf("change in the last of %d time steps: %.6e (total %.6e)\n", (5 + timed) * STEPS_PER_GRAPH, host_change[0],
              host_change[1]);
  std::printf("%.3f ms/step\n", ms / timed);  // per replay: ten time steps

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(u));
  CHECK(cudaFree(next));
  CHECK(cudaFree(block_change));
  CHECK(cudaFree(change));
  return 0;
}
