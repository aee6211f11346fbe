// The memory view's data: the peak device's live bytes over time, split by category (parameters, gradients,
// optimizer state, activations, temporaries, other), as a step series with one point per allocation or free,
// and the allocations alive at a moment, largest first.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "analyzer/memory_categories.h"
#include "analyzer/memory_timeline.h"

namespace gpuscope::gui {

struct CategorySeries {
  std::vector<int64_t> time;                                               // each change, in time order
  std::array<std::vector<int64_t>, analysis::kMemoryCategoryCount> bytes;  // live bytes of each after it
  int64_t peak_total = 0, peak_time = 0;
  // Live bytes of each category at time t (all 0 before the first change).
  std::array<int64_t, analysis::kMemoryCategoryCount> at(int64_t t) const;
};

CategorySeries categorySeries(const analysis::MemoryAnalysis& memory, const analysis::MemoryCategories& categories);

// Indexes into memory.allocations of those on the peak device alive at t, largest first.
std::vector<size_t> aliveAt(const analysis::MemoryAnalysis& memory, int64_t t);

}  // namespace gpuscope::gui
