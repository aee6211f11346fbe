#include "analyzer/trace_data.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <map>
#include <numeric>
#include <thread>
#include <unordered_map>
#include <utility>

#include "analyzer/kernel_names.h"
#include "analyzer/launch_index.h"
#include "formats/api_names.h"
#include "formats/trace_reader.h"

namespace gpuscope::analysis {

namespace {

// Runs sql and hands every result row to fn; reading columns by position keeps loading fast.
Status forEachRow(sqlite::Database& db, const std::string& sql, const std::function<void(sqlite::Statement&)>& fn) {
  Result<sqlite::Statement> stmt = db.prepare(sql);
  if (!stmt) return stmt.status();
  while (true) {
    Result<bool> more = stmt->step();
    if (!more) return more.status();
    if (!*more) return Status::ok();
    fn(*stmt);
  }
}

int64_t intOr(const sqlite::Statement& s, int column, int64_t fallback) {
  return s.isNull(column) ? fallback : s.columnInt(column);
}

template <typename... Columns>
void reserveColumns(int64_t rows, Columns&... columns) {
  (columns.reserve(static_cast<size_t>(rows)), ...);
}

// Sizes every column once from the row count, so ten million rows are not copied at each doubling.
Status reserveTables(TraceReader& reader, TraceData& t) {
  auto count = [&](auto row, int64_t& n) {
    Result<int64_t> c = reader.approximateCount<decltype(row)>();
    n = c ? *c : 0;
    return c.isOk() ? Status::ok() : c.status();
  };
  int64_t n = 0;
  GPUSCOPE_RETURN_IF_ERROR(count(schema::KernelRow{}, n));
  KernelTable& k = t.kernels;
  reserveColumns(n, k.start_ns, k.end_ns, k.correlation_id, k.session, k.device, k.stream, k.config, k.graph_id);
  GPUSCOPE_RETURN_IF_ERROR(count(schema::ApiCallRow{}, n));
  ApiTable& a = t.api_calls;
  reserveColumns(n, a.start_ns, a.end_ns, a.correlation_id, a.thread_id, a.session, a.name, a.return_code);
  GPUSCOPE_RETURN_IF_ERROR(count(schema::MemoryEventRow{}, n));
  MemoryTable& m = t.memory;
  reserveColumns(n, m.time_ns, m.address, m.bytes, m.correlation_id, m.session, m.device, m.stream, m.op, m.kind,
                 m.pool);
  return Status::ok();
}

// Sorts every column of a table by its start column (stable, so equal starts keep recording order).
template <typename... Columns>
void sortByStart(std::vector<int64_t>& start, Columns&... columns) {
  if (std::is_sorted(start.begin(), start.end())) return;
  std::vector<uint32_t> order(start.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return start[a] < start[b]; });
  auto apply = [&](auto& column) {
    std::remove_reference_t<decltype(column)> sorted;
    sorted.reserve(column.size());
    for (uint32_t i : order) sorted.push_back(column[i]);
    column.swap(sorted);
  };
  apply(start);
  (apply(columns), ...);
}

// Numbers processes, devices, streams and kernel configurations densely, adding a placeholder (and a
// warning) for a reference the trace does not describe, so a damaged trace still analyses.
class Indexer {
 public:
  explicit Indexer(TraceData& trace) : trace_(trace) {}

  void addSession(const schema::SessionRow& row) {
    sessions_.emplace(row.id, static_cast<int32_t>(trace_.sessions.size()));
    trace_.sessions.push_back(row);
  }
  void addDevice(const schema::DeviceRow& row) {
    const int32_t session_index = session(row.session_id);
    if (devices_.count({session_index, row.device_id})) return;
    devices_.emplace(std::pair{session_index, row.device_id}, static_cast<int32_t>(trace_.devices.size()));
    trace_.devices.push_back(row);
  }
  void addConfig(const schema::KernelConfigRow& row) {
    configs_.emplace(row.id, static_cast<int32_t>(trace_.configs.size()));
    trace_.configs.push_back(row);
  }

