// Merges traces (one per process of a run, or per rank of a job) into one: sessions are renumbered,
// strings and kernel configurations re-interned, and every reference rewritten to match.
#pragma once

#include <string>
#include <vector>

#include "formats/status.h"

namespace gpuscope {

struct MergeOptions {
  bool overwrite = false;
};

Status mergeTraces(const std::vector<std::string>& inputs, const std::string& output, const MergeOptions& options);

}  // namespace gpuscope
