// `gpuscope import`: traces made by other tools as gpuscope traces: torch.profiler (Kineto) Chrome traces
// (kineto_import.h) and PyTorch memory snapshots, pickled or saved as JSON (torch_memory.h), each as one process.
#pragma once

#include <string>

#include "formats/status.h"

namespace gpuscope {

// Writes output (atomically; an existing file only with overwrite) from input; one clear error for an
// input of a kind gpuscope cannot read. A folder is a job: each .json or .json.gz trace in it (one per rank)
// imported, and all merged into one trace.
Status importTrace(const std::string& input, const std::string& output, bool overwrite);

}  // namespace gpuscope
