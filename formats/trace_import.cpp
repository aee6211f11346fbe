#include "formats/trace_import.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "formats/json_file.h"
#include "formats/kineto_import.h"
#include "formats/pickle_file.h"
#include "formats/torch_memory.h"
#include "formats/trace_merge.h"
#include "formats/trace_writer.h"

namespace gpuscope {

namespace {

using nlohmann::json;

Status writeSnapshot(const std::string& input, const TorchMemory& memory, TraceWriter& out) {
  if (memory.events.empty()) {
    return Status(ErrorKind::kEmpty, input +
                                         ": the snapshot holds no allocator events (was "
                                         "torch.cuda.memory._record_memory_history() on before _snapshot()?)");
  }
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const schema::AllocatorEventRow& e : memory.events) {
    first = std::min(first, e.timestamp_ns), last = std::max(last, e.timestamp_ns);
  }
  schema::SessionRow session;
  session.id = 1;
  session.pid = memory.pid.value_or(0);
  session.command_line = "imported from a PyTorch memory snapshot";
  session.start_ns = first;
  session.end_ns = last;
  session.gpuscope_version = GPUSCOPE_VERSION;
  GPUSCOPE_RETURN_IF_ERROR(out.append(session));
  return appendTorchMemory(memory, 1, 0, out);
}

// Whether the file starts as a pickle does (torch.cuda.memory._dump_snapshot() writes one).
bool isPickle(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[2] = {};
  return in.read(head, 2) && looksLikePickle(std::string_view(head, 2));
}

// A folder of torch.profiler traces, one per rank (as each rank's tensorboard_trace_handler or
// export_chrome_trace writes them), imported each on its own and merged into one trace of the job.
Status importFolder(const std::string& input, const std::string& output, bool overwrite) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(input, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && (name.ends_with(".json") || name.ends_with(".json.gz"))) {
      files.push_back(entry.path().string());
    }
  }
  if (ec) return Status(ErrorKind::kNotFound, input + ": cannot read the folder: " + ec.message());
  if (files.empty()) return Status(ErrorKind::kEmpty, input + ": no .json or .json.gz traces in the folder");
  std::sort(files.begin(), files.end());
  std::string scratch = (std::filesystem::temp_directory_path() / "gpuscope-import-XXXXXX").string();
  if (!mkdtemp(scratch.data())) return Status(ErrorKind::kIo, "cannot make a scratch folder for the import");
  std::vector<std::string> parts;
  Status status;
  for (size_t i = 0; i < files.size() && status; ++i) {
    parts.push_back(scratch + "/" + std::to_string(i) + ".gpuscope");
    status = importTrace(files[i], parts.back(), false);
  }
  if (status) status = mergeTraces(parts, output, {.overwrite = overwrite});
  std::filesystem::remove_all(scratch, ec);
  return status;
}

}  // namespace

Status importTrace(const std::string& input, const std::string& output, bool overwrite) {
  if (std::filesystem::is_directory(input)) return importFolder(input, output, overwrite);
  const bool pickle = isPickle(input);
  Result<json> file = pickle ? readPickleFile(input) : readJsonFile(input);
  if (!file && (pickle || file.status().kind() == ErrorKind::kNotFound)) return file.status();
  const json parsed = file ? std::move(*file) : json();
  if (!parsed.is_object()) {
    return Status(ErrorKind::kBadFormat, input +
                                             ": not a JSON object; gpuscope imports torch.profiler traces (JSON) and "
                                             "PyTorch memory snapshots (pickle or JSON)");
  }
  const bool kineto = parsed.contains("traceEvents") && parsed["traceEvents"].is_array();
  std::optional<TorchMemory> snapshot;
  if (!kineto) {
    Result<TorchMemory> memory = torchMemoryFromJson(parsed, input);
    if (!memory) {
      return Status(memory.status().kind(), input +
                                                ": neither a torch.profiler trace (no \"traceEvents\") nor a PyTorch "
                                                "memory snapshot (no \"device_traces\")");
    }
    snapshot = std::move(*memory);
  }
  Result<TraceWriter> out = TraceWriter::create(output, {.atomic = true, .overwrite = overwrite});
  if (!out) return out.status();
  const std::string host = hostOfTraceFileName(std::filesystem::path(input).filename().string());
  GPUSCOPE_RETURN_IF_ERROR(kineto ? importKineto(parsed, *out, host) : writeSnapshot(input, *snapshot, *out));
  GPUSCOPE_RETURN_IF_ERROR(out->append(schema::TraceInfoRow{"imported_from", input}));
  GPUSCOPE_RETURN_IF_ERROR(out->append(schema::TraceInfoRow{"created_by", "gpuscope import"}));
  return out->finish();
}

}  // namespace gpuscope
