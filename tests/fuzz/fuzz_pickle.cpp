// libFuzzer target: any bytes given to the pickle reader must give JSON or one error, never a crash, a hang
// or unbounded memory.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "formats/pickle_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = gpuscope::parsePickle(std::string_view(reinterpret_cast<const char*>(data), size));
  // Strings are the pickle's bytes, not always UTF-8: the JSON is written with replacement characters.
  if (parsed) (void)parsed->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
