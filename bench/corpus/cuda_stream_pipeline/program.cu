// An image-processing pipeline that streams frames through the GPU: each 8192x4096 RGBA8 frame (128 MiB) is cut
// into 16 strips, and each strip is copied in from pinned memory, colour-corrected and blurred, and copied back,
// on four streams in turn so that the copies of one strip overlap the kernels of another. The host waits for the
// whole frame before it hands the next one over.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

constexpr int kWidth = 8192, kHeight = 4096, kStrips = 16, kStreams = 4;
constexpr int kStripRows = kHeight / kStrips;

__device__ float gammaCorrect(float v) { return powf(v / 255.f, 1.f / 2.2f) * 255.f; }

// Gamma and a 3x3 colour matrix, per pixel.
__global__ void colourCorrect(const uchar4* in, float4* out, int pixels) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= pixels) return;
  uchar4 p = in[i];
  float r = gammaCorrect(p.x), g = gammaCorrect(p.y), b = gammaCorrect(p.z);
  out[i] = make_float4(0.90f * r + 0.08f * g + 0.02f * b, 0.05f * r + 0.90f * g + 0.05f * b,
                       0.02f * r + 0.08f * g + 0.90f * b, p.w);
}

// A 5-tap horizontal blur within each row of the strip, back to 8 bits.
__global__ void blurRows(const float4* in, uchar4* out, int width, int rows) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= width || y >= rows) return;
  const float w[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};
  float4 acc = make_float4(0, 0, 0, 0);
  for (int k = -2; k <= 2; ++k) {
    int xx = min(max(x + k, 0), width - 1);
    float4 v = in[y * width + xx];
    acc.x += w[k + 2] * v.x, acc.y += w[k + 2] * v.y, acc.z += w[k + 2] * v.z;
  }
  auto clamp8 = [](float v) { return static_cast<unsigned char>(fminf(fmaxf(v, 0.f), 255.f)); };
  out[y * width + x] = make_uchar4(clamp8(acc.x), clamp8(acc.y), clamp8(acc.z), 255);
}

int main() {
  const size_t strip_pixels = static_cast<size_t>(kWidth) * kStripRows;
  const size_t frame_bytes = static_cast<size_t>(kWidth) * kHeight * sizeof(uchar4);
  const size_t strip_bytes = strip_pixels * sizeof(uchar4);
  const int frames_in_flight = 2;
  std::vector<uchar4*> host_in(frames_in_flight), host_out(frames_in_flight);
  for (int f = 0; f < frames_in_flight; ++f) {
    CHECK(cudaMallocHost(&host_in[f], frame_bytes));
    CHECK(cudaMallocHost(&host_out[f], frame_bytes));
    for (size_t i = 0; i < static_cast<size_t>(kWidth) * kHeight; ++i)
      host_in[f][i] = make_uchar4(i * 7 % 251, i * 13 % 241, (i + f) % 239, 255);
  }
  cudaStream_t streams[kStreams];
  uchar4 *d_in[kStreams], *d_out[kStreams];
  float4* d_tmp[kStreams];
  for (int s = 0; s < kStreams; ++s) {
    CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
    CHECK(cudaMalloc(&d_in[s], strip_bytes));
    CHECK(cudaMalloc(&d_out[s], strip_bytes));
    CHECK(cudaMalloc(&d_tmp[s], strip_pixels * sizeof(float4)));
  }

  auto process = [&](int f) {
    for (int strip = 0; strip < kStrips; ++strip) {
      const int s = strip % kStreams;
      const size_t offset = static_cast<size_t>(strip) * strip_pixels;
      CHECK(cudaMemcpyAsync(d_in[s], host_in[f] + offset, strip_bytes, cudaMemcpyHostToDevice, streams[s]));
      colourCorrect<<<(strip_pixels + 255) / 256, 256, 0, streams[s]>>>(d_in[s], d_tmp[s], strip_pixels);
      blurRows<<<dim3((kWidth + 255) / 256, kStripRows), 256, 0, streams[s]>>>(d_tmp[s], d_out[s], kWidth,
                                                                             kStripRows);
      CHECK(cudaMemcpyAsync(host_out[f] + offset, d_out[s], strip_bytes, cudaMemcpyDeviceToHost, streams[s]));
    }
    CHECK(cudaDeviceSynchronize());
  };

  for (int f = 0; f < 3; ++f) process(f % frames_in_flight);
  const int timed = 60;
  uint64_t checksum = 0;
  auto start = std::chrono::steady_clock::now();
  for (int f = 0; f < timed; ++f) {
    process(f % frames_in_flight);
    checksum += host_out[f % frames_in_flight][(f * 7919) % (kWidth * kHeight)].x;
  }
  auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("checksum %llu\n", static_cast<unsigned long long>(checksum));
  std::printf("%.3f ms/step\n", elapsed / timed);
  for (int s = 0; s < kStreams; ++s) {
    cudaFree(d_in[s]), cudaFree(d_out[s]), cudaFree(d_tmp[s]);
    cudaStreamDestroy(streams[s]);
  }
  for (int f = 0; f < frames_in_flight; ++f) cudaFreeHost(host_in[f]), cudaFreeHost(host_out[f]);
  return 0;
}
