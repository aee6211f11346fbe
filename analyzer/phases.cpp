#include "analyzer/phases.h"

#include <cctype>

namespace gpuscope::analysis {

Phase phaseOfName(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name.find("backward") != std::string::npos || name.find("bwd") != std::string::npos) return Phase::kBackward;
  if (name.find("forward") != std::string::npos || name.find("fwd") != std::string::npos) return Phase::kForward;
  if (name.find("optim") != std::string::npos) return Phase::kOptimizer;
  return Phase::kNoPhase;
}

namespace {

constexpr std::string_view kForwardSuffix = " (forward)", kBackwardSuffix = " (backward)";

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

bool isModuleRange(std::string_view name) { return endsWith(name, kForwardSuffix) || endsWith(name, kBackwardSuffix); }

bool isBridgeRange(std::string_view name) {
  return isModuleRange(name) || (name.starts_with("optimizer.step (") && name.ends_with(")"));
}

std::string moduleOfRange(std::string_view name, Phase& phase) {
  const bool forward = endsWith(name, kForwardSuffix);
  phase = forward ? Phase::kForward : Phase::kBackward;
  return std::string(name.substr(0, name.size() - (forward ? kForwardSuffix : kBackwardSuffix).size()));
}

std::vector<PhaseRange> phaseRanges(const TraceData& t, int32_t session) {
  std::vector<PhaseRange> ranges;  // NVTX rows are sorted by start
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    if (t.nvtx.kind[r] != schema::NvtxKind::kRange || t.nvtx.session[r] != session) continue;
    if (Phase p = phaseOfName(t.text(t.nvtx.name[r])); p != Phase::kNoPhase) {
      ranges.push_back({t.nvtx.start_ns[r], t.nvtx.end_ns[r], p});
    }
  }
  return ranges;
}

}  // namespace gpuscope::analysis
