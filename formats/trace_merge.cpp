#include "formats/trace_merge.h"

#include <concepts>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "formats/memory_usage.h"
#include "formats/torch_memory.h"
#include "formats/trace_reader.h"
#include "formats/trace_writer.h"

namespace gpuscope {

namespace {

using namespace schema;

// Old id → new id for one input file.
struct IdMaps {
  std::vector<StringId> strings;  // by old string id
  std::unordered_map<int64_t, int64_t> sessions;
  std::unordered_map<int64_t, int64_t> configs;
  std::unordered_map<int64_t, int64_t> pids;  // new session id → process id

  StringId string(StringId old) const {
    return old.id > 0 && static_cast<size_t>(old.id) < strings.size() ? strings[static_cast<size_t>(old.id)]
                                                                      : StringId{};
  }
  static int64_t lookup(const std::unordered_map<int64_t, int64_t>& map, int64_t old) {
    auto it = map.find(old);
    return it != map.end() ? it->second : old;
  }
};

// Rewrites every column of row that refers to a string, a session or a kernel configuration.
template <typename Row>
void remap(Row& row, const IdMaps& maps) {
  forEachColumn(tableOf<Row>(), [&](const auto& c) {
    auto& v = row.*(c.member);
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, StringId>) {
      v = maps.string(v);
    } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, std::optional<int64_t>>) {
      const auto* map = c.references == "session"         ? &maps.sessions
                        : c.references == "kernel_config" ? &maps.configs
                                                          : nullptr;
      if (!map) return;
      if constexpr (std::is_same_v<T, int64_t>) {
        v = IdMaps::lookup(*map, v);
      } else if (v) {
        v = IdMaps::lookup(*map, *v);
      }
    }
  });
}

Status copyStringsSessionsAndConfigs(TraceReader& in, TraceWriter& out, IdMaps& maps, int64_t& next_session) {
  Result<std::vector<std::string>> strings = in.loadStrings();
  if (!strings) return strings.status();
  maps.strings.resize(strings->size());
  for (size_t i = 1; i < strings->size(); ++i) maps.strings[i] = out.intern((*strings)[i]);
  Result<std::vector<SessionRow>> sessions = in.readAll<SessionRow>();
  if (!sessions) return sessions.status();
  for (SessionRow s : *sessions) {
    maps.sessions[s.id] = next_session;
    maps.pids[next_session] = s.pid;
    s.id = next_session++;
    GPUSCOPE_RETURN_IF_ERROR(out.append(s));
  }
  return in.forEach<KernelConfigRow>([&](const KernelConfigRow& config) {
    KernelConfigRow c = config;
    remap(c, maps);
    maps.configs[config.id] = out.intern(c);
    return true;
  });
}

// What a window keeps of one input: events overlapping it, and GPU work launched by an API call inside it
// (a kernel often runs after the NVTX range that launched it has closed).
struct WindowFilter {
  const std::vector<TimeWindow>& windows;
  std::unordered_set<int64_t> launched;  // correlation ids of API calls inside a window

  bool overlaps(int64_t start, int64_t end) const {
    for (const TimeWindow& w : windows) {
      if (start <= w.end_ns && end >= w.start_ns) return true;
    }
    return false;
  }
};

// Whether an event row passes the filter; rows that are not events always pass.
template <typename Row>
bool inWindows(const Row& row, const WindowFilter& filter) {
  if (filter.windows.empty()) return true;
  if constexpr (requires {
                  { row.correlation_id } -> std::same_as<const int64_t&>;
                }) {
    if (filter.launched.contains(row.correlation_id)) return true;
  }
  int64_t start = 0, end = 0;
  if constexpr (requires {
                  row.start_ns;
                  row.end_ns;
                }) {
    start = row.start_ns, end = row.end_ns;
  } else if constexpr (requires {
                         { row.timestamp_ns } -> std::same_as<const int64_t&>;
                       }) {
    start = end = row.timestamp_ns;  // allocations, frees, pool events (data_quality's is optional: kept)
  } else {
    return true;
  }
  return filter.overlaps(start, end);
}

