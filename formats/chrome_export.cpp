#include "formats/chrome_export.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "formats/api_names.h"
#include "formats/atomic_file.h"
#include "formats/memory_replay.h"
#include "formats/nccl_ops.h"

namespace gpuscope {

namespace {

using namespace schema;

std::string_view copyKindLabel(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kPageable: return "Pageable";
    case MemoryKind::kPinned: return "Pinned";
    case MemoryKind::kDevice: return "Device";
    case MemoryKind::kArray: return "Array";
    case MemoryKind::kManaged: return "Managed";
    default: return "Unknown";
  }
}

std::string_view syncName(SyncKind kind) {
  switch (kind) {
    case SyncKind::kEventSynchronize: return "Event Sync";
    case SyncKind::kStreamWaitEvent: return "Stream Wait Event";
    case SyncKind::kStreamSynchronize: return "Stream Sync";
    case SyncKind::kContextSynchronize: return "Context Sync";
    default: return "Sync";
  }
}

// What an NCCL kernel's name says of its collective, in the words of torch.profiler's "Collective name" and
// "dtype" args ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL" -> allreduce, BFloat16); "" where it says nothing.
struct Collective {
  std::string name, dtype;
};

Collective collectiveOf(std::string_view kernel) {
  Collective c;
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    if (!kernel.starts_with(prefix)) continue;
    std::string_view head = kernel.substr(prefix.size());
    head = head.substr(0, head.find('('));  // the words before the argument list, '_' between them
    std::vector<std::string_view> parts;
    for (size_t start = 0; start <= head.size();) {
      const size_t end = std::min(head.find('_', start), head.size());
      parts.push_back(head.substr(start, end - start));
      start = end + 1;
    }
    static const std::map<std::string_view, std::string_view> kNames = {
        {"AllReduce", "allreduce"}, {"AllGather", "allgather"}, {"ReduceScatter", "reduce_scatter"},
        {"Broadcast", "broadcast"}, {"Reduce", "reduce"},       {"SendRecv", "send_recv"},
        {"AllToAll", "all_to_all"}};
    static const std::map<std::string_view, std::string_view> kTypes = {
        {"f32", "Float"}, {"f16", "Half"}, {"bf16", "BFloat16"}, {"f64", "Double"},
        {"i32", "Int"},   {"i8", "Char"},  {"u8", "Byte"},       {"i64", "Long"}};
    if (auto n = kNames.find(parts[0]); n != kNames.end()) c.name = n->second;
    for (std::string_view p : parts) {
      if (auto t = kTypes.find(p); t != kTypes.end()) c.dtype = t->second;
    }
  }
  return c;
}

// The API call that issued a GPU operation, joined in by correlation id; absent when not recorded.
struct Launch {
  bool found = false;
  int64_t start_ns = 0;
  int64_t thread_id = 0;
};

// A GPU operation by when its thread launched it: what an NVTX range of that thread put on the GPU.
struct Launched {
  int64_t launch_ns, start_ns, end_ns, device_id, stream_id;
};

class ChromeExporter {
 public:
  ChromeExporter(TraceReader& reader, JsonWriter& json, const ChromeExportOptions& options)
      : reader_(reader), json_(json), options_(options) {}

  Status run();

 private:
  Status loadMetadata();
  Status computeBaseTime();
  void writeHeader();
  void writeDeviceProperties();
  Status writeMetadataEvents();
  template <typename Row, typename Emit>
  Status writeGpuOps(Emit emit);
  void writeKernel(const KernelRow& k, const Launch& launch);
  void writeMemcpy(const MemcpyRow& m, const Launch& launch);
  void writeMemset(const MemsetRow& m, const Launch& launch);
  template <typename Row>
  void writeTransfer(const Row& m, std::string_view cat, std::string_view name, const Launch& launch);
  void writeGraphLaunch(const GraphLaunchRow& g, const Launch& launch);
  Status writeApiCalls();
  Status writeSyncs();
  Status writeNvtx();
  void writeGpuAnnotation(const NvtxRow& range, const std::string& name);
  Status writeOverheads();
  Status writeMemoryCounters();
  Status writeTensorCounters();
  Status writeUsageCounters();
  Status writeUnifiedMemory();
  Status writeDataQuality();

  // A metadata event: a process's or (with tid) a thread's name or sort index.
  template <typename Value>
  void meta(std::string_view what, int64_t pid, std::optional<int64_t> tid, std::string_view key, const Value& value);
  void beginEvent(std::string_view ph, std::string_view cat, std::string_view name, int64_t pid, int64_t tid,
                  int64_t ts_ns);
  void beginComplete(std::string_view cat, std::string_view name, int64_t pid, int64_t tid, int64_t start_ns,
                     int64_t end_ns);
  void writeFlow(int64_t session_id, const Launch& launch, int64_t gpu_pid, int64_t stream, int64_t gpu_start_ns);
  int64_t cpuPid(int64_t session_id) const;
  int64_t gpuPid(int64_t session_id, int64_t device_id) const;
  int64_t deviceOfContext(int64_t session_id, int64_t context_id) const;
  // Whether a row of this process is exported (all are, unless options say one process).
  bool exported(int64_t session_id) const { return !options_.session_id || *options_.session_id == session_id; }
  int64_t correlation(int64_t id) const { return id + options_.correlation_offset; }
  void writeSteps();
  void advance();

