// A 2D FDTD wave simulation (TMz: Ez, Hx, Hy on a 2048x2048 grid with a point source): each time step updates
// H, then E, then adds the source. Every launch is checked with CHECK_LAUNCH, which also waits for the kernel
// so that an error in it is reported at its own line.
#include <chrono>
#include <cmath>
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

#define CHECK_LAUNCH()              \
  do {                              \
    CHECK(cudaGetLastError());      \
    CHECK(cudaDeviceSynchronize()); \
  } while (0)

constexpr int NX = 2048, NY = 2048;
constexpr float COURANT = 0.5f;

__global__ void update_h(const float* ez, float* hx, float* hy) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= NX - 1 || y >= NY - 1) return;
  int i = y * NX + x;
  hx[i] -= COURANT * (ez[i + NX] - ez[i]);
  hy[i] += COURANT * (ez[i + 1] - ez[i]);
}

__global__ void update_e(float* ez, const float* hx, const float* hy) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= NX - 1 || y >= NY - 1) return;  // the edges stay 0: a conducting box
  int i = y * NX + x;
  ez[i] += COURANT * ((hy[i] - hy[i - 1]) - (hx[i] - hx[i - NX]));
}

__global__ void add_source(float* ez, int step) {
  float t = step - 60.f;
  ez[(NY / 2) * NX + NX / 2] += expf(-t * t / 400.f) * sinf(0.1f * step);
}

int main() {
  const size_t bytes = static_cast<size_t>(NX) * NY * sizeof(float);
  float *ez, *hx, *hy;
  CHECK(cudaMalloc(&ez, bytes));
  CHECK(cudaMalloc(&hx, bytes));
  CHECK(cudaMalloc(&hy, bytes));
  CHECK(cudaMemset(ez, 0, bytes));
  CHECK(cudaMemset(hx, 0, bytes));
  CHECK(cudaMemset(hy, 0, bytes));
  dim3 block(32, 8), grid(NX / 32, NY / 8);
  int step = 0;
  auto advance = [&] {
    update_h<<<grid, block>>>(ez, hx, hy);
    CHECK_LAUNCH();
    update_e<<<grid, block>>>(ez, hx, hy);
    CHECK_LAUNCH();
    add_source<<<1, 1>>>(ez, step);
    CHECK_LAUNCH();
    ++step;
  };
  for (int i = 0; i < 20; ++i) advance();
  CHECK(cudaDeviceSynchronize());
  const int timed = 1000;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < timed; ++i) advance();
  CHECK(cudaDeviceSynchronize());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  std::vector<float> row(NX);
  CHECK(cudaMemcpy(row.data(), ez + static_cast<size_t>(NY / 2) * NX, NX * sizeof(float), cudaMemcpyDeviceToHost));
  double energy = 0;
  for (float e : row) energy += e * e;
  std::printf("Ez energy on the middle row after %d steps: %.6e\n", step, energy);
  std::printf("%.3f ms/step\n", ms / timed);
  CHECK(cudaFree(ez));
  CHECK(cudaFree(hx));
  CHECK(cudaFree(hy));
  return 0;
}
