// Reading JSON made by other tools (PyTorch snapshots, torch.profiler traces): the file parsed once, and
// integers read whatever JSON number type the writer chose.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "formats/status.h"

namespace gpuscope {

// The parsed file, plain or gzip-compressed (torch.profiler's tensorboard_trace_handler writes .json.gz);
// kNotFound when it cannot be opened, kBadFormat ("not JSON") when it does not parse.
Result<nlohmann::json> readJsonFile(const std::string& path);

// object[key] as an integer (signed, unsigned above INT64_MAX as its two's-complement bits, or a float
// rounded), or fallback when it is missing or not a number.
int64_t jsonInteger(const nlohmann::json& object, const char* key, int64_t fallback = 0);
// The same for a value: an array element, say.
int64_t jsonIntegerOf(const nlohmann::json& value, int64_t fallback);

// object[key] as a number, or fallback when it is missing or not a number.
double jsonNumber(const nlohmann::json& object, const char* key, double fallback = 0);

// object[key] as a string, or fallback when it is missing or not a string: other tools' files are read as
// they come, and a field of an unexpected type is treated as absent rather than thrown on.
std::string jsonString(const nlohmann::json& object, const char* key, const std::string& fallback = "");

// object[key] as a bool, or fallback when it is missing or not a bool.
bool jsonBool(const nlohmann::json& object, const char* key, bool fallback = false);

}  // namespace gpuscope
