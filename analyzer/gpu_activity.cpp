#include "analyzer/gpu_activity.h"

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
    std::vector<Interval> all = kernels[d];
    all.insert(all.end(), copies[d].begin(), copies[d].end());
    activity[d].kernels = mergeIntervals(std::move(kernels[d]));
    activity[d].copies = mergeIntervals(std::move(copies[d]));
    activity[d].busy = mergeIntervals(std::move(all));
  }
  return activity;
}

}  // namespace gpuscope::analysis
