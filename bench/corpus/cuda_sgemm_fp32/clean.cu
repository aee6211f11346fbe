// An MLP's forward pass with cuBLAS: four 4096-wide dense layers over a batch of 4096, the weights and
// activations in bf16, each layer a cublasGemmEx with fp32 accumulation followed by a bias-and-ReLU kernel.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

#define CUBLAS_CHECK(call)                                                       \
  do {                                                                           \
    cublasStatus_t st_ = (call);                                                 \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                          \
      std::fprintf(stderr, "%s:%d: cuBLAS error %d\n", __FILE__, __LINE__, st_); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

constexpr int kBatch = 4096, kWidth = 4096, kLayers = 4;

// Uniform values in [-scale, scale) from a hash of the index: the same on every run.
__global__ void fill_uniform(float* x, size_t n, float scale, unsigned seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 16, h *= 0x7feb352du, h ^= h >> 15, h *= 0x846ca68bu, h ^= h >> 16;
    x[i] = scale * (2.f * (h >> 8) * (1.f / 16777216.f) - 1.f);
  }
}

__global__ void to_bf16(const float* x, __nv_bfloat16* y, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16(x[i]);
}

// y is column-major, kWidth features by kBatch samples.
__global__ void bias_relu(__nv_bfloat16* y, const float* bias, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16(fmaxf(__bfloat162float(y[i]) + bias[i % kWidth], 0.f));
}

int main() {
  const size_t weight_count = static_cast<size_t>(kWidth) * kWidth, act_count = static_cast<size_t>(kWidth) * kBatch;
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  float *staging, *biases[kLayers];
  __nv_bfloat16 *weights[kLayers], *input, *act[2];
  CHECK(cudaMalloc(&staging, std::max(weight_count, act_count) * sizeof(float)));  // fp32 values, made bf16 once
  for (int l = 0; l < kLayers; ++l) {
    CHECK(cudaMalloc(&weights[l], weight_count * sizeof(__nv_bfloat16)));
    CHECK(cudaMalloc(&biases[l], kWidth * sizeof(float)));
    fill_uniform<<<1024, 256>>>(staging, weight_count, std::sqrt(6.f / kWidth), 17 + l);
    to_bf16<<<1024, 256>>>(staging, weights[l], weight_count);
    fill_uniform<<<16, 256>>>(biases[l], kWidth, 0.01f, 101 + l);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaMalloc(&input, act_count * sizeof(__nv_bfloat16)));
  for (auto& a : act) CHECK(cudaMalloc(&a, act_count * sizeof(__nv_bfloat16)));
  fill_uniform<<<1024, 256>>>(staging, act_count, 1.f, 7);
  to_bf16<<<1024, 256>>>(staging, input, act_count);
  CHECK(cudaGetLastError());
  CHECK(cudaFree(staging));

  const float alpha = 1.f, beta = 0.f;
  auto forward = [&] {
    const __nv_bfloat16* x = input;
    for (int l = 0; l < kLayers; ++l) {
      __nv_bfloat16* y = act[l % 2];
      CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, kWidth, kBatch, kWidth, &alpha, weights[l],
                                CUDA_R_16BF, kWidth, x, CUDA_R_16BF, kWidth, &beta, y, CUDA_R_16BF, kWidth,
                                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      bias_relu<<<2048, 256>>>(y, biases[l], act_count);
      CHECK(cudaGetLastError());
      x = y;
    }
  };
  for (int i = 0; i < 5; ++i) forward();
  CHECK(cudaDeviceSynchronize());
  const int timed = 20;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < timed; ++i) forward();
  CHECK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  std::vector<__nv_bfloat16> out(kWidth);
  CHECK(cudaMemcpy(out.data(), act[(kLayers - 1) % 2], kWidth * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
  double checksum = 0;
  for (__nv_bfloat16 v : out) checksum += __bfloat162float(v);
  std::printf("output checksum %.4f\n", checksum);
  std::printf("%.3f ms/step\n", ms / timed);
  for (int l = 0; l < kLayers; ++l) {
    CHECK(cudaFree(weights[l]));
    CHECK(cudaFree(biases[l]));
  }
  CHECK(cudaFree(input));
  for (auto& a : act) CHECK(cudaFree(a));
  CUBLAS_CHECK(cublasDestroy(handle));
  return 0;
}
