// A 2D heat-diffusion solver whose every step takes its scratch (the next field and a block-sum buffer) from the
// device's stream-ordered memory pool with cudaMallocAsync and gives it back with cudaFreeAsync, the pool told to
// keep what it frees (release threshold: no limit). The total heat is copied back to pinned memory every 50 steps.
#include <chrono>
#include <cstdint>
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

constexpr int kN = 4096;  // the field is kN x kN
constexpr int kThreads = 256;

__global__ void diffuse(const float* in, float* out, int n, float alpha) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= n) return;
  int i = y * n + x;
  float c = in[i];
  float l = x > 0 ? in[i - 1] : c, r = x < n - 1 ? in[i + 1] : c;
  float u = y > 0 ? in[i - n] : c, d = y < n - 1 ? in[i + n] : c;
  out[i] = c + alpha * (l + r + u + d - 4.f * c);
}

__global__ void block_sums(const float* field, float* sums, size_t count) {
  __shared__ float s[kThreads];
  float v = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += static_cast<size_t>(gridDim.x) * blockDim.x)
    v += field[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = s[0];
}

__global__ void total(const float* sums, int count, float* out) {
  float v = 0;
  for (int i = 0; i < count; ++i) v += sums[i];
  *out = v;
}

__global__ void hot_spot(float* field, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < n) field[y * n + x] = (abs(x - n / 2) < n / 8 && abs(y - n / 2) < n / 8) ? 100.f : 0.f;
}

int main() {
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int device = 0;
  CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t keep = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));

  const size_t cells = static_cast<size_t>(kN) * kN;
  const int blocks = 1024;
  const dim3 grid((kN + kThreads - 1) / kThreads, kN);
  float* field;
  CHECK(cudaMallocAsync(&field, cells * sizeof(float), stream));
  hot_spot<<<grid, kThreads, 0, stream>>>(field, kN);
  float* heat_host;
  CHECK(cudaMallocHost(&heat_host, sizeof(float)));
  float* heat;
  CHECK(cudaMallocAsync(&heat, sizeof(float), stream));

  auto step = [&](int i) {
    float *next, *sums;
    CHECK(cudaMallocAsync(&next, cells * sizeof(float), stream));
    CHECK(cudaMallocAsync(&sums, blocks * sizeof(float), stream));
    diffuse<<<grid, kThreads, 0, stream>>>(field, next, kN, 0.2f);
    block_sums<<<blocks, kThreads, 0, stream>>>(next, sums, cells);
    total<<<1, 1, 0, stream>>>(sums, blocks, heat);
    CHECK(cudaGetLastError());
    CHECK(cudaFreeAsync(field, stream));
    CHECK(cudaFreeAsync(sums, stream));
    field = next;
    if (i % 50 == 49) {
      CHECK(cudaMemcpyAsync(heat_host, heat, sizeof(float), cudaMemcpyDeviceToHost, stream));
      CHECK(cudaStreamSynchronize(stream));
    }
  };
  for (int i = 0; i < 20; ++i) step(i);
  CHECK(cudaStreamSynchronize(stream));
  const int timed = 400;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < timed; ++i) step(i);
  CHECK(cudaStreamSynchronize(stream));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("total heat %.3f\n", *heat_host);
  std::printf("%.3f ms/step\n", ms / timed);
  CHECK(cudaFreeAsync(field, stream));
  CHECK(cudaFreeAsync(heat, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaFreeHost(heat_host));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
