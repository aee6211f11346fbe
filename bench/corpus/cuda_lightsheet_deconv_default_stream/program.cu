// Richardson-Lucy deconvolution of a light-sheet microscope's z-stack, plane by plane: each 2048x2048 16-bit sCMOS
// plane has the camera offset taken off and is deconvolved with the system's in-plane PSF (a 5x5 Gaussian, eight
// iterations), then goes back to the host as 16 bits for the writer. A stack is 32 planes; the planes go through
// four streams in turn, each with its own device buffers, so that one plane's copies overlap another's
// deconvolution. The host waits for the whole stack before it hands the next one over.
#include <chrono>
#include <cmath>
#include <cstdint>
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

constexpr int kWidth = 2048, kHeight = 2048, kPlanes = 32, kStreams = 4;
constexpr int kIterations = 8, kRadius = 2, kTaps = 2 * kRadius + 1;
constexpr size_t kPlanePixels = size_t(kWidth) * kHeight;
constexpr size_t kPlaneBytes = kPlanePixels * sizeof(uint16_t);
constexpr float kCameraOffset = 100.0f;  // the sCMOS dark level, in counts

__constant__ float c_psf[kTaps * kTaps];

// Raw counts to photo-electrons above the offset; the first estimate is the observed plane itself.
__global__ void toFloat(const uint16_t* raw, float* observed, float* estimate) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= kPlanePixels) return;
  float v = fmaxf(float(raw[i]) - kCameraOffset, 0.0f);
  observed[i] = v;
  estimate[i] = fmaxf(v, 1e-3f);
}

// ratio = observed / (PSF * estimate)
__global__ void blurRatio(const float* estimate, const float* observed, float* ratio) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= kWidth || y >= kHeight) return;
  float blurred = 0.0f;
  for (int dy = -kRadius; dy <= kRadius; ++dy) {
    int yy = min(max(y + dy, 0), kHeight - 1);
    for (int dx = -kRadius; dx <= kRadius; ++dx) {
      int xx = min(max(x + dx, 0), kWidth - 1);
      blurred += c_psf[(dy + kRadius) * kTaps + dx + kRadius] * estimate[size_t(yy) * kWidth + xx];
    }
  }
  size_t i = size_t(y) * kWidth + x;
  ratio[i] = observed[i] / fmaxf(blurred, 1e-6f);
}

// estimate *= PSF^T * ratio  (the PSF flipped)
__global__ void correctEstimate(const float* ratio, float* estimate) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= kWidth || y >= kHeight) return;
  float correction = 0.0f;
  for (int dy = -kRadius; dy <= kRadius; ++dy) {
    int yy = min(max(y + dy, 0), kHeight - 1);
    for (int dx = -kRadius; dx <= kRadius; ++dx) {
      int xx = min(max(x + dx, 0), kWidth - 1);
      correction += c_psf[(kRadius - dy) * kTaps + kRadius - dx] * ratio[size_t(yy) * kWidth + xx];
    }
  }
  estimate[size_t(y) * kWidth + x] *= correction;
}

__global__ void toU16(const float* estimate, uint16_t* out) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= kPlanePixels) return;
  out[i] = uint16_t(fminf(estimate[i] + 0.5f, 65535.0f));
}

struct PlaneBuffers {
  uint16_t* raw;
  float* observed;
  float* estimate;
  float* ratio;
  uint16_t* out;
};

// Deconvolves the plane in b.raw into b.out (the same routine the single-plane preview tool calls).
void deconvolvePlane(const PlaneBuffers& b) {
  const int threads = 256, blocks = int((kPlanePixels + threads - 1) / threads);
  const dim3 block(32, 8), grid((kWidth + 31) / 32, (kHeight + 7) / 8);
  toFloat<<<blocks, threads>>>(b.raw, b.observed, b.estimate);
  for (int it = 0; it < kIterations; ++it) {
    blurRatio<<<grid, block>>>(b.estimate, b.observed, b.ratio);
    correctEstimate<<<grid, block>>>(b.ratio, b.estimate);
  }
  toU16<<<blocks, threads>>>(b.estimate, b.out);
  CHECK(cudaGetLastError());
}

