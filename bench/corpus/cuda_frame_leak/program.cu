// A video denoiser: each 1920x1080 frame is uploaded, filtered by a 5x5 bilateral kernel into a buffer that the
// filter function allocates and returns, and its mean brightness summed on the device; the filtered frame's
// buffer is never freed.
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

constexpr int kWidth = 1920, kHeight = 1080;

__global__ void bilateral(const float* in, float* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float c = in[y * w + x], sum = 0, norm = 0;
  for (int dy = -2; dy <= 2; ++dy) {
    for (int dx = -2; dx <= 2; ++dx) {
      int xx = min(max(x + dx, 0), w - 1), yy = min(max(y + dy, 0), h - 1);
      float v = in[yy * w + xx], d = v - c;
      float wgt = __expf(-(dx * dx + dy * dy) / 8.0f - d * d * 50.0f);
      sum += wgt * v, norm += wgt;
    }
  }
  out[y * w + x] = sum / norm;
}

__global__ void brightness(const float* img, int n, float* total) {
  __shared__ float part[256];
  float s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += img[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, part[0] / n);
}

float* denoise(const float* frame, cudaStream_t stream) {
  float* out;
  CHECK(cudaMalloc(&out, kWidth * kHeight * sizeof(float)));
  dim3 threads(32, 8), blocks((kWidth + 31) / 32, (kHeight + 7) / 8);
  bilateral<<<blocks, threads, 0, stream>>>(frame, out, kWidth, kHeight);
  return out;
}

int main() {
  const int n = kWidth * kHeight;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = 0.5f + 0.4f * ((i * 7919LL) % 1000) / 1000.0f;
  float *pinned, *frame, *total;
  CHECK(cudaMallocHost(&pinned, n * sizeof(float)));
  std::copy(host.begin(), host.end(), pinned);
  CHECK(cudaMalloc(&frame, n * sizeof(float)));
  CHECK(cudaMalloc(&total, sizeof(float)));
  CHECK(cudaMemset(total, 0, sizeof(float)));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  auto process = [&] {
    CHECK(cudaMemcpyAsync(frame, pinned, n * sizeof(float), cudaMemcpyHostToDevice, stream));
    float* clean = denoise(frame, stream);
    brightness<<<264, 256, 0, stream>>>(clean, n, total);
    CHECK(cudaGetLastError());
  };
  for (int i = 0; i < 10; ++i) process();
  CHECK(cudaStreamSynchronize(stream));
  const int frames = 600;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < frames; ++i) process();
  CHECK(cudaStreamSynchronize(stream));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  float sum = 0;
  CHECK(cudaMemcpy(&sum, total, sizeof(float), cudaMemcpyDeviceToHost));
  size_t free_bytes = 0, total_bytes = 0;
  CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::printf("mean brightness %.4f, device memory in use %.0f MiB\n", sum / (frames + 10),
              (total_bytes - free_bytes) / 1048576.0);
  std::printf("%.3f ms/step\n", ms / frames);
  CHECK(cudaFree(frame));
  CHECK(cudaFree(total));
  CHECK(cudaFreeHost(pinned));
  return 0;
}
