#include "advisor/plots.h"

#include <algorithm>

#include "analyzer/kernel_names.h"

namespace gpuscope::advisor {

namespace {

constexpr size_t kMemoryPoints = 300;

struct Change {
  int64_t time_ns;
  size_t category;
  int64_t bytes;  // + allocated, − freed
};

void memorySeries(const Context& c, PlotData& plot) {
  const analysis::DeviceMemory* peak = c.memory.peakDevice();
  if (!peak || peak->peak_bytes == 0) return;
  std::vector<Change> changes;
  for (size_t i = 0; i < c.memory.allocations.size(); ++i) {
    const auto& a = c.memory.allocations[i];
    if (a.device != peak->device) continue;
    const auto category = i < c.categories.of_allocation.size() ? static_cast<size_t>(c.categories.of_allocation[i])
                                                                : static_cast<size_t>(analysis::MemoryCategory::kOther);
    changes.push_back({a.alloc_ns, category, a.bytes});
    if (a.free_ns != analysis::kNone) changes.push_back({a.free_ns, category, -a.bytes});
  }
  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& x, const Change& y) { return x.time_ns < y.time_ns; });
  const int64_t start = changes.front().time_ns, span = std::max<int64_t>(1, changes.back().time_ns - start);
  std::array<int64_t, analysis::kMemoryCategoryCount> live{}, best{};
  int64_t best_total = -1, best_time = 0;
  size_t bucket = 0;
  auto flush = [&] {
    if (best_total < 0) return;
    plot.memory_times_ns.push_back(best_time - c.trace.startNs());
    for (size_t k = 0; k < live.size(); ++k) plot.memory_by_category[k].push_back(best[k]);
    best_total = -1;
  };
  for (const Change& ch : changes) {
    const auto b = static_cast<size_t>((ch.time_ns - start) * static_cast<int64_t>(kMemoryPoints) / span);
    if (b != bucket) flush(), bucket = b;
    live[ch.category] += ch.bytes;
    int64_t total = 0;
    for (int64_t v : live) total += v;
    if (total > best_total) best_total = total, best = live, best_time = ch.time_ns;
  }
  flush();
}

void stepTime(const Context& c, PlotData& plot) {
  const auto& tl = c.timeline;
  const auto& idle = tl.idle;
  plot.step_time = {{"kernels", c.perStep(tl.busy_ns - (tl.copy_ns - tl.copy_overlap_ns))},
                    {"copies alone", c.perStep(tl.copy_ns - tl.copy_overlap_ns)},
                    {"idle: launching", c.perStep(idle.launch_bound_ns)},
                    {"idle: after a sync", c.perStep(idle.after_sync_ns)},
                    {"idle: host copying", c.perStep(idle.copy_wait_ns)},
                    {"idle: queued", c.perStep(idle.queued_ns)}};
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
