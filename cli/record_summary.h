// The few lines `gpuscope record` prints about what it recorded.
#pragma once

#include <string>

#include "formats/trace_reader.h"

namespace gpuscope::cli {

struct RecordSummary {
  int64_t processes = 0;
  double duration_s = 0;
  int64_t kernels = 0;
  int64_t graph_launches = 0;     // CUDA graph launches recorded as a whole (--cuda-graph-trace graph)
  double gpu_busy_percent = 0;    // time any kernel, graph, copy or memset ran, over the recording's duration
  int64_t peak_device_bytes = 0;  // highest device memory allocated through CUDA at once, summed over GPUs
  int64_t warnings = 0;           // data-quality rows of severity warning or error
};

Result<RecordSummary> summarize(TraceReader& reader);
std::string formatSummary(const std::string& path, const RecordSummary& summary);

}  // namespace gpuscope::cli
