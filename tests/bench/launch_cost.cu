// Host time per kernel launch, the cost a tracer adds to launch-bound programs. Launches an empty kernel
// in batches on one stream and prints the median over batches of the host microseconds per launch, so a
// run under a tracer can be set beside a plain run (tests/bench/overhead.sh, section launch_cost).
// Usage: launch_cost [BATCHES] [LAUNCHES_PER_BATCH]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void empty() {}

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 50;
  const int launches = argc > 2 ? std::atoi(argv[2]) : 2000;
  if (batches < 1 || launches < 1) {
    std::fprintf(stderr, "usage: launch_cost [BATCHES>0] [LAUNCHES_PER_BATCH>0]\n");
    return 2;
  }
  if (cudaFree(nullptr) != cudaSuccess) {
    std::fprintf(stderr, "launch_cost: no usable GPU\n");
    return 1;
  }
  std::vector<double> per_launch_us;
  for (int b = 0; b < batches + 2; ++b) {  // the first two batches warm up
    cudaDeviceSynchronize();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i) empty<<<1, 32>>>();
    const auto end = std::chrono::steady_clock::now();
    cudaDeviceSynchronize();
    if (b >= 2) per_launch_us.push_back(std::chrono::duration<double, std::micro>(end - start).count() / launches);
  }
  std::sort(per_launch_us.begin(), per_launch_us.end());
  const cudaError_t error = cudaGetLastError();
  std::printf("{\"launch_us_median\": %.3f, \"launch_us_min\": %.3f, \"launches\": %d, \"status\": \"%s\"}\n",
              per_launch_us[per_launch_us.size() / 2], per_launch_us.front(), batches * launches,
              cudaGetErrorString(error));
  return error == cudaSuccess ? 0 : 1;
}
