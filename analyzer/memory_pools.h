// Stream-ordered memory pools (cudaMallocAsync, PyTorch's cudaMallocAsync backend): how much each pool
// reserved from the device against how much it had handed out, from the pool's own reports (CUPTI's
// memory-pool records, at creation and each trim) and from its allocations. Reserved but unused memory is
// held by the process and unavailable to anyone: fragmentation, or a release threshold set high.
#pragma once

#include <vector>

#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

struct PoolSample {
  int64_t time_ns = 0;
  int64_t reserved_bytes = 0;  // the pool's size then
  int64_t used_bytes = 0;      // handed out then: as the pool reported it, else its live allocations
};

struct PoolUsage {
  int32_t session = 0, device = 0;
  int64_t pool = 0;  // address
  int64_t allocations = 0;
  int64_t peak_used_bytes = 0, peak_used_ns = 0;  // from its allocations and frees
  int64_t peak_reserved_bytes = 0;                // the largest size it reported
  std::vector<PoolSample> samples;                // at each pool record
  // The sample with the most reserved-but-unused memory while something was still in use (memory kept
  // after everything was freed is the release threshold's doing, not fragmentation).
  PoolSample worst;
  int64_t slackBytes() const { return worst.reserved_bytes - worst.used_bytes; }
};

// One entry per pool seen, in order of first appearance.
std::vector<PoolUsage> analyzePools(const TraceData& trace);

}  // namespace gpuscope::analysis