  TraceReader& reader_;
  JsonWriter& json_;
  const ChromeExportOptions& options_;
  std::vector<std::string> strings_;
  std::map<int64_t, SessionRow> sessions_;
  std::vector<DeviceRow> devices_;
  std::map<std::pair<int64_t, int64_t>, int64_t> context_device_;
  std::vector<ThreadRow> threads_;
  std::unordered_map<int64_t, KernelConfigRow> kernel_configs_;
  // What NCCL's profiler plugin said each NCCL kernel carried, by (session, correlation id): torch.profiler's args.
  struct CollectiveArgs {
    std::string_view operation, datatype;
    int64_t in_elements = 0, out_elements = 0, group_size = 0, communicator = 0;
    bool mixed = false;  // a group of several kinds of operation in one kernel: no sizes given
  };
  std::map<std::pair<int64_t, int64_t>, CollectiveArgs> collective_args_;
  // Each (session, thread)'s GPU operations in the order it launched them, for the ranges' GPU annotations; kept
  // only where the trace has NVTX rows (a CUDA C++ program's millions of kernels and no range need none).
  bool has_ranges_ = false;
  std::map<std::pair<int64_t, int64_t>, std::vector<Launched>> launched_;
  Status loadCollectives();
  std::vector<DataQualityRow> quality_;
  int64_t base_ns_ = 0;
  int64_t done_ = 0;
  int64_t total_ = 0;
  int64_t flows_ = 0;
};

Status ChromeExporter::run() {
  GPUSCOPE_RETURN_IF_ERROR(loadMetadata());
  GPUSCOPE_RETURN_IF_ERROR(computeBaseTime());
  std::apply(
      [&](auto... rows) {
        auto add = [&](Result<int64_t> n) { total_ += n ? *n : 0; };
        (add(reader_.approximateCount<decltype(rows)>()), ...);
      },
      EventRows{});
  Result<int64_t> ranges = reader_.approximateCount<NvtxRow>();
  has_ranges_ = ranges && *ranges > 0;
  writeHeader();
  json_.key("traceEvents").beginArray(/*one_item_per_line=*/true);
  GPUSCOPE_RETURN_IF_ERROR(writeMetadataEvents());
  GPUSCOPE_RETURN_IF_ERROR(writeGpuOps<KernelRow>([&](const KernelRow& r, const Launch& l) { writeKernel(r, l); }));
  GPUSCOPE_RETURN_IF_ERROR(writeGpuOps<MemcpyRow>([&](const MemcpyRow& r, const Launch& l) { writeMemcpy(r, l); }));
  GPUSCOPE_RETURN_IF_ERROR(writeGpuOps<MemsetRow>([&](const MemsetRow& r, const Launch& l) { writeMemset(r, l); }));
  GPUSCOPE_RETURN_IF_ERROR(
      writeGpuOps<GraphLaunchRow>([&](const GraphLaunchRow& r, const Launch& l) { writeGraphLaunch(r, l); }));
  for (auto& [thread, ops] : launched_) {
    std::sort(ops.begin(), ops.end(), [](const Launched& a, const Launched& b) { return a.launch_ns < b.launch_ns; });
  }
  GPUSCOPE_RETURN_IF_ERROR(writeApiCalls());
  GPUSCOPE_RETURN_IF_ERROR(writeSyncs());
  GPUSCOPE_RETURN_IF_ERROR(writeNvtx());
  writeSteps();
  GPUSCOPE_RETURN_IF_ERROR(writeOverheads());
  GPUSCOPE_RETURN_IF_ERROR(writeMemoryCounters());
  GPUSCOPE_RETURN_IF_ERROR(writeTensorCounters());
  GPUSCOPE_RETURN_IF_ERROR(writeUsageCounters());
  GPUSCOPE_RETURN_IF_ERROR(writeUnifiedMemory());
  json_.endArray();
  GPUSCOPE_RETURN_IF_ERROR(writeDataQuality());
  json_.endObject();
  if (options_.progress) options_.progress(total_, total_);
  return Status::ok();
}

