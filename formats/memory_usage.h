// The memory figures an allocator reports of itself (the JAX bridge's jax-<pid>.json: each GPU's
// memory_stats() from XLA, sampled while the program ran) as memory_usage rows, for `gpuscope record --jax`.
#pragma once

#include <string>
#include <vector>

#include "formats/status.h"
#include "formats/trace_schema.h"

namespace gpuscope {

class TraceWriter;

struct MemoryUsage {
  std::vector<schema::MemoryUsageRow> samples;  // session_id 0, timestamps in Unix ns
  bool full = false;                            // the bridge stopped at its sample limit
  std::string failed;                           // why the bridge stopped reading, if it did
};

// Reads the file; one clear error for a file that is not one.
Result<MemoryUsage> readMemoryUsage(const std::string& path);

// Appends the samples to a trace for one session, each time moved onto the trace clock by clock_offset_ns, with
// a data_quality row for samples the bridge could not take.
Status appendMemoryUsage(const MemoryUsage& usage, int64_t session_id, int64_t clock_offset_ns, TraceWriter& out);

}  // namespace gpuscope
