#include "formats/json_file.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

namespace gpuscope {

Result<nlohmann::json> readJsonFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(ErrorKind::kNotFound, path + ": cannot open");
  nlohmann::json parsed = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status(ErrorKind::kBadFormat, path + ": not JSON");
  return parsed;
}

int64_t jsonInteger(const nlohmann::json& object, const char* key, int64_t fallback) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return fallback;
  if (it->is_number_float()) return static_cast<int64_t>(std::llround(it->get<double>()));
  return it->is_number_unsigned() ? static_cast<int64_t>(it->get<uint64_t>()) : it->get<int64_t>();
}

}  // namespace gpuscope
