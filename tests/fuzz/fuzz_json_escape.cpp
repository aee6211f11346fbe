// libFuzzer target: any bytes, as a key and a value, must serialise to JSON that a strict parser accepts.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "formats/json_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gpuscope::JsonWriter json;
  json.beginObject().field(text, text).key("t").microseconds(static_cast<int64_t>(size) * -7919).endObject();
  if (!nlohmann::json::accept(json.text())) std::abort();
  return 0;
}
