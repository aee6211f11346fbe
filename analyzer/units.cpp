#include "analyzer/units.h"

#include <cmath>
#include <cstdio>

namespace gpuscope::analysis {

Scale timeScale(double max_ns) {
  if (max_ns >= 1e9) return {"s", 1e9};
  if (max_ns >= 1e6) return {"ms", 1e6};
  return {"us", 1e3};
}

Scale byteScale(double max_bytes) {
  if (max_bytes >= 1024.0 * 1024 * 1024) return {"GiB", 1024.0 * 1024 * 1024};
  if (max_bytes >= 1024.0 * 1024) return {"MiB", 1024.0 * 1024};
  if (max_bytes >= 1024.0) return {"KiB", 1024.0};
  return {"B", 1.0};
}

std::string formatFixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string formatDuration(int64_t ns) {
  const Scale s = timeScale(std::fabs(static_cast<double>(ns)));
  return formatFixed(static_cast<double>(ns) / s.divisor, 3) + " " + s.name;
}

std::string formatBytes(int64_t bytes) {
  const Scale s = byteScale(std::fabs(static_cast<double>(bytes)));
  return formatFixed(static_cast<double>(bytes) / s.divisor, s.divisor == 1.0 ? 0 : 1) + " " + s.name;
}

std::string formatShare(double share) { return formatFixed(share * 100.0, 1) + " %"; }

std::string formatCount(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return n < 0 ? "-" + digits : digits;
}

}  // namespace gpuscope::analysis