  // Rows come in runs of one process, device and stream: the last answer is checked before any lookup.
  int32_t session(int64_t id) {
    if (last_session_.first == id && last_session_.second >= 0) return last_session_.second;
    if (auto it = sessions_.find(id); it != sessions_.end()) return (last_session_ = {id, it->second}).second;
    ++unknown_sessions_;
    schema::SessionRow row;
    row.id = id;
    addSession(row);
    return sessions_.at(id);
  }
  int32_t device(int32_t session_index, int64_t device_id) {
    const std::pair key{session_index, device_id};
    if (last_device_.first == key && last_device_.second >= 0) return last_device_.second;
    if (auto it = devices_.find(key); it != devices_.end()) return (last_device_ = {key, it->second}).second;
    ++unknown_devices_;
    schema::DeviceRow row;
    row.session_id = trace_.sessions[session_index].id;
    row.device_id = device_id;
    row.name = "unknown device";
    addDevice(row);
    return devices_.at({session_index, device_id});
  }
  int32_t stream(int32_t device_index, int64_t stream_id) {
    const std::pair key{device_index, stream_id};
    if (last_stream_.first == key && last_stream_.second >= 0) return last_stream_.second;
    auto [it, added] = streams_.try_emplace(key, static_cast<int32_t>(trace_.streams.size()));
    if (added) trace_.streams.push_back({device_index, stream_id});
    return (last_stream_ = {key, it->second}).second;
  }
  // The configuration that stands for a CUDA graph recorded as a whole (`record --cuda-graph-trace graph`): one
  // per graph, named as kernel_names.h's wholeGraphName, with an id no kernel_config row has.
  int32_t wholeGraph(int64_t graph_id) {
    const int64_t id = -1 - graph_id;
    if (auto it = configs_.find(id); it != configs_.end()) return it->second;
    schema::KernelConfigRow row;
    row.id = id;
    row.name.id = static_cast<int32_t>(trace_.strings.size());
    trace_.strings.push_back(wholeGraphName(graph_id));
    addConfig(row);
    return configs_.at(id);
  }

  int32_t config(int64_t id) {
    if (auto it = configs_.find(id); it != configs_.end()) return it->second;
    ++unknown_configs_;
    schema::KernelConfigRow row;
    row.id = id;
    addConfig(row);
    return configs_.at(id);
  }

  void reportUnknown() const {
    auto warn = [&](int64_t n, const char* what) {
      if (n > 0) trace_.load_warnings.push_back(std::to_string(n) + " " + what + " not described by the trace");
    };
    warn(unknown_sessions_, "process ids referenced by events but");
    warn(unknown_devices_, "devices referenced by events but");
    warn(unknown_configs_, "kernel configurations referenced by kernels but");
  }

