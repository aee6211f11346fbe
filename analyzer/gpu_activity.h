// What each device was doing over time: the unions of its kernels, of its copies and memsets, and of all
// of them. Shared by the stats, the timeline analysis and the GUI's utilisation lanes.
#pragma once

#include <vector>

#include "analyzer/intervals.h"
#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

struct DeviceActivity {
  std::vector<Interval> kernels;  // disjoint, in time order
  std::vector<Interval> copies;   // copies and memsets
  std::vector<Interval> busy;     // anything
};

// One entry per TraceData::devices entry.
std::vector<DeviceActivity> deviceActivity(const TraceData& trace);
// DeviceActivity::busy of `device` less the work launched inside `left_out` (by its launch call's start; work
// whose call was not recorded stays): what the program kept the GPU busy with, beside a compiler's own work.
std::vector<Interval> busyLaunchedOutside(const TraceData& trace, int32_t device,
                                          const std::vector<Interval>& left_out);

}  // namespace gpuscope::analysis
