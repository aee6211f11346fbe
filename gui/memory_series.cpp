#include "gui/memory_series.h"

#include <algorithm>
#include <utility>

namespace gpuscope::gui {

CategorySeries categorySeries(const analysis::MemoryAnalysis& memory, const analysis::MemoryCategories& categories) {
  CategorySeries s;
  const analysis::DeviceMemory* top = memory.peakDevice();
  if (!top) return s;
  struct Change {
    int64_t time, bytes;
    size_t category;
  };
  std::vector<Change> changes;
  for (size_t i = 0; i < memory.allocations.size(); ++i) {
    const analysis::Allocation& a = memory.allocations[i];
    if (a.device != top->device) continue;
    const auto c = static_cast<size_t>(categories.of_allocation[i]);
    changes.push_back({a.alloc_ns, a.bytes, c});
    if (a.free_ns != analysis::kNone) changes.push_back({a.free_ns, -a.bytes, c});
  }
  std::stable_sort(changes.begin(), changes.end(), [](const Change& x, const Change& y) { return x.time < y.time; });
  std::array<int64_t, analysis::kMemoryCategoryCount> live{};
  for (const Change& ch : changes) {
    live[ch.category] += ch.bytes;
    s.time.push_back(ch.time);
    int64_t total = 0;
    for (size_t c = 0; c < live.size(); ++c) s.bytes[c].push_back(live[c]), total += live[c];
    if (total > s.peak_total) s.peak_total = total, s.peak_time = ch.time;
  }
  return s;
}

std::array<int64_t, analysis::kMemoryCategoryCount> CategorySeries::at(int64_t t) const {
  std::array<int64_t, analysis::kMemoryCategoryCount> out{};
  const auto n = static_cast<size_t>(std::upper_bound(time.begin(), time.end(), t) - time.begin());
  if (n == 0) return out;
  for (size_t c = 0; c < out.size(); ++c) out[c] = bytes[c][n - 1];
  return out;
}

std::vector<size_t> aliveAt(const analysis::MemoryAnalysis& memory, int64_t t) {
  std::vector<size_t> out;
  const analysis::DeviceMemory* top = memory.peakDevice();
  for (size_t i = 0; top && i < memory.allocations.size(); ++i) {
    const analysis::Allocation& a = memory.allocations[i];
    if (a.device == top->device && a.aliveAt(t)) out.push_back(i);
  }
  std::stable_sort(out.begin(), out.end(),
                   [&](size_t x, size_t y) { return memory.allocations[x].bytes > memory.allocations[y].bytes; });
  return out;
}

}  // namespace gpuscope::gui
