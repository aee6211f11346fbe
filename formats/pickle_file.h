// Python pickles of plain data, as JSON: what torch.cuda.memory._dump_snapshot() writes (a pickle of dicts,
// lists, strings, numbers, booleans and None). Only the opcodes that build such data are read; a pickle that
// names Python classes or calls functions is refused, never executed.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "formats/status.h"

namespace gpuscope {

// Dicts become objects (keys that are not strings are written as JSON text), lists and tuples arrays, bytes
// strings. kBadFormat, with the offset, for a truncated or malformed pickle or one holding other objects.
Result<nlohmann::json> parsePickle(std::string_view bytes);

// The file parsed; kNotFound when it cannot be opened.
Result<nlohmann::json> readPickleFile(const std::string& path);

// Whether the bytes start as a pickle of protocol 2 or later does (PROTO).
bool looksLikePickle(std::string_view head);

}  // namespace gpuscope
