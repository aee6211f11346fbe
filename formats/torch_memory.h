// PyTorch memory snapshots (torch.cuda.memory._snapshot(), parsed from JSON or a pickle) as trace rows: the
// caching allocator's events from "device_traces", and, in the snapshots gpuscope's PyTorch bridge writes (a
// "gpuscope" key), the roles of the tensors it saw: parameters, buffers, gradients, optimizer state. One
// reader for both `gpuscope record --torch` (the bridge's torch-<pid>.json beside each process's trace) and
// `gpuscope import`.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "formats/status.h"
#include "formats/trace_schema.h"

namespace gpuscope {

class TraceWriter;

struct TorchMemory {
  std::vector<schema::AllocatorEventRow> events;  // session_id 0, timestamps in Unix ns
  std::vector<schema::TensorRoleRow> roles;       // session_id 0, Unix ns; name ids index role_names
  std::vector<std::string> role_names;
  std::optional<int64_t> pid;  // the process the bridge ran in
  bool wrapped = false;        // the allocator's history was full: its earliest events are missing
  int64_t skipped = 0;         // entries without a time or of an action gpuscope does not know
};

// Reads a snapshot; one clear error for a file that is not one.
Result<TorchMemory> readTorchMemory(const std::string& path);
// The same from parsed JSON (an object with "device_traces"); `name` for messages.
Result<TorchMemory> torchMemoryFromJson(const nlohmann::json& snapshot, const std::string& name);

// Appends the rows to a trace for one session, moving each time onto the trace clock by clock_offset_ns
// (trace clock − Unix time; 0 when the trace clock is CLOCK_REALTIME, as CUPTI's is), with a data_quality
// row for what the snapshot could not give.
Status appendTorchMemory(const TorchMemory& memory, int64_t session_id, int64_t clock_offset_ns, TraceWriter& out);

}  // namespace gpuscope
