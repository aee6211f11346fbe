// Host time per kernel launch, the cost a tracer adds to launch-bound programs. Launches an empty kernel
// in batches on one stream and prints the median over batches of the host microseconds per launch, so a
// run under a tracer can be set beside a plain run (tests/bench/overhead.sh, section launch_cost).
// With LAUNCH_COST_RANGES=1 every other batch runs between cudaProfilerStart and cudaProfilerStop (called
// outside the timed launches), and the medians of those batches and of the others are printed apart: under
// `gpuscope record --capture-range cudaProfilerApi` the cost inside and outside a capture range, in one
// process (tests/bench/overhead.sh, section capture).
// The medians of the first and the last half of the batches are printed too: a tracer that switches itself off
// part way (tests/bench/bare_cupti_injection.cpp, BARE_CUPTI_OFF_AFTER_MS) shows what it leaves behind.
// Usage: launch_cost [BATCHES] [LAUNCHES_PER_BATCH]
#include <cuda_profiler_api.h>
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
  const char* ranges_env = std::getenv("LAUNCH_COST_RANGES");
  const bool ranges = ranges_env && std::atoi(ranges_env) == 1;
  std::vector<double> per_launch_us, inside_us, outside_us;
  for (int b = 0; b < batches + 2; ++b) {  // the first two batches warm up
    const bool inside = ranges && b % 2 == 1;
    if (inside) cudaProfilerStart();
    cudaDeviceSynchronize();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i) empty<<<1, 32>>>();
    const auto end = std::chrono::steady_clock::now();
    cudaDeviceSynchronize();
    if (inside) cudaProfilerStop();
    if (b < 2) continue;
    const double us = std::chrono::duration<double, std::micro>(end - start).count() / launches;
    per_launch_us.push_back(us);
    (inside ? inside_us : outside_us).push_back(us);
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  const cudaError_t error = cudaGetLastError();
  std::printf("{\"launch_us_median\": %.3f, \"launch_us_min\": %.3f, ", median(per_launch_us),
              *std::min_element(per_launch_us.begin(), per_launch_us.end()));
  const auto half = per_launch_us.begin() + static_cast<long>(per_launch_us.size() / 2);
  std::printf("\"first_half_us_median\": %.3f, \"last_half_us_median\": %.3f, ", median({per_launch_us.begin(), half}),
              median({half, per_launch_us.end()}));
  if (ranges)
    std::printf("\"inside_us_median\": %.3f, \"outside_us_median\": %.3f, ", median(inside_us), median(outside_us));
  std::printf("\"launches\": %d, \"status\": \"%s\"}\n", batches * launches, cudaGetErrorString(error));
  return error == cudaSuccess ? 0 : 1;
}
