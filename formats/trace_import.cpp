#include "formats/trace_import.h"

#include <algorithm>
#include <climits>

#include "formats/torch_memory.h"
#include "formats/trace_writer.h"

namespace gpuscope {

namespace {

Status importSnapshot(const std::string& input, const TorchMemory& memory, const std::string& output, bool overwrite) {
  if (memory.events.empty()) {
    return Status(ErrorKind::kEmpty, input +
                                         ": the snapshot holds no allocator events (was "
                                         "torch.cuda.memory._record_memory_history() on before _snapshot()?)");
  }
  Result<TraceWriter> out = TraceWriter::create(output, {.atomic = true, .overwrite = overwrite});
  if (!out) return out.status();
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const schema::AllocatorEventRow& e : memory.events) {
    first = std::min(first, e.timestamp_ns), last = std::max(last, e.timestamp_ns);
  }
  schema::SessionRow session;
  session.id = 1;
  session.pid = memory.pid.value_or(0);
  session.command_line = "imported from " + input;
  session.start_ns = first;
  session.end_ns = last;
  session.gpuscope_version = GPUSCOPE_VERSION;
  GPUSCOPE_RETURN_IF_ERROR(out->append(session));
  GPUSCOPE_RETURN_IF_ERROR(appendTorchMemory(memory, 1, 0, *out));
  GPUSCOPE_RETURN_IF_ERROR(out->append(schema::TraceInfoRow{"imported_from", input}));
  GPUSCOPE_RETURN_IF_ERROR(out->append(schema::TraceInfoRow{"created_by", "gpuscope import"}));
  return out->finish();
}

}  // namespace

Status importTrace(const std::string& input, const std::string& output, bool overwrite) {
  Result<TorchMemory> memory = readTorchMemory(input);
  if (!memory) return memory.status();
  return importSnapshot(input, *memory, output, overwrite);
}

}  // namespace gpuscope
