#include "analyzer/gpu_activity.h"

#include <algorithm>
#include <iterator>

namespace gpuscope::analysis {

std::vector<DeviceActivity> deviceActivity(const TraceData& trace) {
  std::vector<std::vector<Interval>> kernels(trace.devices.size()), copies(trace.devices.size());
  const KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) kernels[k.device[i]].push_back({k.start_ns[i], k.end_ns[i]});
  const CopyTable& c = trace.copies;
  for (size_t i = 0; i < c.size(); ++i) copies[c.device[i]].push_back({c.start_ns[i], c.end_ns[i]});
  const MemsetTable& m = trace.memsets;
  for (size_t i = 0; i < m.size(); ++i) copies[m.device[i]].push_back({m.start_ns[i], m.end_ns[i]});

  std::vector<DeviceActivity> activity(trace.devices.size());
  for (size_t d = 0; d < activity.size(); ++d) {
    activity[d].kernels = mergeIntervals(std::move(kernels[d]));
    activity[d].copies = mergeIntervals(std::move(copies[d]));
    // Both unions are sorted and disjoint: merging them in order keeps the busy union's input sorted.
    std::vector<Interval> all;
    all.reserve(activity[d].kernels.size() + activity[d].copies.size());
    std::merge(activity[d].kernels.begin(), activity[d].kernels.end(), activity[d].copies.begin(),
               activity[d].copies.end(), std::back_inserter(all),
               [](const Interval& a, const Interval& b) { return a.start < b.start; });
    activity[d].busy = mergeIntervals(std::move(all));
  }
  return activity;
}

std::vector<Interval> busyLaunchedOutside(const TraceData& trace, int32_t device,
                                          const std::vector<Interval>& left_out) {
  std::vector<Interval> busy;
  auto add = [&](const GpuWorkColumns& w) {
    for (size_t i = 0; i < w.start_ns.size(); ++i) {
      const int32_t call = w.launch_call[i];
      const int64_t launched = call == kNone ? w.start_ns[i] : trace.api_calls.start_ns[static_cast<size_t>(call)];
      if (w.device[i] == device && !insideAny(left_out, launched)) busy.push_back({w.start_ns[i], w.end_ns[i]});
    }
  };
  add(trace.kernels);
  add(trace.copies);
  add(trace.memsets);
  return mergeIntervals(std::move(busy));
}

}  // namespace gpuscope::analysis