template <typename Row>
Status copyTable(TraceReader& in, TraceWriter& out, const IdMaps& maps, const WindowFilter& filter) {
  Status written;
  Status read = in.forEach<Row>([&](const Row& original) {
    if (!inWindows(original, filter)) return true;
    Row row = original;
    remap(row, maps);
    written = out.append(row);
    return written.isOk();
  });
  return read.isOk() ? written : read;
}

// Trace clock − Unix time for one session of the input, from its first clock_sync row (0 without one: CUPTI's
// clock is CLOCK_REALTIME).
int64_t clockOffset(TraceReader& in, int64_t old_session) {
  int64_t offset = 0;
  bool found = false;
  (void)in.forEach<ClockSyncRow>([&](const ClockSyncRow& c) {
    if (c.session_id != old_session) return true;
    offset = c.trace_ns - c.realtime_ns, found = true;
    return false;
  });
  return found ? offset : 0;
}

// What --delay/--duration/--capture-range keep of the allocator's events and the tensors' roles, as of the
// CUDA allocations beside them: those inside a window.
void keepInWindows(TorchMemory& memory, int64_t clock_offset_ns, const WindowFilter& filter) {
  auto outside = [&](const auto& row) {
    const int64_t t = row.timestamp_ns + clock_offset_ns;
    return !filter.overlaps(t, t);
  };
  std::erase_if(memory.events, outside);
  std::vector<schema::TensorRoleRow> roles;
  std::vector<std::string> names;
  for (const schema::TensorRoleRow& r : memory.roles) {
    if (outside(r)) continue;
    names.push_back(memory.role_names[static_cast<size_t>(r.name.id)]);
    roles.push_back(r);
    roles.back().name = StringId{static_cast<int64_t>(names.size() - 1)};
  }
  memory.roles = std::move(roles);
  memory.role_names = std::move(names);
}

// The Python bridge's allocator events of each process (torch-<pid>.json from PyTorch's caching allocator,
// cupy-<pid>.json from CuPy's memory pool, in dir), added to its session. A file that cannot be read is said in
// data_quality; the rest of the trace is kept.
Status addTorchMemory(TraceReader& in, TraceWriter& out, const IdMaps& maps, const MergeOptions& options) {
  const std::string& dir = options.torch_memory_dir;
  for (const auto& [old_session, new_session] : maps.sessions) {
    const std::string pid = std::to_string(maps.pids.at(new_session));
    std::error_code ec;
    std::string path = dir + "/torch-" + pid + ".json";
    if (!std::filesystem::exists(path, ec)) path = dir + "/cupy-" + pid + ".json";
    if (!std::filesystem::exists(path, ec)) continue;
    Result<TorchMemory> memory = readTorchMemory(path);
    if (!memory) {
      GPUSCOPE_RETURN_IF_ERROR(out.append(DataQualityRow{new_session, Severity::kWarning, "torch_memory_unreadable", 1,
                                                         memory.status().message(), std::nullopt}));
      continue;
    }
    const int64_t offset = clockOffset(in, old_session);
    if (!options.windows.empty()) keepInWindows(*memory, offset, WindowFilter{options.windows, {}});
    GPUSCOPE_RETURN_IF_ERROR(appendTorchMemory(*memory, new_session, offset, out));
  }
  return Status::ok();
}

