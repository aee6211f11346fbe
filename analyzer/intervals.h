// Time intervals and their unions: busy time is the union of what ran, never the sum (kernels on several
// streams overlap).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpuscope::analysis {

struct Interval {
  int64_t start = 0, end = 0;
  int64_t length() const { return end - start; }
  bool holds(int64_t t) const { return t >= start && t < end; }  // never, where empty
};

// Sorts and merges overlapping or touching intervals into disjoint ones, in time order.
inline std::vector<Interval> mergeIntervals(std::vector<Interval> intervals) {
  const auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  if (!std::is_sorted(intervals.begin(), intervals.end(), by_start)) {  // kernels usually come sorted
    std::sort(intervals.begin(), intervals.end(), by_start);
  }
  std::vector<Interval> merged;
  for (const Interval& i : intervals) {
    if (!merged.empty() && i.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, i.end);
    } else {
      merged.push_back(i);
    }
  }
  return merged;
}

inline int64_t totalLength(const std::vector<Interval>& disjoint) {
  int64_t total = 0;
  for (const Interval& i : disjoint) total += i.length();
  return total;
}

// The intersection of two sets of disjoint, sorted intervals, itself disjoint and sorted.
inline std::vector<Interval> intersect(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t start = std::max(a[i].start, b[j].start);
    const int64_t end = std::min(a[i].end, b[j].end);
    if (end > start) out.push_back({start, end});
    (a[i].end < b[j].end) ? ++i : ++j;
  }
  return out;
}

// Length of the intersection of two sets of disjoint, sorted intervals.
inline int64_t overlapLength(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  return totalLength(intersect(a, b));
}

// The parts of a not covered by b (both disjoint and sorted), disjoint and sorted.
inline std::vector<Interval> subtract(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t j = 0;
  for (Interval piece : a) {
    while (j < b.size() && b[j].end <= piece.start) ++j;
    for (size_t k = j; k < b.size() && b[k].start < piece.end; ++k) {
      if (b[k].start > piece.start) out.push_back({piece.start, b[k].start});
      piece.start = std::max(piece.start, b[k].end);
    }
    if (piece.end > piece.start) out.push_back(piece);
  }
  return out;
}

// The last of the disjoint, sorted intervals that starts at or before t; nullptr when none does.
inline const Interval* lastStartingBy(const std::vector<Interval>& disjoint, int64_t t) {
  auto it =
      std::upper_bound(disjoint.begin(), disjoint.end(), t, [](int64_t x, const Interval& i) { return x < i.start; });
  return it == disjoint.begin() ? nullptr : &*std::prev(it);
}

// Whether t falls inside one of the disjoint, sorted intervals.
inline bool insideAny(const std::vector<Interval>& disjoint, int64_t t) {
  const Interval* w = lastStartingBy(disjoint, t);
  return w && t < w->end;
}

// How much of [start, end) falls inside the disjoint, sorted intervals.
inline int64_t overlapLength(const std::vector<Interval>& disjoint, int64_t start, int64_t end) {
  int64_t total = 0;
  auto it =
      std::upper_bound(disjoint.begin(), disjoint.end(), start, [](int64_t x, const Interval& i) { return x < i.end; });
  for (; it != disjoint.end() && it->start < end; ++it) total += std::min(end, it->end) - std::max(start, it->start);
  return total;
}

}  // namespace gpuscope::analysis