 private:
  TraceData& trace_;
  std::unordered_map<int64_t, int32_t> sessions_;
  std::map<std::pair<int32_t, int64_t>, int32_t> devices_;
  std::map<std::pair<int32_t, int64_t>, int32_t> streams_;
  std::unordered_map<int64_t, int32_t> configs_;
  std::pair<int64_t, int32_t> last_session_{0, -1};
  std::pair<std::pair<int32_t, int64_t>, int32_t> last_device_{{}, -1}, last_stream_{{}, -1};
  int64_t unknown_sessions_ = 0, unknown_devices_ = 0, unknown_configs_ = 0;
};

Status loadDescriptions(TraceReader& reader, TraceData& trace, Indexer& index) {
  Result<std::vector<std::string>> strings = reader.loadStrings();
  if (!strings) return strings.status();
  trace.strings = std::move(*strings);
  GPUSCOPE_RETURN_IF_ERROR(reader.forEach<schema::SessionRow>([&](const auto& r) {
    index.addSession(r);
    return true;
  }));
  GPUSCOPE_RETURN_IF_ERROR(reader.forEach<schema::DeviceRow>([&](const auto& r) {
    index.addDevice(r);
    return true;
  }));
  GPUSCOPE_RETURN_IF_ERROR(reader.forEach<schema::KernelConfigRow>([&](const auto& r) {
    index.addConfig(r);
    return true;
  }));
  GPUSCOPE_RETURN_IF_ERROR(reader.forEach<schema::CollectiveRow>([&](const auto& r) {
    trace.collectives.session.push_back(index.session(r.session_id));
    trace.collectives.rows.push_back(r);
    return true;
  }));
  Result<std::vector<schema::NvlinkRow>> nvlinks = reader.readAll<schema::NvlinkRow>();
  if (!nvlinks) return nvlinks.status();
  trace.nvlinks = std::move(*nvlinks);
  Result<std::vector<schema::EnvironmentRow>> environment = reader.readAll<schema::EnvironmentRow>();
  if (!environment) return environment.status();
  trace.environment = std::move(*environment);
  GPUSCOPE_RETURN_IF_ERROR(reader.forEach<schema::MemoryUsageRow>([&](schema::MemoryUsageRow r) {
    r.session_id = index.session(r.session_id);
    trace.memory_usage.push_back(std::move(r));
    return true;
  }));
  std::stable_sort(trace.memory_usage.begin(), trace.memory_usage.end(),
                   [](const auto& a, const auto& b) { return a.timestamp_ns < b.timestamp_ns; });
  GPUSCOPE_RETURN_IF_ERROR(reader.forEach<schema::UnifiedMemoryRow>([&](schema::UnifiedMemoryRow r) {
    r.session_id = index.session(r.session_id);
    trace.unified_memory.push_back(r);
    return true;
  }));
  std::stable_sort(trace.unified_memory.begin(), trace.unified_memory.end(),
                   [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  Result<std::vector<schema::DataQualityRow>> quality = reader.readAll<schema::DataQualityRow>();
  if (!quality) return quality.status();
  trace.data_quality = std::move(*quality);
  return Status::ok();
}

// GPU work is selected with these six columns first, in this order.
constexpr const char* kGpuWorkColumns = "session_id, device_id, stream_id, correlation_id, start_ns, end_ns";

void readGpuWork(const sqlite::Statement& s, Indexer& index, GpuWorkColumns& t) {
  const int32_t session = index.session(s.columnInt(0));
  const int32_t device = index.device(session, s.columnInt(1));
  t.session.push_back(session);
  t.device.push_back(device);
  t.stream.push_back(index.stream(device, s.columnInt(2)));
  t.correlation_id.push_back(s.columnInt(3));
  t.start_ns.push_back(s.columnInt(4));
  t.end_ns.push_back(s.columnInt(5));
}

Status loadKernels(TraceReader& reader, KernelTable& k, Indexer& index) {
  sqlite::Database& db = reader.database();
  GPUSCOPE_RETURN_IF_ERROR(
      forEachRow(db, std::string("SELECT ") + kGpuWorkColumns + ", config_id, graph_id FROM kernel ORDER BY id",
                 [&](sqlite::Statement& s) {
                   readGpuWork(s, index, k);
                   k.config.push_back(index.config(s.columnInt(6)));
                   k.graph_id.push_back(intOr(s, 7, kNone));
                 }));
  // A graph launch recorded as a whole is GPU work the way a kernel is, one that spans the graph's nodes; it joins
  // the kernels under a name of its own (kernel_names.h), so that busy time, idle time and steps count it.
  if (reader.absent("graph_launch")) return Status::ok();
  return forEachRow(db, std::string("SELECT ") + kGpuWorkColumns + ", graph_id FROM graph_launch ORDER BY id",
                    [&](sqlite::Statement& s) {
                      readGpuWork(s, index, k);
                      k.config.push_back(index.wholeGraph(s.columnInt(6)));
                      k.graph_id.push_back(s.columnInt(6));
                    });
}

Status loadCopies(sqlite::Database& db, CopyTable& c, Indexer& index) {
  return forEachRow(
      db, std::string("SELECT ") + kGpuWorkColumns + ", bytes, copy_kind, src_kind, dst_kind FROM memcpy ORDER BY id",
      [&](sqlite::Statement& s) {
        readGpuWork(s, index, c);
        c.bytes.push_back(s.columnInt(6));
        c.kind.push_back(static_cast<schema::CopyKind>(s.columnInt(7)));
        c.src_kind.push_back(static_cast<schema::MemoryKind>(s.columnInt(8)));
        c.dst_kind.push_back(static_cast<schema::MemoryKind>(s.columnInt(9)));
      });
}

Status loadMemsets(sqlite::Database& db, MemsetTable& m, Indexer& index) {
  return forEachRow(db, std::string("SELECT ") + kGpuWorkColumns + ", bytes FROM memset ORDER BY id",
                    [&](sqlite::Statement& s) {
                      readGpuWork(s, index, m);
                      m.bytes.push_back(s.columnInt(6));
                    });
}

// The host-side tables load on their own connection and thread; their process ids are kept raw and
// numbered afterwards, so the thread never touches the Indexer.
Status loadApiCalls(sqlite::Database& db, ApiTable& a, std::vector<int64_t>& sessions) {
  return forEachRow(
      db, "SELECT session_id, name, thread_id, start_ns, end_ns, correlation_id, return_code FROM api_call ORDER BY id",
      [&](sqlite::Statement& s) {
        sessions.push_back(s.columnInt(0));
        a.name.push_back(static_cast<int32_t>(intOr(s, 1, 0)));
        a.thread_id.push_back(s.columnInt(2));
        a.start_ns.push_back(s.columnInt(3));
        a.end_ns.push_back(s.columnInt(4));
        a.correlation_id.push_back(s.columnInt(5));
        a.return_code.push_back(static_cast<int32_t>(s.columnInt(6)));
      });
}

Status loadSyncs(sqlite::Database& db, SyncTable& y, std::vector<int64_t>& sessions) {
  return forEachRow(db, "SELECT session_id, kind, stream_id, start_ns, end_ns, correlation_id FROM sync ORDER BY id",
                    [&](sqlite::Statement& s) {
                      sessions.push_back(s.columnInt(0));
                      y.kind.push_back(static_cast<schema::SyncKind>(s.columnInt(1)));
                      y.stream_id.push_back(intOr(s, 2, kNone));
                      y.start_ns.push_back(s.columnInt(3));
                      y.end_ns.push_back(s.columnInt(4));
                      y.correlation_id.push_back(s.columnInt(5));
                    });
}

Status loadMemory(sqlite::Database& db, MemoryTable& m, Indexer& index) {
  return forEachRow(db,
                    "SELECT session_id, device_id, stream_id, correlation_id, timestamp_ns, op, memory_kind, address, "
                    "bytes, pool_address FROM memory_event ORDER BY id",
                    [&](sqlite::Statement& s) {
                      const int32_t session = index.session(s.columnInt(0));
                      const int32_t device = index.device(session, s.columnInt(1));
                      m.session.push_back(session);
                      m.device.push_back(device);
                      m.stream.push_back(s.isNull(2) ? kNone : index.stream(device, s.columnInt(2)));
                      m.correlation_id.push_back(intOr(s, 3, 0));
                      m.time_ns.push_back(s.columnInt(4));
                      m.op.push_back(static_cast<schema::MemoryOp>(s.columnInt(5)));
                      m.kind.push_back(static_cast<schema::MemoryKind>(s.columnInt(6)));
                      m.address.push_back(s.columnInt(7));
                      m.bytes.push_back(s.columnInt(8));
                      m.pool.push_back(intOr(s, 9, 0));
                    });
}

Status loadPools(sqlite::Database& db, PoolEventTable& p, Indexer& index) {
  return forEachRow(db,
                    "SELECT session_id, device_id, timestamp_ns, op, pool_address, size_bytes, utilized_bytes "
                    "FROM memory_pool_event ORDER BY id",
                    [&](sqlite::Statement& s) {
                      const int32_t session = index.session(s.columnInt(0));
                      p.session.push_back(session);
                      p.device.push_back(index.device(session, s.columnInt(1)));
                      p.time_ns.push_back(s.columnInt(2));
                      p.op.push_back(static_cast<schema::PoolOp>(s.columnInt(3)));
                      p.pool.push_back(s.columnInt(4));
                      p.reserved_bytes.push_back(s.columnInt(5));
                      p.used_bytes.push_back(intOr(s, 6, kNone));
                    });
}

// The PyTorch tables, in traces that have them (schema 2 on; empty unless recorded with --torch or imported).
Status loadAllocator(TraceReader& reader, TraceData& t, Indexer& index) {
  if (reader.absent("allocator_event")) return Status::ok();
  AllocatorTable& a = t.allocator;
  GPUSCOPE_RETURN_IF_ERROR(
      forEachRow(reader.database(),
                 "SELECT session_id, device_id, timestamp_ns, action, address, bytes FROM allocator_event "
                 "ORDER BY timestamp_ns, id",
                 [&](sqlite::Statement& s) {
                   a.session.push_back(index.session(s.columnInt(0)));
                   a.device.push_back(index.device(a.session.back(), s.columnInt(1)));
                   a.time_ns.push_back(s.columnInt(2));
                   a.action.push_back(static_cast<schema::AllocatorAction>(s.columnInt(3)));
                   a.address.push_back(s.columnInt(4));
                   a.bytes.push_back(s.columnInt(5));
                 }));
  TensorRoleTable& r = t.roles;
  return forEachRow(reader.database(),
                    "SELECT session_id, device_id, timestamp_ns, role, address, bytes, name FROM tensor_role "
                    "ORDER BY timestamp_ns, id",
                    [&](sqlite::Statement& s) {
                      r.session.push_back(index.session(s.columnInt(0)));
                      r.device.push_back(index.device(r.session.back(), s.columnInt(1)));
                      r.time_ns.push_back(s.columnInt(2));
                      r.role.push_back(static_cast<schema::TensorRole>(s.columnInt(3)));
                      r.address.push_back(s.columnInt(4));
                      r.bytes.push_back(s.columnInt(5));
                      r.name.push_back(static_cast<int32_t>(intOr(s, 6, 0)));
                    });
}

Status loadNvtx(sqlite::Database& db, NvtxTable& n, std::vector<int64_t>& sessions) {
  return forEachRow(db, "SELECT session_id, kind, domain, name, thread_id, start_ns, end_ns FROM nvtx ORDER BY id",
                    [&](sqlite::Statement& s) {
                      sessions.push_back(s.columnInt(0));
                      n.kind.push_back(static_cast<schema::NvtxKind>(s.columnInt(1)));
                      n.domain.push_back(static_cast<int32_t>(intOr(s, 2, 0)));
                      n.name.push_back(static_cast<int32_t>(intOr(s, 3, 0)));
                      n.thread_id.push_back(s.columnInt(4));
                      n.start_ns.push_back(s.columnInt(5));
                      n.end_ns.push_back(s.columnInt(6));
                    });
}

// An end before its start (a clock jump, a record flushed unfinished) becomes a zero-length event.
int64_t clampEnds(const std::vector<int64_t>& start, std::vector<int64_t>& end) {
  int64_t clamped = 0;
  for (size_t i = 0; i < start.size(); ++i) {
    if (end[i] < start[i]) {
      end[i] = start[i];
      ++clamped;
    }
  }
  return clamped;
}

// API calls by the names users know (formats/api_names.h). Names are rewritten once per string.
void dropApiVersionSuffixes(TraceData& t) {
  std::unordered_map<int32_t, int32_t> renamed;
  std::unordered_map<std::string, int32_t> by_text;
  for (int32_t& name : t.api_calls.name) {
    auto [it, added] = renamed.try_emplace(name, name);
    if (added) {
      const std::string& text = t.text(name);
      const std::string_view base = withoutVersionSuffix(text);
      if (base.size() != text.size()) {
        auto [known, fresh] = by_text.try_emplace(std::string(base), static_cast<int32_t>(t.strings.size()));
        if (fresh) t.strings.emplace_back(base);
        it->second = known->second;
      }
    }
    name = it->second;
  }
}

void sortAndRepair(TraceData& t) {
  int64_t clamped = clampEnds(t.kernels.start_ns, t.kernels.end_ns) + clampEnds(t.copies.start_ns, t.copies.end_ns) +
                    clampEnds(t.memsets.start_ns, t.memsets.end_ns) +
                    clampEnds(t.api_calls.start_ns, t.api_calls.end_ns) + clampEnds(t.syncs.start_ns, t.syncs.end_ns) +
                    clampEnds(t.nvtx.start_ns, t.nvtx.end_ns);
  if (clamped > 0) {
    t.load_warnings.push_back(std::to_string(clamped) +
                              " events ended before they started (clock jump or unfinished record); shown with zero "
                              "length");
  }
  KernelTable& k = t.kernels;
  sortByStart(k.start_ns, k.end_ns, k.correlation_id, k.session, k.device, k.stream, k.config, k.graph_id);
  CopyTable& c = t.copies;
  sortByStart(c.start_ns, c.end_ns, c.correlation_id, c.bytes, c.session, c.device, c.stream, c.kind, c.src_kind,
              c.dst_kind);
  MemsetTable& m = t.memsets;
  sortByStart(m.start_ns, m.end_ns, m.correlation_id, m.bytes, m.session, m.device, m.stream);
  ApiTable& a = t.api_calls;
  sortByStart(a.start_ns, a.end_ns, a.correlation_id, a.thread_id, a.session, a.name, a.return_code);
  SyncTable& y = t.syncs;
  sortByStart(y.start_ns, y.end_ns, y.correlation_id, y.stream_id, y.session, y.kind);
  MemoryTable& e = t.memory;
  sortByStart(e.time_ns, e.address, e.bytes, e.correlation_id, e.session, e.device, e.stream, e.op, e.kind, e.pool);
  PoolEventTable& p = t.pools;
  sortByStart(p.time_ns, p.pool, p.reserved_bytes, p.used_bytes, p.session, p.device, p.op);
  NvtxTable& n = t.nvtx;
  sortByStart(n.start_ns, n.end_ns, n.thread_id, n.session, n.name, n.domain, n.kind);
}

void findExtent(TraceData& t) {
  int64_t first = INT64_MAX, last = INT64_MIN;
  auto cover = [&](const std::vector<int64_t>& start, const std::vector<int64_t>& end) {
    if (start.empty()) return;
    first = std::min(first, start.front());  // sorted by start
    last = std::max(last, *std::max_element(end.begin(), end.end()));
  };
  cover(t.kernels.start_ns, t.kernels.end_ns);
  cover(t.copies.start_ns, t.copies.end_ns);
  cover(t.memsets.start_ns, t.memsets.end_ns);
  cover(t.api_calls.start_ns, t.api_calls.end_ns);
  cover(t.syncs.start_ns, t.syncs.end_ns);
  cover(t.nvtx.start_ns, t.nvtx.end_ns);
  cover(t.memory.time_ns, t.memory.time_ns);
  cover(t.allocator.time_ns, t.allocator.time_ns);
  if (first <= last) {
    t.start_ns_ = first;
    t.end_ns_ = last;
  }
}

}  // namespace

const std::string& TraceData::text(int32_t string_id) const { return stringOf(strings, schema::StringId{string_id}); }

std::string TraceData::environmentValue(int32_t session, std::string_view name) const {
  if (session < 0 || static_cast<size_t>(session) >= sessions.size()) return "";
  std::string value;  // the last row wins: NCCL's variables are read again when it starts
  for (const schema::EnvironmentRow& row : environment) {
    if (row.session_id == sessions[session].id && row.name == name) value = row.value;
  }
  return value;
}

std::string TraceData::deviceLabel(int32_t device) const {
  const schema::DeviceRow& d = devices[device];
  std::string label = "GPU " + std::to_string(d.device_id) + " (" + d.name + ")";
  if (sessions.size() > 1) {
    for (const schema::SessionRow& s : sessions) {
      if (s.id != d.session_id) continue;
      label += " of pid " + std::to_string(s.pid);
      if (s.rank) label += " (rank " + std::to_string(*s.rank) + ")";
    }
  }
  return label;
}

size_t TraceData::eventCount() const {
  return kernels.size() + copies.size() + memsets.size() + api_calls.size() + syncs.size() + memory.size() +
         allocator.size() + nvtx.size();
}

namespace {

struct RawSessions {
  std::vector<int64_t> api_calls, syncs, nvtx;
};

Status loadHostTables(const std::string& path, TraceData& t, RawSessions& raw) {
  Result<TraceReader> reader = TraceReader::open(path);
  if (!reader) return reader.status();
  sqlite::Database& db = reader->database();
  raw.api_calls.reserve(t.api_calls.start_ns.capacity());
  GPUSCOPE_RETURN_IF_ERROR(loadApiCalls(db, t.api_calls, raw.api_calls));
  GPUSCOPE_RETURN_IF_ERROR(loadSyncs(db, t.syncs, raw.syncs));
  return loadNvtx(db, t.nvtx, raw.nvtx);
}

// Marks each context's legacy default stream among the streams the GPU work used.
Status markLegacyDefaultStreams(TraceReader& reader, TraceData& t) {
  Result<std::vector<schema::ContextRow>> contexts = reader.readAll<schema::ContextRow>();
  if (!contexts) return contexts.status();
  for (const schema::ContextRow& c : *contexts) {
    if (!c.null_stream_id) continue;
    for (Stream& s : t.streams) {
      const schema::DeviceRow& d = t.devices[static_cast<size_t>(s.device)];
      if (d.session_id == c.session_id && d.device_id == c.device_id && s.stream_id == *c.null_stream_id)
        s.legacy_default = true;
    }
  }
  return Status::ok();
}

void numberSessions(const std::vector<int64_t>& raw, std::vector<int32_t>& column, Indexer& index) {
  column.reserve(raw.size());
  for (int64_t id : raw) column.push_back(index.session(id));
}

// Joins GPU work and allocations to the API calls that issued them, once, for every analysis to use.
void linkLaunches(TraceData& t) {
  const LaunchIndex launches(t);
  for (GpuWorkColumns* work : std::initializer_list<GpuWorkColumns*>{&t.kernels, &t.copies, &t.memsets}) {
    work->launch_call.resize(work->size());
    size_t hint = 0;
    for (size_t i = 0; i < work->size(); ++i) {
      work->launch_call[i] = launches.callOf(work->session[i], work->correlation_id[i], hint);
    }
  }
  MemoryTable& m = t.memory;
  m.call.resize(m.size());
  size_t hint = 0;
  for (size_t i = 0; i < m.size(); ++i) m.call[i] = launches.callOf(m.session[i], m.correlation_id[i], hint);
}

}  // namespace

Result<TraceData> loadTrace(const std::string& path) {
  Result<TraceReader> reader = TraceReader::open(path);
  if (!reader) return reader.status();
  TraceData trace;
  trace.path = path;
  Indexer index(trace);
  sqlite::Database& db = reader->database();
  Status status = loadDescriptions(*reader, trace, index);
  if (status) status = reserveTables(*reader, trace);
  if (!status) return status;
  // Two threads: the GPU tables here, the host tables on a second connection (a trace is mostly these two).
  RawSessions raw;
  Status host_status;
  std::thread host([&] { host_status = loadHostTables(path, trace, raw); });
  status = loadKernels(*reader, trace.kernels, index);
  if (status) status = loadCopies(db, trace.copies, index);
  if (status) status = loadMemsets(db, trace.memsets, index);
  if (status) status = loadMemory(db, trace.memory, index);
  if (status) status = loadPools(db, trace.pools, index);
  if (status) status = loadAllocator(*reader, trace, index);
  if (status) status = markLegacyDefaultStreams(*reader, trace);
  host.join();
  if (!status) return status;
  if (!host_status) return host_status;
  numberSessions(raw.api_calls, trace.api_calls.session, index);
  numberSessions(raw.syncs, trace.syncs.session, index);
  numberSessions(raw.nvtx, trace.nvtx.session, index);
  index.reportUnknown();
  dropApiVersionSuffixes(trace);
  sortAndRepair(trace);
  linkLaunches(trace);
  findExtent(trace);
  return trace;
}

}  // namespace gpuscope::analysis