// The JAX bridge's allocator figures of each process (jax-<pid>.json in dir), added to its session; samples
// outside --delay/--duration/--capture-range's windows are left out. A file that cannot be read is said in
// data_quality; the rest of the trace is kept.
Status addMemoryUsage(TraceReader& in, TraceWriter& out, const IdMaps& maps, const MergeOptions& options) {
  for (const auto& [old_session, new_session] : maps.sessions) {
    const std::string path = options.torch_memory_dir + "/jax-" + std::to_string(maps.pids.at(new_session)) + ".json";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    Result<MemoryUsage> usage = readMemoryUsage(path);
    if (!usage) {
      GPUSCOPE_RETURN_IF_ERROR(out.append(DataQualityRow{new_session, Severity::kWarning, "memory_usage_unreadable", 1,
                                                         usage.status().message(), std::nullopt}));
      continue;
    }
    const int64_t offset = clockOffset(in, old_session);
    const WindowFilter filter{options.windows, {}};
    std::erase_if(usage->samples, [&](MemoryUsageRow r) {
      r.timestamp_ns += offset;
      return !inWindows(r, filter);
    });
    GPUSCOPE_RETURN_IF_ERROR(appendMemoryUsage(*usage, new_session, offset, out));
  }
  return Status::ok();
}

Status mergeOne(const std::string& path, TraceWriter& out, int64_t& next_session, const MergeOptions& options) {
  Result<TraceReader> in = TraceReader::open(path);
  if (!in) return in.status();
  IdMaps maps;
  GPUSCOPE_RETURN_IF_ERROR(copyStringsSessionsAndConfigs(*in, out, maps, next_session));
  WindowFilter filter{options.windows, {}};
  Status status;
  if (!options.windows.empty()) {
    status = in->forEach<ApiCallRow>([&](const ApiCallRow& call) {
      if (filter.overlaps(call.start_ns, call.end_ns)) filter.launched.insert(call.correlation_id);
      return true;
    });
  }
  forEachRowType([&](auto row) {
    using Row = decltype(row);
    if constexpr (!std::is_same_v<Row, StringRow> && !std::is_same_v<Row, SessionRow> &&
                  !std::is_same_v<Row, KernelConfigRow> && !std::is_same_v<Row, TraceInfoRow>) {
      if (status) status = copyTable<Row>(*in, out, maps, filter);
    }
  });
  if (status && !options.torch_memory_dir.empty()) status = addTorchMemory(*in, out, maps, options);
  if (status && !options.torch_memory_dir.empty()) status = addMemoryUsage(*in, out, maps, options);
  if (status) status = out.append(TraceInfoRow{"merged_from", path});
  return status;
}

}  // namespace

Result<std::vector<TimeWindow>> nvtxRangeWindows(const std::vector<std::string>& traces, const std::string& name) {
  std::vector<TimeWindow> windows;
  for (const std::string& path : traces) {
    Result<TraceReader> in = TraceReader::open(path);
    if (!in) return in.status();
    Result<sqlite::Statement> stmt = in->database().prepare(
        "SELECT n.start_ns, n.end_ns FROM nvtx n JOIN string s ON s.id = n.name WHERE n.kind = 1 AND s.value = ?");
    if (!stmt) return stmt.status();
    stmt->bindText(1, name);
    while (true) {
      Result<bool> row = stmt->step();
      if (!row) return row.status();
      if (!*row) break;
      windows.push_back({stmt->columnInt(0), stmt->columnInt(1)});
    }
  }
  return windows;
}

Status mergeTraces(const std::vector<std::string>& inputs, const std::string& output, const MergeOptions& options) {
  if (inputs.empty()) return Status(ErrorKind::kUsage, "nothing to merge: no input traces");
  Result<TraceWriter> out = TraceWriter::create(output, {.atomic = true, .overwrite = options.overwrite});
  if (!out) return out.status();
  int64_t next_session = 1;
  for (const std::string& input : inputs) GPUSCOPE_RETURN_IF_ERROR(mergeOne(input, *out, next_session, options));
  if (!options.windows.empty()) {
    GPUSCOPE_RETURN_IF_ERROR(
        out->append(DataQualityRow{std::nullopt, Severity::kInfo, "recording_window",
                                   static_cast<int64_t>(options.windows.size()), options.window_note, std::nullopt}));
  }
  for (const DataQualityRow& note : options.notes) GPUSCOPE_RETURN_IF_ERROR(out->append(note));
  GPUSCOPE_RETURN_IF_ERROR(out->append(TraceInfoRow{"created_by", "gpuscope merge"}));
  return out->finish();
}

}  // namespace gpuscope
