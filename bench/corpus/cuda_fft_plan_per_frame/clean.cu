// Blurs a stream of 2048 x 2048 camera frames by FFT convolution with a Gaussian (forward R2C transform,
// pointwise product with the filter's spectrum, inverse C2R transform) and keeps a running mean of the
// blurred frames. The cuFFT plans are made once, before the loop, and reused for every frame.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <cufft.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)
#define CHECK_FFT(call)                                                      \
  do {                                                                       \
    cufftResult r_ = (call);                                                 \
    if (r_ != CUFFT_SUCCESS) {                                               \
      std::fprintf(stderr, "%s:%d: cuFFT error %d\n", __FILE__, __LINE__, r_); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

// A synthetic frame: moving bars plus a little hash noise, as a camera would deliver them.
__global__ void capture(float* frame, int n, int t) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= n) return;
  unsigned h = (x * 73856093u) ^ (y * 19349663u) ^ (t * 83492791u);
  frame[y * n + x] = ((x + 3 * t) / 32 % 2 ? 1.0f : 0.2f) + (h % 1024) * 1e-4f;
}

// The filter's spectrum: a Gaussian of sigma pixels, for an R2C transform of n x n (n/2+1 columns).
__global__ void gaussian_spectrum(cufftComplex* h, int n, float sigma) {
  int kx = blockIdx.x * blockDim.x + threadIdx.x, ky = blockIdx.y;
  if (kx > n / 2) return;
  float fy = (ky <= n / 2 ? ky : ky - n) / float(n), fx = kx / float(n);
  float g = expf(-2.0f * 3.14159265f * 3.14159265f * sigma * sigma * (fx * fx + fy * fy));
  h[ky * (n / 2 + 1) + kx] = make_cuComplex(g / (float(n) * n), 0.0f);  // 1/n^2: cuFFT's inverse is unscaled
}

__global__ void multiply(cufftComplex* spec, const cufftComplex* h, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) spec[i] = cuCmulf(spec[i], h[i]);
}

__global__ void accumulate(float* mean, const float* frame, int count, float weight) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) mean[i] += weight * (frame[i] - mean[i]);
}

void fft_blur(cufftHandle forward, cufftHandle inverse, float* frame, cufftComplex* spec,
              const cufftComplex* filter, int n) {
  const int count = n * (n / 2 + 1);
  CHECK_FFT(cufftExecR2C(forward, frame, spec));
  multiply<<<(count + 255) / 256, 256>>>(spec, filter, count);
  CHECK_FFT(cufftExecC2R(inverse, spec, frame));
}

int main() {
  const int n = 2048, pixels = n * n;
  float *frame, *mean;
  cufftComplex *spec, *filter;
  CHECK(cudaMalloc(&frame, pixels * sizeof(float)));
  CHECK(cudaMalloc(&mean, pixels * sizeof(float)));
  CHECK(cudaMalloc(&spec, n * (n / 2 + 1) * sizeof(cufftComplex)));
  CHECK(cudaMalloc(&filter, n * (n / 2 + 1) * sizeof(cufftComplex)));
  CHECK(cudaMemset(mean, 0, pixels * sizeof(float)));
  gaussian_spectrum<<<dim3((n / 2 + 1 + 255) / 256, n), 256>>>(filter, n, 4.0f);
  cufftHandle forward, inverse;
  CHECK_FFT(cufftPlan2d(&forward, n, n, CUFFT_R2C));
  CHECK_FFT(cufftPlan2d(&inverse, n, n, CUFFT_C2R));
  int t = 0;
  auto step = [&] {
    capture<<<dim3((n + 255) / 256, n), 256>>>(frame, n, t);
    fft_blur(forward, inverse, frame, spec, filter, n);
    accumulate<<<(pixels + 255) / 256, 256>>>(mean, frame, pixels, 1.0f / (t + 1));
    CHECK(cudaGetLastError());
    ++t;
  };
  for (int i = 0; i < 10; ++i) step();
  CHECK(cudaDeviceSynchronize());
  const int timed = 200;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < timed; ++i) step();
  CHECK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  float centre;
  CHECK(cudaMemcpy(&centre, mean + (n / 2) * n + n / 2, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("mean frame centre %.4f\n", centre);
  std::printf("%.3f ms/step\n", ms / timed);
  CHECK_FFT(cufftDestroy(forward));
  CHECK_FFT(cufftDestroy(inverse));
  CHECK(cudaFree(frame));
  CHECK(cudaFree(mean));
  CHECK(cudaFree(spec));
  CHECK(cudaFree(filter));
  return 0;
}