Status ChromeExporter::loadMetadata() {
  Result<std::vector<std::string>> strings = reader_.loadStrings();
  if (!strings) return strings.status();
  strings_ = std::move(*strings);
  Result<std::vector<SessionRow>> sessions = reader_.readAll<SessionRow>();
  if (!sessions) return sessions.status();
  for (SessionRow& s : *sessions) {
    if (exported(s.id)) sessions_[s.id] = std::move(s);
  }
  if (sessions_.empty()) return Status(ErrorKind::kNotFound, reader_.path() + ": no such process in the trace");
  Result<std::vector<DeviceRow>> devices = reader_.readAll<DeviceRow>();
  if (!devices) return devices.status();
  devices_ = std::move(*devices);
  std::erase_if(devices_, [&](const DeviceRow& d) { return !exported(d.session_id); });
  Result<std::vector<ContextRow>> contexts = reader_.readAll<ContextRow>();
  if (!contexts) return contexts.status();
  for (const ContextRow& c : *contexts) context_device_[{c.session_id, c.context_id}] = c.device_id;
  Result<std::vector<KernelConfigRow>> configs = reader_.readAll<KernelConfigRow>();
  if (!configs) return configs.status();
  for (const KernelConfigRow& c : *configs) kernel_configs_[c.id] = c;
  Result<std::vector<ThreadRow>> threads = reader_.readAll<ThreadRow>();
  if (!threads) return threads.status();
  threads_ = std::move(*threads);
  std::erase_if(threads_, [&](const ThreadRow& t) { return !exported(t.session_id); });
  Result<std::vector<DataQualityRow>> quality = reader_.readAll<DataQualityRow>();
  if (!quality) return quality.status();
  quality_ = std::move(*quality);
  std::erase_if(quality_, [&](const DataQualityRow& q) { return q.session_id && !exported(*q.session_id); });
  return loadCollectives();
}

// Each NCCL kernel's collective rows (the plugin's), joined to its launch as the analyzer joins them, summed into
// the sizes torch.profiler writes: what each rank sends in and receives out, in elements.
Status ChromeExporter::loadCollectives() {
  Result<std::vector<CollectiveRow>> rows = reader_.readAll<CollectiveRow>();
  if (!rows) return rows.status();
  if (rows->empty()) return Status::ok();
  std::vector<nccl::Launch> launches;
  std::vector<std::pair<int64_t, int64_t>> kernel_of_launch;  // (session, correlation)
  Result<sqlite::Statement> stmt = reader_.database().prepare(
      "SELECT k.session_id, k.correlation_id, a.thread_id, a.start_ns, a.end_ns FROM kernel k "
      "JOIN kernel_config c ON c.id = k.config_id JOIN string s ON s.id = c.name "
      "JOIN api_call a ON a.session_id = k.session_id AND a.correlation_id = k.correlation_id "
      "WHERE s.value LIKE 'nccl%'");
  if (!stmt) return stmt.status();
  for (Result<bool> more = stmt->step();; more = stmt->step()) {
    if (!more) return more.status();
    if (!*more) break;
    launches.push_back(
        {stmt->columnInt(0), stmt->columnInt(2), stmt->columnInt(3), stmt->columnInt(4), kernel_of_launch.size()});
    kernel_of_launch.emplace_back(stmt->columnInt(0), stmt->columnInt(1));
  }
  std::vector<nccl::Handed> handed;
  for (const CollectiveRow& r : *rows) handed.push_back({r.session_id, r.thread_id, r.timestamp_ns});
  const std::vector<size_t> launch = nccl::launchOfEach(std::move(launches), handed);
  for (size_t i = 0; i < rows->size(); ++i) {
    const CollectiveRow& r = (*rows)[i];
    if (launch[i] == nccl::kNoLaunch) continue;
    const std::string_view op = stringOf(strings_, r.operation);
    auto [it, added] = collective_args_.try_emplace(kernel_of_launch[launch[i]]);
    CollectiveArgs& a = it->second;
    if (added) a.operation = op;
    a.mixed |= a.operation != op;
    a.datatype = nccl::torchTypeOfDatatype(stringOf(strings_, r.datatype));
    a.group_size = r.communicator_ranks;
    a.communicator = r.communicator;
    const nccl::Elements e = nccl::elementsOf(op, r.count, r.communicator_ranks);
    a.in_elements += e.in;
    a.out_elements += e.out;
  }
  return Status::ok();
}

// Timestamps are written relative to the earliest one: absolute nanosecond times do not fit a double's
// 53-bit mantissa as microseconds with three decimals, and viewers parse ts as a double.
Status ChromeExporter::computeBaseTime() {
  std::optional<int64_t> base;
  auto consider = [&](std::optional<int64_t> t) {
    if (t && *t > 0) base = base ? std::min(*base, *t) : *t;
  };
  for (const auto& [id, s] : sessions_) consider(s.start_ns);
  for (const char* sql : {"SELECT min(start_ns) FROM kernel", "SELECT min(start_ns) FROM memcpy",
                          "SELECT min(start_ns) FROM memset", "SELECT min(start_ns) FROM api_call",
                          "SELECT min(start_ns) FROM nvtx", "SELECT min(timestamp_ns) FROM memory_event"}) {
    Result<sqlite::Statement> stmt = reader_.database().prepare(sql);
    if (!stmt) return stmt.status();
    Result<bool> row = stmt->step();
    if (!row) return row.status();
    if (*row && !stmt->isNull(0)) consider(stmt->columnInt(0));
  }
  base_ns_ = base.value_or(0);
  return Status::ok();
}

