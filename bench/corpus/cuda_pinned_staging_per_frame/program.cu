// A camera pipeline's GPU stage: each 4K 12-bit Bayer frame (stored in 16 bits) is demosaiced to 8-bit RGB with a
// gamma curve, and the RGB frame comes back to the host for the encoder. upload_and_process() stages the raw frame
// in page-locked memory ("pinned copies are faster") and reads the result back into another pinned buffer; both
// are allocated when a frame arrives and freed when it is done.
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

constexpr int kWidth = 3840, kHeight = 2160;
constexpr size_t kRawBytes = size_t(kWidth) * kHeight * sizeof(uint16_t);
constexpr size_t kRgbBytes = size_t(kWidth) * kHeight * 3;

__device__ float raw(const uint16_t* bayer, int x, int y) {
  x = min(max(x, 0), kWidth - 1), y = min(max(y, 0), kHeight - 1);
  return bayer[y * kWidth + x] * (1.0f / 4095.0f);
}

// Bilinear demosaic of an RGGB mosaic, then a 2.2 gamma.
__global__ void demosaic(const uint16_t* bayer, uint8_t* rgb) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= kWidth || y >= kHeight) return;
  float c = raw(bayer, x, y);
  float cross = 0.25f * (raw(bayer, x - 1, y) + raw(bayer, x + 1, y) + raw(bayer, x, y - 1) + raw(bayer, x, y + 1));
  float diag = 0.25f * (raw(bayer, x - 1, y - 1) + raw(bayer, x + 1, y - 1) + raw(bayer, x - 1, y + 1) +
                        raw(bayer, x + 1, y + 1));
  float horiz = 0.5f * (raw(bayer, x - 1, y) + raw(bayer, x + 1, y));
  float vert = 0.5f * (raw(bayer, x, y - 1) + raw(bayer, x, y + 1));
  float r, g, b;
  bool even_row = (y & 1) == 0, even_col = (x & 1) == 0;
  if (even_row && even_col)
    r = c, g = cross, b = diag;
  else if (!even_row && !even_col)
    r = diag, g = cross, b = c;
  else if (even_row)
    r = horiz, g = c, b = vert;
  else
    r = vert, g = c, b = horiz;
  uint8_t* out = rgb + 3 * (size_t(y) * kWidth + x);
  out[0] = uint8_t(255.0f * __powf(r, 1.0f / 2.2f));
  out[1] = uint8_t(255.0f * __powf(g, 1.0f / 2.2f));
  out[2] = uint8_t(255.0f * __powf(b, 1.0f / 2.2f));
}

// Uploads one raw frame, demosaics it and copies the RGB frame into `rgb_out`.
void upload_and_process(const std::vector<uint16_t>& frame, uint16_t* d_bayer, uint8_t* d_rgb,
                        std::vector<uint8_t>& rgb_out, cudaStream_t stream) {
  uint16_t* staging;
  uint8_t* result;
  CHECK(cudaMallocHost(&staging, kRawBytes));
  CHECK(cudaMallocHost(&result, kRgbBytes));
  std::memcpy(staging, frame.data(), kRawBytes);
  CHECK(cudaMemcpyAsync(d_bayer, staging, kRawBytes, cudaMemcpyHostToDevice, stream));
  dim3 threads(32, 8), blocks((kWidth + 31) / 32, (kHeight + 7) / 8);
  demosaic<<<blocks, threads, 0, stream>>>(d_bayer, d_rgb);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpyAsync(result, d_rgb, kRgbBytes, cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  std::memcpy(rgb_out.data(), result, kRgbBytes);
  CHECK(cudaFreeHost(staging));
  CHECK(cudaFreeHost(result));
}

int main() {
  // Four captured frames, replayed in turn.
  std::vector<std::vector<uint16_t>> frames(4, std::vector<uint16_t>(size_t(kWidth) * kHeight));
  for (size_t f = 0; f < frames.size(); ++f) {
    for (size_t i = 0; i < frames[f].size(); ++i) frames[f][i] = uint16_t((i * 2654435761u + f * 977) % 4096);
  }
  uint16_t* d_bayer;
  uint8_t* d_rgb;
  CHECK(cudaMalloc(&d_bayer, kRawBytes));
  CHECK(cudaMalloc(&d_rgb, kRgbBytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  std::vector<uint8_t> rgb(kRgbBytes);
  uint64_t checksum = 0;
  for (int i = 0; i < 5; ++i) upload_and_process(frames[i % 4], d_bayer, d_rgb, rgb, stream);
  const int count = 120;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    upload_and_process(frames[i % 4], d_bayer, d_rgb, rgb, stream);
    checksum += rgb[(size_t(i) * 7919) % kRgbBytes];
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d frames, checksum %llu\n", count, (unsigned long long)checksum);
  std::printf("%.3f ms/step\n", ms / count);
  CHECK(cudaFree(d_bayer));
  CHECK(cudaFree(d_rgb));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
