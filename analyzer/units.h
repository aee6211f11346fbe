// Numbers as users read them, each with its unit: "1.234 ms", "56.0 MiB", "12.5 %". The CLI's tables, the
// advisor's findings and the GUI all print through these, so a number reads the same everywhere.
#pragma once

#include <cstdint>
#include <string>

namespace gpuscope::analysis {

struct Scale {
  const char* name;  // "ms", "MiB"
  double divisor;    // value in base units over this is the value in the scale's unit
};
Scale timeScale(double max_ns);     // s, ms or us, whichever suits a value up to max_ns
Scale byteScale(double max_bytes);  // GiB, MiB, KiB or B

std::string formatDuration(int64_t ns);               // "1.234 ms"
std::string formatBytes(int64_t bytes);               // "56.0 MiB"
std::string formatShare(double share);                // a fraction 0..1 as "12.5 %"
std::string formatCount(int64_t n);                   // "12,345"
std::string formatFixed(double value, int decimals);  // "5.34"

}  // namespace gpuscope::analysis