void ChromeExporter::writeHeader() {
  json_.beginObject();
  json_.field("schemaVersion", 1);
  json_.field("traceName", reader_.path());
  json_.field("displayTimeUnit", "ms");
  // Kineto's convention: baseTimeNanoseconds + ts (µs) is the wall-clock time of an event.
  json_.field("baseTimeNanoseconds", base_ns_);
  json_.field("exporter", "gpuscope");
  if (sessions_.size() == 1) {
    const SessionRow& s = sessions_.begin()->second;
    if (s.cuda_driver_version) json_.field("cuda_driver_version", *s.cuda_driver_version);
    if (s.cuda_runtime_version) json_.field("cuda_runtime_version", *s.cuda_runtime_version);
    if (s.cupti_version) json_.field("cupti_version", *s.cupti_version);
    // Spaced as torch writes it: HTA finds a file's rank with a pattern made for torch's spacing.
    if (s.rank) {
      json_.key("distributedInfo")
          .rawValue("{\"rank\": " + std::to_string(*s.rank) +
                    (s.world_size ? ", \"world_size\": " + std::to_string(*s.world_size) : "") + "}");
    }
  }
  writeDeviceProperties();
}

void ChromeExporter::writeDeviceProperties() {
  json_.key("deviceProperties").beginArray();
  std::set<int64_t> seen;
  for (const DeviceRow& d : devices_) {
    if (!seen.insert(d.device_id).second) continue;  // one entry per ordinal, as Kineto writes
    json_.beginObject()
        .field("id", d.device_id)
        .field("name", d.name)
        .field("totalGlobalMem", d.global_memory_bytes)
        .field("computeMajor", d.compute_major)
        .field("computeMinor", d.compute_minor)
        .field("maxThreadsPerBlock", d.max_threads_per_block)
        .field("maxThreadsPerMultiprocessor", d.max_threads_per_sm)
        .field("regsPerBlock", d.registers_per_block)
        .field("regsPerMultiprocessor", d.registers_per_sm)
        .field("warpSize", d.warp_size)
        .field("sharedMemPerBlock", d.shared_memory_per_block_bytes)
        .field("sharedMemPerMultiprocessor", d.shared_memory_per_sm_bytes)
        .field("numSms", d.sm_count);
    if (d.shared_memory_per_block_optin_bytes)
      json_.field("sharedMemPerBlockOptin", *d.shared_memory_per_block_optin_bytes);
    json_.endObject();
  }
  json_.endArray();
}

int64_t ChromeExporter::cpuPid(int64_t session_id) const {
  auto it = sessions_.find(session_id);
  return it != sessions_.end() ? it->second.pid : session_id;
}

// GPUs get the device ordinal as pid, as in Kineto's traces; when several processes share the file each
// process gets its own block of GPU pids so their devices do not merge.
int64_t ChromeExporter::gpuPid(int64_t session_id, int64_t device_id) const {
  if (sessions_.size() <= 1) return device_id;
  return 1'000'000'000 + cpuPid(session_id) * 100 + device_id;
}

int64_t ChromeExporter::deviceOfContext(int64_t session_id, int64_t context_id) const {
  auto it = context_device_.find({session_id, context_id});
  return it != context_device_.end() ? it->second : 0;
}

void ChromeExporter::advance() {
  if (++done_ % 65536 == 0 && options_.progress) options_.progress(done_, std::max(done_, total_));
}

void ChromeExporter::beginEvent(std::string_view ph, std::string_view cat, std::string_view name, int64_t pid,
                                int64_t tid, int64_t ts_ns) {
  json_.beginObject().field("ph", ph).field("cat", cat).field("name", name).field("pid", pid).field("tid", tid);
  json_.key("ts").microseconds(ts_ns - base_ns_);
}

void ChromeExporter::beginComplete(std::string_view cat, std::string_view name, int64_t pid, int64_t tid,
                                   int64_t start_ns, int64_t end_ns) {
  beginEvent("X", cat, name, pid, tid, start_ns);
  // A record flushed before it finished has no end: show it with zero length rather than a negative one.
  json_.key("dur").microseconds(std::max<int64_t>(0, end_ns - start_ns));
}

// Kineto's "ac2g" flow: an arrow from the API call to the GPU work it issued. Each GPU operation gets its
// own flow id: the kernels of one cudaGraphLaunch share a correlation id, and a flow ends at its first "f".
void ChromeExporter::writeFlow(int64_t session_id, const Launch& launch, int64_t gpu_pid, int64_t stream,
                               int64_t gpu_start_ns) {
  if (!launch.found) return;
  const int64_t id = ++flows_;
  beginEvent("s", "ac2g", "ac2g", cpuPid(session_id), launch.thread_id, launch.start_ns);
  json_.field("id", id).endObject();
  beginEvent("f", "ac2g", "ac2g", gpu_pid, stream, gpu_start_ns);
  json_.field("id", id).field("bp", "e").endObject();
}

