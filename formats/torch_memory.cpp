#include "formats/torch_memory.h"

#include <nlohmann/json.hpp>
#include <string_view>

#include "formats/json_file.h"
#include "formats/trace_writer.h"

namespace gpuscope {

namespace {

using nlohmann::json;
using schema::AllocatorAction;
using schema::TensorRole;

void readDeviceTraces(const json& traces, TorchMemory& out) {
  for (size_t device = 0; device < traces.size(); ++device) {
    if (!traces[device].is_array()) continue;
    for (const json& entry : traces[device]) {
      const std::optional<AllocatorAction> action =
          entry.is_object() && entry.value("action", json()).is_string()
              ? schema::enumNamed<AllocatorAction>(entry["action"].get<std::string>())
              : std::nullopt;
      if (!action || !entry.contains("time_us")) {
        ++out.skipped;
        continue;
      }
      schema::AllocatorEventRow row;
      row.device_id = static_cast<int64_t>(device);
      row.timestamp_ns = jsonInteger(entry, "time_us") * 1000;
      row.action = *action;
      // An OOM entry carries the device's free memory where the others carry the address.
      row.address = *action == AllocatorAction::kOom ? 0 : jsonInteger(entry, "addr");
      row.bytes = jsonInteger(entry, "size");
      if (entry.contains("stream")) row.stream = jsonInteger(entry, "stream");
      out.events.push_back(row);
    }
  }
}

// "roles": [[time_us, device, address, bytes, role, name], ...]
Status readRoles(const json& roles, TorchMemory& out) {
  for (const json& r : roles) {
    if (!r.is_array() || r.size() != 6 || !r[4].is_string() || !r[5].is_string()) {
      return Status(ErrorKind::kBadFormat, "a tensor role is not [time_us, device, address, bytes, role, name]");
    }
    const std::optional<TensorRole> role = schema::enumNamed<TensorRole>(r[4].get<std::string>());
    if (!role || !r[0].is_number() || !r[1].is_number() || !r[2].is_number() || !r[3].is_number()) {
      ++out.skipped;
      continue;
    }
    out.role_names.push_back(r[5].get<std::string>());
    out.roles.push_back({0, r[1].get<int64_t>(), r[0].get<int64_t>() * 1000, *role,
                         static_cast<int64_t>(r[2].get<uint64_t>()), r[3].get<int64_t>(),
                         schema::StringId{static_cast<int64_t>(out.role_names.size() - 1)}});
  }
  return Status::ok();
}

}  // namespace

Result<TorchMemory> readTorchMemory(const std::string& path) {
  Result<json> snapshot = readJsonFile(path);
  if (!snapshot) return snapshot.status();
  return torchMemoryFromJson(*snapshot, path);
}

Result<TorchMemory> torchMemoryFromJson(const json& snapshot, const std::string& path) {
  if (!snapshot.is_object() || !snapshot.contains("device_traces") || !snapshot["device_traces"].is_array()) {
    return Status(ErrorKind::kBadFormat, path +
                                             ": not a PyTorch memory snapshot (no \"device_traces\"; record it with "
                                             "torch.cuda.memory._record_memory_history(), then _dump_snapshot())");
  }
  TorchMemory memory;
  readDeviceTraces(snapshot["device_traces"], memory);
  if (const auto g = snapshot.find("gpuscope"); g != snapshot.end() && g->is_object()) {
    if (g->contains("pid")) memory.pid = jsonInteger(*g, "pid");
    memory.wrapped = jsonBool(*g, "wrapped");
    if (const auto roles = g->find("roles"); roles != g->end() && roles->is_array()) {
      if (Status s = readRoles(*roles, memory); !s) return Status(s.kind(), path + ": " + s.message());
    }
  }
  return memory;
}

Status appendTorchMemory(const TorchMemory& memory, int64_t session_id, int64_t clock_offset_ns, TraceWriter& out) {
  for (schema::AllocatorEventRow row : memory.events) {
    row.session_id = session_id;
    row.timestamp_ns += clock_offset_ns;
    GPUSCOPE_RETURN_IF_ERROR(out.append(row));
  }
  for (schema::TensorRoleRow row : memory.roles) {
    row.session_id = session_id;
    row.timestamp_ns += clock_offset_ns;
    row.name = out.intern(memory.role_names[static_cast<size_t>(row.name.id)]);
    GPUSCOPE_RETURN_IF_ERROR(out.append(row));
  }
  if (memory.wrapped) {
    GPUSCOPE_RETURN_IF_ERROR(out.append(schema::DataQualityRow{
        session_id, schema::Severity::kWarning, "allocator_history_full", 1,
        "PyTorch's allocator history reached its limit (GPUSCOPE_TORCH_MAX_EVENTS): its earliest events are "
        "missing, so tensor-level memory before them is incomplete",
        std::nullopt}));
  }
  if (memory.skipped > 0) {
    GPUSCOPE_RETURN_IF_ERROR(out.append(schema::DataQualityRow{
        session_id, schema::Severity::kInfo, "allocator_entries_skipped", memory.skipped,
        "allocator history entries without a time or of an action gpuscope does not know were left out",
        std::nullopt}));
  }
  return Status::ok();
}

}  // namespace gpuscope
