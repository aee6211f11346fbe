// Scores batches of 256 feature vectors with a 3-layer MLP (1024 -> 1024 -> 1024 -> 16, ReLU between), as a
// request handler would: score_batch() is self-contained, so it makes its cuBLAS handle on entry, binds it to the
// caller's stream and destroys it before returning. The loop serves 200 batches and keeps the best score of each.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)
#define CHECK_BLAS(call)                                                        \
  do {                                                                          \
    cublasStatus_t s_ = (call);                                                 \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                          \
      std::fprintf(stderr, "%s:%d: cuBLAS error %d\n", __FILE__, __LINE__, s_); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

constexpr int kBatch = 256, kIn = 1024, kHidden = 1024, kOut = 16;

struct Model {
  float *w1, *b1, *w2, *b2, *w3, *b3;
};

__global__ void fill(float* p, size_t n, unsigned seed, float scale) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = (((i * 2654435761u + seed) >> 8) % 2048 / 1024.0f - 1.0f) * scale;
}

// y[col-major rows x batch] += bias per row, then ReLU where asked.
__global__ void bias_act(float* y, const float* bias, int rows, int batch, bool relu) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * batch) return;
  float v = y[i] + bias[i % rows];
  y[i] = relu && v < 0.0f ? 0.0f : v;
}

// The best of the kOut scores of each batch row.
__global__ void best_score(const float* scores, float* best, int batch) {
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  float m = scores[b * kOut];
  for (int k = 1; k < kOut; ++k) m = fmaxf(m, scores[b * kOut + k]);
  best[b] = m;
}

float* device_array(size_t n, unsigned seed, float scale) {
  float* p;
  CHECK(cudaMalloc(&p, n * sizeof(float)));
  fill<<<(n + 255) / 256, 256>>>(p, n, seed, scale);
  return p;
}

void dense(cublasHandle_t h, const float* w, const float* b, const float* x, float* y, int in, int out, bool relu) {
  const float one = 1.0f, zero = 0.0f;
  CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, out, kBatch, in, &one, w, out, x, in, &zero, y, out));
  bias_act<<<(out * kBatch + 255) / 256, 256, 0, 0>>>(y, b, out, kBatch, relu);
}

// Scores one batch on the default stream.
void score_batch(const Model& m, const float* x, float* h1, float* h2, float* scores, float* best) {
  cublasHandle_t handle;
  CHECK_BLAS(cublasCreate(&handle));
  CHECK_BLAS(cublasSetStream(handle, 0));
  dense(handle, m.w1, m.b1, x, h1, kIn, kHidden, true);
  dense(handle, m.w2, m.b2, h1, h2, kHidden, kHidden, true);
  dense(handle, m.w3, m.b3, h2, scores, kHidden, kOut, false);
  best_score<<<(kBatch + 127) / 128, 128>>>(scores, best, kBatch);
  CHECK_BLAS(cublasDestroy(handle));
}

int main() {
  Model m{device_array(size_t(kHidden) * kIn, 1, 0.03f),     device_array(kHidden, 2, 0.1f),
          device_array(size_t(kHidden) * kHidden, 3, 0.03f), device_array(kHidden, 4, 0.1f),
          device_array(size_t(kOut) * kHidden, 5, 0.03f),    device_array(kOut, 6, 0.1f)};
  const int batches = 200;
  float* inputs = device_array(size_t(kIn) * kBatch * 8, 7, 1.0f);  // eight batches of requests, served in turn
  float *h1, *h2, *scores, *best;
  CHECK(cudaMalloc(&h1, size_t(kHidden) * kBatch * sizeof(float)));
  CHECK(cudaMalloc(&h2, size_t(kHidden) * kBatch * sizeof(float)));
  CHECK(cudaMalloc(&scores, size_t(kOut) * kBatch * sizeof(float)));
  CHECK(cudaMalloc(&best, size_t(kBatch) * batches * sizeof(float)));
  auto serve = [&](int i) {
    score_batch(m, inputs + size_t(i % 8) * kIn * kBatch, h1, h2, scores, best + size_t(i) * kBatch);
  };
  for (int i = 0; i < 10; ++i) serve(i);
  CHECK(cudaDeviceSynchronize());
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < batches; ++i) serve(i);
  CHECK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::vector<float> host(size_t(kBatch) * batches);
  CHECK(cudaMemcpy(host.data(), best, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : host) sum += v;
  std::printf("mean best score %.5f\n", sum / host.size());
  std::printf("%.3f ms/step\n", ms / batches);
  return 0;
}