template <typename Value>
void ChromeExporter::meta(std::string_view what, int64_t pid, std::optional<int64_t> tid, std::string_view key,
                          const Value& value) {
  json_.beginObject().field("ph", "M").field("name", what).field("pid", pid);
  if (tid) json_.field("tid", *tid);
  json_.key("args").beginObject().field(key, value).endObject().endObject();
}

Status ChromeExporter::writeMetadataEvents() {
  for (const auto& [id, s] : sessions_) {
    std::string program = s.command_line.substr(0, s.command_line.find(' '));
    program = program.substr(program.rfind('/') + 1);
    std::string label = program + " (pid " + std::to_string(s.pid) + ")";
    if (s.rank) label += " rank " + std::to_string(*s.rank);
    meta("process_name", s.pid, std::nullopt, "name", label);
    meta("process_sort_index", s.pid, std::nullopt, "sort_index", s.pid);
  }
  for (const ThreadRow& t : threads_) meta("thread_name", cpuPid(t.session_id), t.thread_id, "name", t.name);

  // One GPU "process" per device and one "thread" per stream, for every stream that did work.
  Result<sqlite::Statement> lanes = reader_.database().prepare(
      "SELECT session_id, device_id, stream_id FROM kernel UNION SELECT session_id, device_id, stream_id FROM memcpy "
      "UNION SELECT session_id, device_id, stream_id FROM memset "
      "UNION SELECT session_id, device_id, stream_id FROM graph_launch ORDER BY 1, 2, 3");
  if (!lanes) return lanes.status();
  std::set<std::pair<int64_t, int64_t>> named_devices;
  for (const DeviceRow& d : devices_) {
    const int64_t pid = gpuPid(d.session_id, d.device_id);
    std::string label = "GPU " + std::to_string(d.device_id) + ": " + d.name;
    if (sessions_.size() > 1) label += " (pid " + std::to_string(cpuPid(d.session_id)) + ")";
    meta("process_name", pid, std::nullopt, "name", label);
    meta("process_sort_index", pid, std::nullopt, "sort_index", pid);
    named_devices.insert({d.session_id, d.device_id});
  }
  while (true) {
    Result<bool> row = lanes->step();
    if (!row) return row.status();
    if (!*row) break;
    const int64_t session = lanes->columnInt(0), device = lanes->columnInt(1), stream = lanes->columnInt(2);
    if (!exported(session)) continue;
    const int64_t pid = gpuPid(session, device);
    if (named_devices.insert({session, device}).second) {
      meta("process_name", pid, std::nullopt, "name", "GPU " + std::to_string(device));
    }
    meta("thread_name", pid, stream, "name", "stream " + std::to_string(stream));
  }
  return Status::ok();
}

// Streams Row's table joined with the API call that issued each row (by correlation id), in row order.
// Without an index on api_call SQLite builds a transient one for the statement, so a trace cut short by a
// crash (no indexes yet) still exports in n·log n.
template <typename Row, typename Emit>
Status ChromeExporter::writeGpuOps(Emit emit) {
  const TableInfo info = tableInfo<Row>();
  const std::string sql = "SELECT " + columnList(info, "t") + ", a.start_ns, a.thread_id, t.id FROM " +
                          std::string(info.name) +
                          " t LEFT JOIN api_call a ON a.session_id = t.session_id AND "
                          "a.correlation_id = t.correlation_id ORDER BY t.id";
  Result<sqlite::Statement> stmt = reader_.database().prepare(sql);
  if (!stmt) return stmt.status();
  const int n = static_cast<int>(info.columns.size());
  Row row;
  int64_t last_id = -1;
  while (true) {
    Result<bool> more = stmt->step();
    if (!more) return more.status();
    if (!*more) return Status::ok();
    const int64_t id = stmt->columnInt(n + 2);
    if (id == last_id) continue;  // a damaged trace with two API calls of one correlation id
    last_id = id;
    readRow(*stmt, row);
    if (!exported(row.session_id)) continue;
    Launch launch;
    if (!stmt->isNull(n)) launch = {true, stmt->columnInt(n), stmt->columnInt(n + 1)};
    emit(row, launch);
    if (launch.found && has_ranges_) {
      launched_[{row.session_id, launch.thread_id}].push_back(
          {launch.start_ns, row.start_ns, row.end_ns, row.device_id, row.stream_id});
    }
    advance();
  }
}

