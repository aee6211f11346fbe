#include "advisor/plots.h"

#include <algorithm>

#include "analyzer/kernel_names.h"

namespace gpuscope::advisor {

namespace {

constexpr size_t kMemoryPoints = 300;

// At most kMemoryPoints points: in each stretch of time, the moment of the highest total.
void memorySeries(const Context& c, PlotData& plot) {
  const analysis::DeviceMemory* peak = c.memory.peakDevice();
  if (!peak || peak->peak_bytes == 0) return;
  const analysis::CategorySeries s = analysis::categorySeries(c.memory, c.categories);
  if (s.time.empty()) return;
  const int64_t start = s.time.front(), span = std::max<int64_t>(1, s.time.back() - start);
  int64_t best_total = -1;
  size_t best = 0, bucket = 0;
  auto flush = [&] {
    if (best_total < 0) return;
    plot.memory_times_ns.push_back(s.time[best] - c.trace.startNs());
    for (size_t k = 0; k < s.bytes.size(); ++k) plot.memory_by_category[k].push_back(s.bytes[k][best]);
    best_total = -1;
  };
  for (size_t i = 0; i < s.time.size(); ++i) {
    const auto b = static_cast<size_t>((s.time[i] - start) * static_cast<int64_t>(kMemoryPoints) / span);
    if (b != bucket) flush(), bucket = b;
    int64_t total = 0;
    for (const auto& category : s.bytes) total += category[i];
    if (total > best_total) best_total = total, best = i;
  }
  flush();
}

void stepTime(const Context& c, PlotData& plot) {
  const auto& tl = c.timeline;
  const auto& idle = tl.idle;
  plot.step_time = {{"kernels", c.perTimedStep(tl.busy_ns - (tl.copy_ns - tl.copy_overlap_ns))},
                    {"copies alone", c.perTimedStep(tl.copy_ns - tl.copy_overlap_ns)},
                    {"idle: launching", c.perTimedStep(idle.launch_bound_ns)},
                    {"idle: host at other work", c.perTimedStep(idle.host_busy_ns)},
                    {"idle: after a sync", c.perTimedStep(idle.after_sync_ns)},
                    {"idle: host copying", c.perTimedStep(idle.copy_wait_ns)},
                    {"idle: queued", c.perTimedStep(idle.queued_ns)}};
  if (!c.step.between.empty()) {
    plot.step_time.push_back(
        {"between steps", analysis::totalLength(c.step.between) / static_cast<int64_t>(c.step.between.size())});
  }
}

}  // namespace

PlotData plotData(const Context& c) {
  PlotData plot;
  memorySeries(c, plot);
  if (c.device != analysis::kNone) stepTime(c, plot);
  for (size_t i = 0; i < c.stats.kernels.size() && i < 10; ++i) {
    plot.top_kernels.push_back({analysis::shortKernelName(c.stats.kernels[i].name, 60), c.stats.kernels[i].time.total});
  }
  const std::vector<const analysis::FusionPattern*> chains = c.chainsToFuse();  // what the advice offers
  for (size_t i = 0; i < chains.size() && i < 8; ++i) {
    const auto& p = *chains[i];
    std::string label =
        std::to_string(p.kernels.size()) + " kernels from " + analysis::shortKernelName(p.kernels[0], 40);
    plot.top_chains.push_back({label, c.perStep(p.saving_ns)});
  }
  return plot;
}

}  // namespace gpuscope::advisor
