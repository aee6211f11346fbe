// `gpuscope import`: traces made by other tools as gpuscope traces. Today: PyTorch memory snapshots
// (torch.cuda.memory._snapshot() saved as JSON), whose allocator events become one process's
// allocator_event rows.
#pragma once

#include <string>

#include "formats/status.h"

namespace gpuscope {

// Writes output (atomically; an existing file only with overwrite) from input; one clear error for an
// input of a kind gpuscope cannot read.
Status importTrace(const std::string& input, const std::string& output, bool overwrite);

}  // namespace gpuscope