void ChromeExporter::writeKernel(const KernelRow& k, const Launch& launch) {
  static const KernelConfigRow kUnknownConfig{};
  const auto config_it = kernel_configs_.find(k.config_id);
  const KernelConfigRow& c = config_it != kernel_configs_.end() ? config_it->second : kUnknownConfig;
  const int64_t pid = gpuPid(k.session_id, k.device_id);
  beginComplete("kernel", stringOf(strings_, c.name), pid, k.stream_id, k.start_ns, k.end_ns);
  json_.key("args").beginObject();
  json_.field("correlation", correlation(k.correlation_id))
      .field("device", k.device_id)
      .field("context", k.context_id)
      .field("stream", k.stream_id)
      .field("registers per thread", c.registers_per_thread)
      .field("shared memory", c.static_shared_bytes + c.dynamic_shared_bytes);
  json_.key("grid").beginArray().value(c.grid_x).value(c.grid_y).value(c.grid_z).endArray();
  json_.key("block").beginArray().value(c.block_x).value(c.block_y).value(c.block_z).endArray();
  if (k.queued_ns) json_.field("queued", *k.queued_ns - base_ns_);
  const auto args = collective_args_.find({k.session_id, k.correlation_id});
  const bool sized = args != collective_args_.end() && !args->second.mixed;
  // The kernel's name says what it is; NCCL's own description where the name does not (a newer NCCL's names).
  const Collective coll = collectiveOf(stringOf(strings_, c.name));
  const std::string_view name = !coll.name.empty() ? std::string_view(coll.name)
                                : sized            ? nccl::torchNameOfOperation(args->second.operation)
                                                   : std::string_view{};
  const std::string_view dtype = !coll.dtype.empty() ? std::string_view(coll.dtype)
                                 : sized             ? args->second.datatype
                                                     : std::string_view{};
  if (!name.empty()) json_.field("Collective name", name);
  if (!name.empty() && !dtype.empty()) json_.field("dtype", dtype);
  if (sized) {
    const CollectiveArgs& a = args->second;
    json_.field("In msg nelems", a.in_elements)
        .field("Out msg nelems", a.out_elements)
        .field("Group size", a.group_size)
        .field("Process Group Name", std::to_string(a.communicator));
  }
  if (k.graph_id) json_.field("graph id", *k.graph_id).field("graph node id", k.graph_node_id.value_or(0));
  json_.endObject().endObject();
  writeFlow(k.session_id, launch, pid, k.stream_id, k.start_ns);
}

// Copies and sets: one complete event with Kineto's arguments, and the flow from the API call.
template <typename Row>
void ChromeExporter::writeTransfer(const Row& m, std::string_view cat, std::string_view name, const Launch& launch) {
  const int64_t pid = gpuPid(m.session_id, m.device_id);
  beginComplete(cat, name, pid, m.stream_id, m.start_ns, m.end_ns);
  json_.key("args").beginObject();
  json_.field("correlation", correlation(m.correlation_id))
      .field("device", m.device_id)
      .field("context", m.context_id)
      .field("stream", m.stream_id)
      .field("bytes", m.bytes);
  // bytes per ns is GB/s (1e9 bytes per second), the unit Kineto reports.
  if (m.end_ns > m.start_ns) {
    json_.field("memory bandwidth (GB/s)", static_cast<double>(m.bytes) / static_cast<double>(m.end_ns - m.start_ns));
  }
  json_.endObject().endObject();
  writeFlow(m.session_id, launch, pid, m.stream_id, m.start_ns);
}

void ChromeExporter::writeMemcpy(const MemcpyRow& m, const Launch& launch) {
  const std::string name = "Memcpy " + std::string(enumName(m.copy_kind)) + " (" +
                           std::string(copyKindLabel(m.src_kind)) + " -> " + std::string(copyKindLabel(m.dst_kind)) +
                           ")";
  writeTransfer(m, "gpu_memcpy", name, launch);
}

void ChromeExporter::writeMemset(const MemsetRow& m, const Launch& launch) {
  writeTransfer(m, "gpu_memset", "Memset (" + std::string(copyKindLabel(m.memory_kind)) + ")", launch);
}

void ChromeExporter::writeGraphLaunch(const GraphLaunchRow& g, const Launch& launch) {
  const int64_t pid = gpuPid(g.session_id, g.device_id);
  beginComplete("cuda_graph", "CUDA graph " + std::to_string(g.graph_id), pid, g.stream_id, g.start_ns, g.end_ns);
  json_.key("args").beginObject();
  json_.field("correlation", correlation(g.correlation_id)).field("graph id", g.graph_id).field("stream", g.stream_id);
  json_.endObject().endObject();
  writeFlow(g.session_id, launch, pid, g.stream_id, g.start_ns);
}

Status ChromeExporter::writeApiCalls() {
  return reader_.forEach<ApiCallRow>([&](const ApiCallRow& a) {
    advance();
    if (!exported(a.session_id)) return true;
    const std::string_view cat = a.api == ApiKind::kDriver ? "cuda_driver" : "cuda_runtime";
    beginComplete(cat, withoutVersionSuffix(stringOf(strings_, a.name)), cpuPid(a.session_id), a.thread_id, a.start_ns,
                  a.end_ns);
    json_.key("args").beginObject().field("cbid", a.cbid).field("correlation", correlation(a.correlation_id));
    if (a.return_code != 0) json_.field("return code", a.return_code);
    json_.endObject().endObject();
    return true;
  });
}

