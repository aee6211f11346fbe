// GPU timing for the runtime's benchmarks: the median over runs of one call's time, each run timing ten
// calls back to back with CUDA events (so launch costs hide behind the previous call, as in a real step).
#pragma once

#include <algorithm>
#include <vector>

#include "advisor/runtime/cuda_driver.h"

namespace gpuscope::runtime {

template <typename F>
float medianMs(const CudaDriver& cu, F fn, int runs = 20) {
  constexpr int kBackToBack = 10;
  CUevent start, stop;
  cu.eventCreate(&start, 0);
  cu.eventCreate(&stop, 0);
  for (int i = 0; i < 3; ++i) fn();  // warm up
  std::vector<float> times;
  for (int i = 0; i < runs; ++i) {
    cu.eventRecord(start, nullptr);
    for (int k = 0; k < kBackToBack; ++k) fn();
    cu.eventRecord(stop, nullptr);
    cu.eventSynchronize(stop);
    float ms = 0;
    cu.eventElapsedTime(&ms, start, stop);
    times.push_back(ms / kBackToBack);
  }
  cu.eventDestroy(start);
  cu.eventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace gpuscope::runtime
