// The phases of a training step — forward, backward, optimizer — told from the names of NVTX ranges
// ("forward", "fwd", "backward", "bwd", "optimizer", "optim.step"). Memory categories and the advisor's
// rules both judge by them.
#pragma once

#include <string>
#include <vector>

#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

enum class Phase { kNoPhase, kSetup, kForward, kBackward, kOptimizer, kAfter };

Phase phaseOfName(std::string name);  // kForward, kBackward, kOptimizer or kNoPhase

struct PhaseRange {
  int64_t start = 0, end = 0;  // host time of the NVTX range
  Phase phase = Phase::kNoPhase;
};

// The NVTX ranges of one process (index into trace.sessions) that name a phase, in start order.
std::vector<PhaseRange> phaseRanges(const TraceData& trace, int32_t session);

}  // namespace gpuscope::analysis
