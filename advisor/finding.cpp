#include "advisor/finding.h"

namespace gpuscope::advisor {

std::string_view toString(Severity severity) {
  switch (severity) {
    case Severity::kInfo: return "info";
    case Severity::kLow: return "low";
    case Severity::kMedium: return "medium";
    case Severity::kHigh: return "high";
  }
  return "info";
}

bool parseSeverity(std::string_view text, Severity& out) {
  for (Severity s : {Severity::kInfo, Severity::kLow, Severity::kMedium, Severity::kHigh}) {
    if (text == toString(s)) {
      out = s;
      return true;
    }
  }
  return false;
}

Severity severityForShare(double share) {
  if (share >= 0.20) return Severity::kHigh;
  if (share >= 0.05) return Severity::kMedium;
  return Severity::kLow;
}

double Finding::weight() const { return std::max(gain.share_of_step, gain.share_of_peak); }

}  // namespace gpuscope::advisor