// Waits are drawn on the GPU lane they waited for, as Kineto draws its cuda_sync events.
Status ChromeExporter::writeSyncs() {
  return reader_.forEach<SyncRow>([&](const SyncRow& s) {
    if (!exported(s.session_id)) {
      advance();
      return true;
    }
    const int64_t pid = gpuPid(s.session_id, deviceOfContext(s.session_id, s.context_id));
    beginComplete("cuda_sync", syncName(s.kind), pid, s.stream_id.value_or(0), s.start_ns, s.end_ns);
    json_.key("args").beginObject().field("correlation", correlation(s.correlation_id)).field("context", s.context_id);
    if (s.stream_id) json_.field("stream", *s.stream_id);
    if (s.event_id) json_.field("event", *s.event_id);
    json_.endObject().endObject();
    advance();
    return true;
  });
}

Status ChromeExporter::writeNvtx() {
  return reader_.forEach<NvtxRow>([&](const NvtxRow& n) {
    if (!exported(n.session_id)) {
      advance();
      return true;
    }
    const std::string& name = stringOf(strings_, n.name);
    if (n.kind == NvtxKind::kMark) {
      beginEvent("i", "user_annotation", name, cpuPid(n.session_id), n.thread_id, n.start_ns);
      json_.field("s", "t");
    } else {
      beginComplete("user_annotation", name, cpuPid(n.session_id), n.thread_id, n.start_ns, n.end_ns);
    }
    if (!n.domain.empty()) json_.key("args").beginObject().field("domain", stringOf(strings_, n.domain)).endObject();
    json_.endObject();
    if (n.kind != NvtxKind::kMark) writeGpuAnnotation(n, name);
    advance();
    return true;
  });
}

// A range's span on the GPU, as torch.profiler writes its record_function ranges there (HTA's annotation filters
// read them): on each stream, from the first to the last end of the operations the range's thread launched inside
// it.
void ChromeExporter::writeGpuAnnotation(const NvtxRow& range, const std::string& name) {
  const auto ops = launched_.find({range.session_id, range.thread_id});
  if (ops == launched_.end()) return;
  const auto by_launch = [](const Launched& l, int64_t t) { return l.launch_ns < t; };
  auto it = std::lower_bound(ops->second.begin(), ops->second.end(), range.start_ns, by_launch);
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> spans;  // (device, stream) -> first, last
  for (; it != ops->second.end() && it->launch_ns <= range.end_ns; ++it) {
    auto [span, added] = spans.try_emplace({it->device_id, it->stream_id}, it->start_ns, it->end_ns);
    if (!added) span->second = {std::min(span->second.first, it->start_ns), std::max(span->second.second, it->end_ns)};
  }
  for (const auto& [where, span] : spans) {
    beginComplete("gpu_user_annotation", name, gpuPid(range.session_id, where.first), where.second, span.first,
                  span.second);
    json_.endObject();
  }
}

// torch.profiler's step ranges on the thread that ran each step, numbered from 0 as its schedule counts.
void ChromeExporter::writeSteps() {
  std::map<int64_t, int64_t> numbers;  // per session, the next step's number
  for (const StepSpan& s : options_.steps) {
    if (!exported(s.session_id) || !sessions_.count(s.session_id)) continue;
    const std::string name = "ProfilerStep#" + std::to_string(numbers[s.session_id]++);
    beginComplete("user_annotation", name, cpuPid(s.session_id), s.thread_id, s.start_ns, s.end_ns);
    json_.endObject();
  }
}

Status ChromeExporter::writeOverheads() {
  return reader_.forEach<OverheadRow>([&](const OverheadRow& o) {
    if (!exported(o.session_id)) {
      advance();
      return true;
    }
    const bool on_host = o.thread_id.has_value() || !o.device_id.has_value();
    const int64_t pid = on_host ? cpuPid(o.session_id) : gpuPid(o.session_id, *o.device_id);
    beginComplete("overhead", enumName(o.kind), pid, on_host ? o.thread_id.value_or(0) : 0, o.start_ns, o.end_ns);
    json_.endObject();
    advance();
    return true;
  });
}

// Memory in use per device (and pinned host memory per process) as counter tracks.
Status ChromeExporter::writeMemoryCounters() {
  std::map<std::pair<int64_t, int64_t>, int64_t> in_use;  // (pid, host?) → bytes
  return replayMemoryEvents(reader_, [&](const MemoryEventRow& m, int64_t delta) {
    advance();
    if (!exported(m.session_id)) return;
    const bool host = m.memory_kind == MemoryKind::kPinned || m.memory_kind == MemoryKind::kPageable;
    const int64_t pid = host ? cpuPid(m.session_id) : gpuPid(m.session_id, m.device_id);
    int64_t& total = in_use[{pid, host ? 1 : 0}];
    total += delta;
    beginEvent("C", "gpu_memory", host ? "Pinned host memory" : "Device memory", pid, 0, m.timestamp_ns);
    json_.key("args").beginObject().field("allocated (bytes)", total).endObject().endObject();
  });
}

