// Count, total, mean, median, min and max of a set of durations (or sizes), as every summary shows them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpuscope::analysis {

struct DurationStats {
  int64_t count = 0;
  int64_t total = 0;
  int64_t min = 0;
  int64_t max = 0;
  int64_t median = 0;  // the lower middle value for an even count, so it is always a measured value
  double mean() const { return count > 0 ? static_cast<double>(total) / static_cast<double>(count) : 0.0; }
};

// Reorders values (nth_element) to find the median without a full sort.
inline DurationStats summarize(std::vector<int64_t>& values) {
  DurationStats s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  for (int64_t v : values) s.total += v;
  auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  s.median = *middle;
  return s;
}

}  // namespace gpuscope::analysis
