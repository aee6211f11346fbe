// torch.profiler (Kineto) Chrome traces as gpuscope traces: kernels, copies, memsets and CUDA API calls with
// their correlation ids (so every kernel keeps its launch), user annotations (record_function, optimizer
// steps) as NVTX ranges, ATen operators as NVTX ranges in the "PyTorch ops" domain, the caching allocator's
// [memory] events as allocator events, and the GPUs from deviceProperties.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "formats/status.h"

namespace gpuscope {

class TraceWriter;

// Writes a parsed Kineto trace (an object with "traceEvents") into `out` as one process: a rank of a job where
// its "distributedInfo" says so. `host` is the host it was recorded on ("" when unknown: the trace does not say).
Status importKineto(const nlohmann::json& trace, TraceWriter& out, const std::string& host = "");

// The host in the file name torch.profiler.tensorboard_trace_handler gives a trace by default,
// "<host>_<pid>.<time>.pt.trace.json[.gz]"; "" for any other name.
std::string hostOfTraceFileName(const std::string& file_name);

}  // namespace gpuscope