// PyTorch's tensors over time (record --torch, imports), beside CUDA's view of the same device: what the
// caching allocator handed out, where "Device memory" shows what it reserved.
Status ChromeExporter::writeTensorCounters() {
  std::map<int64_t, int64_t> allocated;  // gpu pid → bytes
  return reader_.forEach<AllocatorEventRow>([&](const AllocatorEventRow& a) {
    advance();
    if (!exported(a.session_id)) return true;
    if (a.action != AllocatorAction::kAlloc && a.action != AllocatorAction::kFreeCompleted) return true;
    const int64_t pid = gpuPid(a.session_id, a.device_id);
    int64_t& total = allocated[pid];
    total += a.action == AllocatorAction::kAlloc ? a.bytes : -a.bytes;
    beginEvent("C", "gpu_memory", "PyTorch tensors", pid, 0, a.timestamp_ns);
    json_.key("args").beginObject().field("allocated (bytes)", total).endObject().endObject();
    return true;
  });
}

// XLA's own figures (record --jax) beside CUDA's view of the same device: what its allocator has in use inside
// the reservation "Device memory" shows.
Status ChromeExporter::writeUsageCounters() {
  return reader_.forEach<MemoryUsageRow>([&](const MemoryUsageRow& u) {
    advance();
    if (!exported(u.session_id)) return true;
    beginEvent("C", "gpu_memory", u.allocator == "xla" ? "XLA in use" : u.allocator + " in use",
               gpuPid(u.session_id, u.device_id), 0, u.timestamp_ns);
    json_.key("args").beginObject().field("in use (bytes)", u.in_use_bytes).endObject().endObject();
    return true;
  });
}

// A GPU's track for unified memory, apart from its streams' (CUDA's stream ids are small).
constexpr int64_t kUnifiedMemoryTid = 1'000'000'000;

// Unified memory's migrations and GPU fault groups on a track of their own under the GPU they concern (where the
// pages went, or came from), as Nsight Systems shows them; CPU faults, which have no duration, as instants of
// the process.
Status ChromeExporter::writeUnifiedMemory() {
  std::set<int64_t> named;
  return reader_.forEach<UnifiedMemoryRow>([&](const UnifiedMemoryRow& u) {
    advance();
    if (!exported(u.session_id)) return true;
    const std::string_view name = enumName(u.kind);
    if (u.kind == MigrationKind::kHostFault) {
      beginEvent("i", "unified_memory", name, cpuPid(u.session_id), 0, u.start_ns);
      json_.field("s", "p").endObject();
      return true;
    }
    const bool moves = isMigration(u.kind);
    const std::optional<int64_t> gpu = u.kind == MigrationKind::kToDevice ? u.destination_id : u.source_id;
    if (!gpu || !(moves || u.kind == MigrationKind::kDeviceFault)) return true;  // the rest: stats only
    const int64_t pid = gpuPid(u.session_id, *gpu);
    if (named.insert(pid).second) meta("thread_name", pid, kUnifiedMemoryTid, "name", "Unified memory");
    beginComplete("unified_memory", name, pid, kUnifiedMemoryTid, u.start_ns, u.end_ns);
    json_.key("args").beginObject().field(moves ? "bytes" : "faults", u.value).endObject().endObject();
    return true;
  });
}

// gpuscope's own top-level key (viewers ignore unknown keys): what the trace is missing.
Status ChromeExporter::writeDataQuality() {
  json_.key("gpuscopeDataQuality").beginArray(/*one_item_per_line=*/true);
  for (const DataQualityRow& q : quality_) {
    json_.beginObject().field("severity", enumName(q.severity)).field("code", q.code).field("count", q.count);
    json_.field("message", q.message);
    if (q.session_id) json_.field("pid", cpuPid(*q.session_id));
    json_.endObject();
  }
  json_.endArray();
  return Status::ok();
}

}  // namespace

Status writeChromeTrace(TraceReader& reader, JsonWriter& json, const ChromeExportOptions& options) {
  ChromeExporter exporter(reader, json, options);
  return exporter.run();
}

Status exportChromeTrace(TraceReader& reader, const std::string& path, bool overwrite,
                         const ChromeExportOptions& options) {
  Result<bool> has_events = reader.hasEvents();
  if (!has_events) return has_events.status();
  if (!*has_events) {
    return Status(ErrorKind::kEmpty, reader.path() +
                                         ": the trace holds no events (no kernels, copies, API calls "
                                         "or NVTX ranges were recorded); nothing to export");
  }
  Result<AtomicFile> out = AtomicFile::create(path, overwrite);
  if (!out) return out.status();
  JsonWriter json(out->file());
  GPUSCOPE_RETURN_IF_ERROR(writeChromeTrace(reader, json, options));
  if (!json.flush()) return Status(ErrorKind::kIo, path + ": cannot write: " + std::strerror(errno));
  return out->commit();
}

}  // namespace gpuscope
