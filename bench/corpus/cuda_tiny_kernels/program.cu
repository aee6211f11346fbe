// Jacobi iterations for a 256x256 Poisson problem: each sweep launches the update, the residual, a reduction
// of the residual and the swap of the grids, one small kernel after another.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

constexpr int N = 256;

__global__ void jacobi(const float* u, const float* f, float* next) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= N - 1 || y >= N - 1) return;
  next[y * N + x] =
      0.25f * (u[y * N + x - 1] + u[y * N + x + 1] + u[(y - 1) * N + x] + u[(y + 1) * N + x] - f[y * N + x]);
}

__global__ void residual(const float* u, const float* f, float* r) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= N - 1 || y >= N - 1) return;
  float lap = u[y * N + x - 1] + u[y * N + x + 1] + u[(y - 1) * N + x] + u[(y + 1) * N + x] - 4 * u[y * N + x];
  r[y * N + x] = (lap - f[y * N + x]) * (lap - f[y * N + x]);
}

__global__ void sumRows(const float* r, float* rows) {
  int y = blockIdx.x * blockDim.x + threadIdx.x;
  if (y >= N) return;
  float s = 0;
  for (int x = 0; x < N; ++x) s += r[y * N + x];
  rows[y] = s;
}

__global__ void sumAll(const float* rows, float* norm) {
  __shared__ float s[N];
  s[threadIdx.x] = rows[threadIdx.x];
  __syncthreads();
  for (int k = N / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) *norm = sqrtf(s[0]);
}

__global__ void copyGrid(const float* from, float* to) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N * N) to[i] = from[i];
}

int main() {
  float *u, *next, *f, *r, *rows, *norm;
  CHECK(cudaMalloc(&u, N * N * sizeof(float)));
  CHECK(cudaMalloc(&next, N * N * sizeof(float)));
  CHECK(cudaMalloc(&f, N * N * sizeof(float)));
  CHECK(cudaMalloc(&r, N * N * sizeof(float)));
  CHECK(cudaMalloc(&rows, N * sizeof(float)));
  CHECK(cudaMalloc(&norm, sizeof(float)));
  CHECK(cudaMemset(u, 0, N * N * sizeof(float)));
  CHECK(cudaMemset(next, 0, N * N * sizeof(float)));
  CHECK(cudaMemset(r, 0, N * N * sizeof(float)));
  float* host_f = new float[N * N];
  for (int i = 0; i < N * N; ++i) host_f[i] = (i % 97) * 1e-4f;
  CHECK(cudaMemcpy(f, host_f, N * N * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(16, 16), grid(N / 16, N / 16);
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  auto sweep = [&] {
    jacobi<<<grid, block, 0, stream>>>(u, f, next);
    copyGrid<<<N * N / 256, 256, 0, stream>>>(next, u);
    residual<<<grid, block, 0, stream>>>(u, f, r);
    sumRows<<<1, N, 0, stream>>>(r, rows);
    sumAll<<<1, N, 0, stream>>>(rows, norm);
  };
  for (int i = 0; i < 50; ++i) sweep();
  CHECK(cudaStreamSynchronize(stream));
  const int timed = 2000;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < timed; ++i) sweep();
  CHECK(cudaStreamSynchronize(stream));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  float host_norm;
  CHECK(cudaMemcpy(&host_norm, norm, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("residual %.6e\n", host_norm);
  std::printf("%.3f ms/step\n", ms / timed);
  delete[] host_f;
  return 0;
}
