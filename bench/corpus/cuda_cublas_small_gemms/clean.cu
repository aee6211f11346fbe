// The same 512 small systems, their products in one cublasSgemmStridedBatched call a step.
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

__global__ void squash(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = tanhf(x[i]);
}

int main() {
  const int systems = 512, dim = 64, cols = 32;
  const size_t mat = size_t(dim) * dim, vec = size_t(dim) * cols;
  std::vector<float> host(systems * mat);
  for (size_t i = 0; i < host.size(); ++i) host[i] = ((i * 2654435761u) % 1000) / 1000.0f / dim - 0.5f / dim;
  float *a, *x, *y;
  CHECK(cudaMalloc(&a, systems * mat * sizeof(float)));
  CHECK(cudaMalloc(&x, systems * vec * sizeof(float)));
  CHECK(cudaMalloc(&y, systems * vec * sizeof(float)));
  CHECK(cudaMemcpy(a, host.data(), systems * mat * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(x, 0, systems * vec * sizeof(float)));
  cublasHandle_t handle;
  cublasCreate(&handle);
  const float one = 1.0f, bias = 0.0f;
  auto step = [&] {
    cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, dim, cols, dim, &one, a, dim, mat, x, dim, vec, &bias,
                              y, dim, vec, systems);
    squash<<<(systems * vec + 255) / 256, 256>>>(y, systems * vec);
    std::swap(x, y);
  };
  for (int i = 0; i < 5; ++i) step();
  CHECK(cudaDeviceSynchronize());
  const int steps = 100;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  CHECK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  float probe;
  CHECK(cudaMemcpy(&probe, x, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("probe %.6f\n", probe);
  std::printf("%.3f ms/step\n", ms / steps);
  cublasDestroy(handle);
  return 0;
}
