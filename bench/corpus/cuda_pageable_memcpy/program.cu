// Image batches through a filter kernel: each iteration copies a 32 MiB batch from a std::vector to the GPU,
// filters it, and copies the result back into another std::vector.
#include <chrono>
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

__global__ void sharpen(const float* in, float* out, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  int z = blockIdx.z;
  const float* img = in + static_cast<size_t>(z) * width * height;
  auto at = [&](int xx, int yy) {
    xx = min(max(xx, 0), width - 1), yy = min(max(yy, 0), height - 1);
    return img[yy * width + xx];
  };
  float v = 5 * at(x, y) - at(x - 1, y) - at(x + 1, y) - at(x, y - 1) - at(x, y + 1);
  out[static_cast<size_t>(z) * width * height + y * width + x] = fminf(fmaxf(v, 0.f), 1.f);
}

int main() {
  const int width = 1024, height = 1024, images = 8;  // 8 x 4 MiB = 32 MiB a batch
  const size_t count = static_cast<size_t>(width) * height * images, bytes = count * sizeof(float);
  std::vector<float> input(count), output(count);
  for (size_t i = 0; i < count; ++i) input[i] = static_cast<float>(i % 251) / 251.f;
  float *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, bytes));
  CHECK(cudaMalloc(&d_out, bytes));
  dim3 block(32, 8), grid(width / 32, height / 8, images);
  double checksum = 0;
  auto step = [&] {
    CHECK(cudaMemcpy(d_in, input.data(), bytes, cudaMemcpyHostToDevice));
    sharpen<<<grid, block>>>(d_in, d_out, width, height);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(output.data(), d_out, bytes, cudaMemcpyDeviceToHost));
    checksum += output[count / 2];
  };
  for (int i = 0; i < 3; ++i) step();
  CHECK(cudaDeviceSynchronize());
  const int timed = 30;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < timed; ++i) step();
  CHECK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("checksum %.4f\n", checksum);
  std::printf("%.3f ms/step\n", ms / timed);
  return 0;
}
