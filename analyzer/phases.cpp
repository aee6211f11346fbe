#include "analyzer/phases.h"

#include <algorithm>
#include <array>
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
  return isModuleRange(name) || (name.starts_with("optimizer.step (") && name.ends_with(")")) ||
         name == kDataLoaderRange;
}

bool isLibraryRange(std::string_view name, std::string_view domain) {
  // NVTX domains libraries name for themselves: CUB and Thrust (CCCL, one range per algorithm call), NCCL (one
  // per collective), NVSHMEM, RAPIDS' RMM and libcudf.
  constexpr std::array<std::string_view, 6> kLibraryDomains = {"CCCL", "NCCL", "NVSHMEM", "RMM", "libcudf", "cuDF"};
  if (std::find(kLibraryDomains.begin(), kLibraryDomains.end(), domain) != kLibraryDomains.end()) return true;
  return name.starts_with("Thunk:#") || (name.starts_with("Xla") && name.find(":#") != std::string_view::npos);
}

std::vector<Interval> annotatedCompiles(const TraceData& t, int32_t session) {
  std::vector<Interval> compiles;
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    if (t.nvtx.kind[r] == schema::NvtxKind::kRange && t.nvtx.session[r] == session &&
        t.text(t.nvtx.name[r]).starts_with("XlaCompile:#")) {
      compiles.push_back({t.nvtx.start_ns[r], t.nvtx.end_ns[r]});
    }
  }
  return mergeIntervals(std::move(compiles));
}

std::vector<bool> callsInCompiles(const TraceData& t) {
  std::vector<bool> inside(t.api_calls.size(), false);
  for (size_t s = 0; s < t.sessions.size(); ++s) {
    const std::vector<Interval> compiles = annotatedCompiles(t, static_cast<int32_t>(s));
    if (compiles.empty()) continue;
    for (size_t i = 0; i < t.api_calls.size(); ++i) {
      if (t.api_calls.session[i] == static_cast<int32_t>(s)) inside[i] = insideAny(compiles, t.api_calls.start_ns[i]);
    }
  }
  return inside;
}

std::string moduleOfRange(std::string_view name, Phase& phase) {
  const bool forward = endsWith(name, kForwardSuffix);
  phase = forward ? Phase::kForward : Phase::kBackward;
  return std::string(name.substr(0, name.size() - (forward ? kForwardSuffix : kBackwardSuffix).size()));
}

std::vector<PhaseRange> phaseRanges(const TraceData& t, int32_t session) {
  std::vector<PhaseRange> ranges;  // NVTX rows are sorted by start
  std::array<int64_t, 8> last{};   // per phase: index + 1 of its last range kept (0: none yet)
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    if (t.nvtx.kind[r] != schema::NvtxKind::kRange || t.nvtx.session[r] != session) continue;
    // XLA's compiler names its passes after what they do ("XlaPass:#name=all-gather-optimizer,…#",
    // "XlaOptimizeLlvmIr:#…#"): no phase of the program's.
    if (isLibraryRange(t.text(t.nvtx.name[r]), t.text(t.nvtx.domain[r]))) continue;
    const Phase p = phaseOfName(t.text(t.nvtx.name[r]));
    if (p == Phase::kNoPhase) continue;
    int64_t& kept = last[static_cast<size_t>(p)];
    // A range inside (or overlapping) the phase's previous one is part of it: module ranges inside a step's
    // forward range, or inside the model's own forward module range.
    if (kept > 0 && t.nvtx.start_ns[r] < ranges[static_cast<size_t>(kept - 1)].end) {
      ranges[static_cast<size_t>(kept - 1)].end = std::max(ranges[static_cast<size_t>(kept - 1)].end, t.nvtx.end_ns[r]);
      continue;
    }
    ranges.push_back({t.nvtx.start_ns[r], t.nvtx.end_ns[r], p});
    kept = static_cast<int64_t>(ranges.size());
  }
  return ranges;
}

}  // namespace gpuscope::analysis
