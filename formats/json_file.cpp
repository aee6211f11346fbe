#include "formats/json_file.h"

#include <zlib.h>
#include <cmath>

#include <fstream>
#include <nlohmann/json.hpp>

namespace gpuscope {

Result<nlohmann::json> readJsonFile(const std::string& path) {
  // zlib reads a gzip file decompressed and any other file as it is.
  gzFile in = gzopen(path.c_str(), "rb");
  if (!in) return Status(ErrorKind::kNotFound, path + ": cannot open");
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(in, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  const bool broken = n < 0;
  gzclose(in);
  if (broken) return Status(ErrorKind::kBadFormat, path + ": a damaged gzip file");
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status(ErrorKind::kBadFormat, path + ": not JSON");
  return parsed;
}

int64_t jsonIntegerOf(const nlohmann::json& value, int64_t fallback) {
  if (!value.is_number()) return fallback;
  if (value.is_number_float()) return static_cast<int64_t>(std::llround(value.get<double>()));
  return value.is_number_unsigned() ? static_cast<int64_t>(value.get<uint64_t>()) : value.get<int64_t>();
}

int64_t jsonInteger(const nlohmann::json& object, const char* key, int64_t fallback) {
  const auto it = object.find(key);
  return it == object.end() ? fallback : jsonIntegerOf(*it, fallback);
}

double jsonNumber(const nlohmann::json& object, const char* key, double fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string jsonString(const nlohmann::json& object, const char* key, const std::string& fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool jsonBool(const nlohmann::json& object, const char* key, bool fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

}  // namespace gpuscope
