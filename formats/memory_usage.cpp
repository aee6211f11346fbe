#include "formats/memory_usage.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "formats/json_file.h"
#include "formats/trace_writer.h"

namespace gpuscope {

namespace {

using nlohmann::json;

// A figure the allocator did not report is null in the file.
std::optional<int64_t> figure(const json& value) {
  if (!value.is_number()) return std::nullopt;
  return jsonIntegerOf(value, 0);
}

// "memory_usage": {"DEVICE": [[time_us, bytes_in_use, peak_bytes_in_use, pool_bytes, bytes_limit], ...]}
Status readSamples(const json& devices, const std::string& allocator, MemoryUsage& out) {
  for (const auto& [device, samples] : devices.items()) {
    if (!samples.is_array()) return Status(ErrorKind::kBadFormat, "device " + device + "'s samples are not a list");
    char* end = nullptr;
    const long long id = std::strtoll(device.c_str(), &end, 10);
    if (device.empty() || *end != '\0') return Status(ErrorKind::kBadFormat, "'" + device + "' is not a device id");
    for (const json& s : samples) {
      if (!s.is_array() || s.size() != 5 || !s[0].is_number() || !s[1].is_number()) {
        return Status(ErrorKind::kBadFormat, "a sample is not [time_us, in use, peak, reserved, limit]");
      }
      out.samples.push_back({0, id, jsonIntegerOf(s[0], 0) * 1000, allocator, jsonIntegerOf(s[1], 0), figure(s[2]),
                             figure(s[3]), figure(s[4])});
    }
  }
  return Status::ok();
}

}  // namespace

Result<MemoryUsage> readMemoryUsage(const std::string& path) {
  Result<json> file = readJsonFile(path);
  if (!file) return file.status();
  const json& f = *file;
  if (!f.is_object() || !f.contains("memory_usage") || !f["memory_usage"].is_object()) {
    return Status(ErrorKind::kBadFormat, path + ": not gpuscope's allocator figures (no \"memory_usage\" object)");
  }
  MemoryUsage usage;
  const auto g = f.find("gpuscope");
  const json meta = g != f.end() && g->is_object() ? *g : json::object();
  const std::string allocator = jsonString(meta, "allocator", "xla");
  usage.full = jsonBool(meta, "full");
  usage.failed = jsonString(meta, "failed");
  if (Status s = readSamples(f["memory_usage"], allocator, usage); !s) {
    return Status(s.kind(), path + ": " + s.message());
  }
  return usage;
}

Status appendMemoryUsage(const MemoryUsage& usage, int64_t session_id, int64_t clock_offset_ns, TraceWriter& out) {
  for (schema::MemoryUsageRow row : usage.samples) {
    row.session_id = session_id;
    row.timestamp_ns += clock_offset_ns;
    GPUSCOPE_RETURN_IF_ERROR(out.append(row));
  }
  if (usage.full || !usage.failed.empty()) {
    const std::string why = usage.full ? "reached its limit (GPUSCOPE_JAX_MAX_SAMPLES)" : "failed: " + usage.failed;
    GPUSCOPE_RETURN_IF_ERROR(out.append(schema::DataQualityRow{
        session_id, schema::Severity::kWarning, "memory_usage_incomplete", 1,
        "the allocator's own figures stop early: the bridge reading them " + why, std::nullopt}));
  }
  return Status::ok();
}

}  // namespace gpuscope
