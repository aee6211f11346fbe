// What the HTML report draws, taken from the context: device memory over time stacked by category, where
// a step's time goes (busy, and idle by cause), the kernels that take the most GPU time, and the fusable
// chains that would save the most.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "advisor/context.h"

namespace gpuscope::advisor {

struct Bar {
  std::string label;
  int64_t value = 0;  // ns or bytes, as the plot says
};

struct PlotData {
  // The device with the highest peak: at most ~300 points, each the moment of the highest total in its
  // stretch of time (so the peak is never smoothed away), ns since the trace start.
  std::vector<int64_t> memory_times_ns;
  std::array<std::vector<int64_t>, analysis::kMemoryCategoryCount> memory_by_category;
  std::vector<Bar> step_time;    // per step: kernels, copies alone, idle by cause, between steps (ns)
  std::vector<Bar> top_kernels;  // GPU time over the whole run, longest first (ns)
  std::vector<Bar> top_chains;   // estimated saving per step, largest first (ns)
};

PlotData plotData(const Context& context);

}  // namespace gpuscope::advisor
