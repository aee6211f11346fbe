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

}  // namespace gpuscope::analysis