int main() {
  // The PSF: a normalised Gaussian, sigma 1.1 pixels.
  float psf[kTaps * kTaps], psf_sum = 0.0f;
  for (int dy = -kRadius; dy <= kRadius; ++dy)
    for (int dx = -kRadius; dx <= kRadius; ++dx)
      psf_sum += psf[(dy + kRadius) * kTaps + dx + kRadius] = std::exp(-(dx * dx + dy * dy) / (2.0f * 1.1f * 1.1f));
  for (float& w : psf) w /= psf_sum;
  CHECK(cudaMemcpyToSymbol(c_psf, psf, sizeof(psf)));

  // One acquired stack, replayed: fluorescent beads on a noisy background, in pinned memory for the copies.
  uint16_t *h_stack, *h_out;
  CHECK(cudaMallocHost(&h_stack, kPlanes * kPlaneBytes));
  CHECK(cudaMallocHost(&h_out, kPlanes * kPlaneBytes));
  for (int z = 0; z < kPlanes; ++z) {
    uint16_t* plane = h_stack + z * kPlanePixels;
    for (int y = 0; y < kHeight; ++y) {
      for (int x = 0; x < kWidth; ++x) {
        uint32_t h = uint32_t(((z * kHeight + y) * kWidth + x) * 2654435761u);
        bool bead = (x + 3 * z) % 41 < 2 && (y + 5 * z) % 37 < 2;
        plane[size_t(y) * kWidth + x] = uint16_t(kCameraOffset + (h >> 27) + (bead ? 1800 : 40));
      }
    }
  }

  cudaStream_t streams[kStreams];
  PlaneBuffers buffers[kStreams];
  for (int s = 0; s < kStreams; ++s) {
    CHECK(cudaStreamCreate(&streams[s]));
    CHECK(cudaMalloc(&buffers[s].raw, kPlaneBytes));
    CHECK(cudaMalloc(&buffers[s].observed, kPlanePixels * sizeof(float)));
    CHECK(cudaMalloc(&buffers[s].estimate, kPlanePixels * sizeof(float)));
    CHECK(cudaMalloc(&buffers[s].ratio, kPlanePixels * sizeof(float)));
    CHECK(cudaMalloc(&buffers[s].out, kPlaneBytes));
  }

  auto deconvolveStack = [&]() {
    for (int z = 0; z < kPlanes; ++z) {
      const int s = z % kStreams;
      CHECK(cudaMemcpyAsync(buffers[s].raw, h_stack + z * kPlanePixels, kPlaneBytes, cudaMemcpyHostToDevice,
                            streams[s]));
      deconvolvePlane(buffers[s]);
      CHECK(cudaMemcpyAsync(h_out + z * kPlanePixels, buffers[s].out, kPlaneBytes, cudaMemcpyDeviceToHost,
                            streams[s]));
    }
    CHECK(cudaDeviceSynchronize());
  };

  for (int i = 0; i < 2; ++i) deconvolveStack();
  const int stacks = 30;
  uint64_t checksum = 0;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < stacks; ++i) {
    deconvolveStack();
    for (int z = 0; z < kPlanes; ++z) checksum += h_out[z * kPlanePixels + (size_t(i) * 7919 + z) % kPlanePixels];
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d stacks of %d planes, checksum %llu\n", stacks, kPlanes, (unsigned long long)checksum);
  std::printf("%.3f ms/step\n", ms / stacks);
  for (int s = 0; s < kStreams; ++s) {
    CHECK(cudaFree(buffers[s].raw));
    CHECK(cudaFree(buffers[s].observed));
    CHECK(cudaFree(buffers[s].estimate));
    CHECK(cudaFree(buffers[s].ratio));
    CHECK(cudaFree(buffers[s].out));
    CHECK(cudaStreamDestroy(streams[s]));
  }
  CHECK(cudaFreeHost(h_stack));
  CHECK(cudaFreeHost(h_out));
  return 0;
}
