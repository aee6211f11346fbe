#include "analyzer/module_memory.h"

#include <algorithm>
#include <map>

namespace gpuscope::analysis {

std::vector<ModuleMemory> memoryByModule(const TraceData& trace, const MemoryAnalysis& memory,
                                         const MemoryCategories& categories) {
  const DeviceMemory* top = memory.peakDevice();
  if (!top) return {};
  std::map<int32_t, ModuleMemory> by_range_name;  // keyed by the range's string id
  for (size_t i = 0; i < memory.allocations.size(); ++i) {
    const Allocation& a = memory.allocations[i];
    if (!a.tensor || a.device != top->device) continue;
    const int32_t range = innermostRange(trace, a.session, kAnyThread, a.alloc_ns, isModuleRange);
    if (range == kNone) continue;
    ModuleMemory& m = by_range_name[trace.nvtx.name[range]];
    if (m.module.empty()) m.module = moduleOfRange(trace.text(trace.nvtx.name[range]), m.phase);
    ++m.allocations;
    m.allocated_bytes += a.bytes;
    if (!a.aliveAt(top->peak_ns)) continue;
    m.at_peak_bytes += a.bytes;
    if (categories.of_allocation[i] == MemoryCategory::kActivations) m.activations_at_peak_bytes += a.bytes;
  }
  std::vector<ModuleMemory> rows;
  for (auto& [name, m] : by_range_name) rows.push_back(std::move(m));
  std::stable_sort(rows.begin(), rows.end(), [](const ModuleMemory& x, const ModuleMemory& y) {
    return x.at_peak_bytes != y.at_peak_bytes ? x.at_peak_bytes > y.at_peak_bytes
                                              : x.allocated_bytes > y.allocated_bytes;
  });
  return rows;
}

}  // namespace gpuscope::analysis
