// Reading JSON made by other tools (PyTorch snapshots, torch.profiler traces): the file parsed once, and
// integers read whatever JSON number type the writer chose.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "formats/status.h"

namespace gpuscope {

// The parsed file; kNotFound when it cannot be opened, kBadFormat ("not JSON") when it does not parse.
Result<nlohmann::json> readJsonFile(const std::string& path);

// object[key] as an integer (signed, unsigned above INT64_MAX as its two's-complement bits, or a float
// rounded), or fallback when it is missing or not a number.
int64_t jsonInteger(const nlohmann::json& object, const char* key, int64_t fallback = 0);

}  // namespace gpuscope
