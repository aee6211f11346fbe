// Shared by the samples built on gpuscope's runtime: stop on a runtime error with one line, and the
// figures they print (median step time, how far two results are apart).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "formats/status.h"

// The value, or "SAMPLE: WHAT: why" on stderr and exit code 2.
template <typename T>
T orExit(gpuscope::Result<T> r, const char* sample, const char* what) {
  if (!r) std::fprintf(stderr, "%s: %s: %s\n", sample, what, r.status().message().c_str()), std::exit(2);
  return std::move(*r);
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Largest difference relative to the reference's largest magnitude; infinite where either holds a
// non-finite value (a poisoned element left unwritten) or the reference is all zero.
inline double relativeError(const std::vector<float>& reference, const std::vector<float>& other) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    if (!std::isfinite(reference[i]) || !std::isfinite(other[i])) return INFINITY;
    diff = std::max(diff, std::fabs(static_cast<double>(reference[i]) - other[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(reference[i])));
  }
  return scale > 0 ? diff / scale : INFINITY;
}
