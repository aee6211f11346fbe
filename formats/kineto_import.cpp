#include "formats/kineto_import.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "formats/json_file.h"
#include "formats/nccl_ops.h"
#include "formats/trace_writer.h"

namespace gpuscope {

namespace {

using nlohmann::json;
using namespace schema;

constexpr int64_t kSession = 1;

// A stable id for a process group's name, the same in every rank's import (FNV-1a).
int64_t communicatorId(std::string_view name) {
  uint64_t h = 14695981039346656037ull;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return static_cast<int64_t>(h);
}

MemoryKind memoryKindNamed(std::string_view word) {
  std::string lower(word);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return enumNamed<MemoryKind>(lower).value_or(MemoryKind::kUnknown);
}

class KinetoReader {
 public:
  KinetoReader(const json& trace, TraceWriter& out, std::string host)
      : trace_(trace), out_(out), host_(std::move(host)) {
    base_ns_ = jsonInteger(trace, "baseTimeNanoseconds", 0);
  }

  Status run() {
    const json& events = trace_["traceEvents"];
    GPUSCOPE_RETURN_IF_ERROR(writeSessionAndDevices(events));
    rows_before_events_ = out_.rowsWritten();
    for (const json& e : events) {
      if (!e.is_object() || !e.contains("ts")) continue;
      const std::string ph = jsonString(e, "ph"), cat = jsonString(e, "cat");
      Status s;
      if (ph == "X" && cat == "kernel")
        s = kernel(e);
      else if (ph == "X" && cat == "gpu_memcpy")
        s = copy(e);
      else if (ph == "X" && cat == "gpu_memset")
        s = memset(e);
      else if (ph == "X" && (cat == "cuda_runtime" || cat == "cuda_driver"))
        s = apiCall(e, cat == "cuda_driver");
      else if (ph == "X" && (cat == "user_annotation" || cat == "cpu_op"))
        s = range(e, cat == "cpu_op");
      else if (ph == "i" && jsonString(e, "name") == "[memory]")
        s = memory(e);
      else if (ph == "M" && jsonString(e, "name") == "thread_name")
        s = thread(e);
      GPUSCOPE_RETURN_IF_ERROR(s);
    }
    GPUSCOPE_RETURN_IF_ERROR(writeCollectives());
    if (out_.rowsWritten() <= rows_before_events_) {
      return Status(ErrorKind::kEmpty, "the trace holds no kernels, copies, CUDA calls, operators or memory events");
    }
    return Status::ok();
  }

 private:
  int64_t ns(const json& e, const char* key) const {
    const auto it = e.find(key);
    if (it == e.end() || !it->is_number()) return base_ns_;
    return base_ns_ + static_cast<int64_t>(std::llround(it->get<double>() * 1000.0));
  }
  int64_t end(const json& e) const {
    return ns(e, "ts") + static_cast<int64_t>(std::llround(jsonNumber(e, "dur") * 1000));
  }
  static const json& args(const json& e) {
    static const json kNone = json::object();
    const auto it = e.find("args");
    return it != e.end() && it->is_object() ? *it : kNone;
  }

  // The process: the pid of the CPU events (GPU rows use the device index as their pid).
  Status writeSessionAndDevices(const json& events) {
    SessionRow s;
    s.id = kSession;
    for (const json& e : events) {
      if (e.is_object() && jsonString(e, "cat") == "cpu_op" && e.contains("pid") && e["pid"].is_number()) {
        s.pid = pid_ = jsonInteger(e, "pid");
        break;
      }
    }
    s.command_line = "imported from a torch.profiler trace";
    s.hostname = host_;
    // torch.distributed's rank and world size, which the profiler writes for a job's processes.
    if (const auto d = trace_.find("distributedInfo"); d != trace_.end() && d->is_object()) {
      if (const int64_t rank = jsonInteger(*d, "rank", -1); rank >= 0) s.rank = rank_ = rank;
      if (const int64_t size = jsonInteger(*d, "world_size", 0); size > 0) s.world_size = size;
    }
    s.start_ns = INT64_MAX;
    for (const json& e : events) {
      if (e.is_object() && e.contains("ts") && e["ts"].is_number()) s.start_ns = std::min(s.start_ns, ns(e, "ts"));
    }
    if (s.start_ns == INT64_MAX) s.start_ns = base_ns_;
    s.cuda_driver_version = jsonInteger(trace_, "cuda_driver_version", 0);
    s.cuda_runtime_version = jsonInteger(trace_, "cuda_runtime_version", 0);
    s.cupti_version = jsonInteger(trace_, "cupti_version", 0);
    s.gpuscope_version = GPUSCOPE_VERSION;
    GPUSCOPE_RETURN_IF_ERROR(out_.append(s));
    if (const auto d = trace_.find("deviceProperties"); d != trace_.end() && d->is_array()) {
      for (const json& p : *d) GPUSCOPE_RETURN_IF_ERROR(device(p));
    }
    return Status::ok();
  }

  Status device(const json& p) {
    if (!p.is_object()) return Status::ok();
    DeviceRow d;
    d.session_id = kSession;
    d.device_id = jsonInteger(p, "id");
    d.name = jsonString(p, "name");
    d.compute_major = jsonInteger(p, "computeMajor");
    d.compute_minor = jsonInteger(p, "computeMinor");
    d.sm_count = jsonInteger(p, "numSms");
    d.global_memory_bytes = jsonInteger(p, "totalGlobalMem");
    d.max_threads_per_block = jsonInteger(p, "maxThreadsPerBlock");
    d.max_threads_per_sm = jsonInteger(p, "maxThreadsPerMultiprocessor");
    d.registers_per_sm = jsonInteger(p, "regsPerMultiprocessor");
    d.registers_per_block = jsonInteger(p, "regsPerBlock");
    d.shared_memory_per_sm_bytes = jsonInteger(p, "sharedMemPerMultiprocessor");
    d.shared_memory_per_block_bytes = jsonInteger(p, "sharedMemPerBlock");
    if (p.contains("sharedMemPerBlockOptin"))
      d.shared_memory_per_block_optin_bytes = jsonInteger(p, "sharedMemPerBlockOptin");
    d.warp_size = jsonInteger(p, "warpSize", 32);
    return out_.append(d);
  }

  // What kernels, copies and memsets share: where they ran, their launch's correlation id, their span.
  template <typename Row>
  Row gpuWork(const json& e) const {
    const json& a = args(e);
    Row r;
    r.session_id = kSession;
    r.device_id = jsonInteger(a, "device");
    r.context_id = jsonInteger(a, "context");
    r.stream_id = jsonInteger(a, "stream");
    r.correlation_id = jsonInteger(a, "correlation");
    r.start_ns = ns(e, "ts");
    r.end_ns = end(e);
    return r;
  }

  Status kernel(const json& e) {
    const json& a = args(e);
    KernelConfigRow c;
    c.name = out_.intern(jsonString(e, "name"));
    const auto dims = [&](const char* key, int64_t& x, int64_t& y, int64_t& z) {
      const auto it = a.find(key);
      if (it == a.end() || !it->is_array() || it->size() != 3) return;
      x = jsonIntegerOf((*it)[0], 0), y = jsonIntegerOf((*it)[1], 0), z = jsonIntegerOf((*it)[2], 0);
    };
    dims("grid", c.grid_x, c.grid_y, c.grid_z);
    dims("block", c.block_x, c.block_y, c.block_z);
    c.registers_per_thread = jsonInteger(a, "registers per thread");
    c.static_shared_bytes = jsonInteger(a, "shared memory");  // Kineto gives static and dynamic together
    KernelRow k = gpuWork<KernelRow>(e);
    k.config_id = out_.intern(c);
    if (const std::string_view op = nccl::operationOfTorchName(jsonString(a, "Collective name")); !op.empty()) {
      collectives_.push_back({k.start_ns, k.correlation_id, c.grid_x, op, &a});
    }
    return out_.append(k);
  }

  // torch.profiler writes each NCCL kernel's collective into its args; as `collective` rows (which NCCL's profiler
  // plugin writes in a recording) they sit just after the kernel's launch, on the launching thread, numbered per
  // process group and kind of collective in kernel order, as NCCL numbers them.
  Status writeCollectives() {
    std::sort(collectives_.begin(), collectives_.end(),
              [](const PendingCollective& x, const PendingCollective& y) { return x.start_ns < y.start_ns; });
    std::map<std::pair<std::string, std::string_view>, int64_t> sequence;
    for (const PendingCollective& p : collectives_) {
      const auto launch = launches_.find(p.correlation_id);
      if (launch == launches_.end()) continue;
      const json& a = *p.args;
      const std::string group = jsonString(a, "Process Group Name");
      CollectiveRow r;
      r.session_id = kSession;
      r.thread_id = launch->second.first;
      r.timestamp_ns = launch->second.second + 1;
      r.communicator = communicatorId(group);
      r.communicator_ranks = jsonInteger(a, "Group size", 1);
      r.communicator_nodes = 1;
      r.rank = rank_.value_or(0);
      r.operation = out_.intern(p.operation);
      r.count = nccl::countOf(p.operation, {jsonInteger(a, "In msg nelems"), jsonInteger(a, "Out msg nelems")});
      r.datatype = out_.intern(nccl::datatypeOfTorchType(jsonString(a, "dtype")));
      r.channels = p.blocks;
      if (p.operation == "Send" || p.operation == "Recv") {
        r.peer = 0;  // not in torch.profiler's args
      } else {
        r.sequence = sequence[{group, p.operation}]++;
      }
      GPUSCOPE_RETURN_IF_ERROR(out_.append(r));
    }
    return Status::ok();
  }

  Status copy(const json& e) {
    MemcpyRow m = gpuWork<MemcpyRow>(e);
    m.bytes = jsonInteger(args(e), "bytes");
    // "Memcpy HtoD (Pageable -> Device)"
    const std::string name = jsonString(e, "name");
    const size_t space = name.find(' '), open = name.find(" ("), arrow = name.find(" -> "), close = name.rfind(')');
    if (space != std::string::npos && open != std::string::npos && open > space) {
      m.copy_kind =
          enumNamed<CopyKind>(std::string_view(name).substr(space + 1, open - space - 1)).value_or(CopyKind::kUnknown);
    }
    if (open != std::string::npos && arrow != std::string::npos && close != std::string::npos && close > arrow) {
      m.src_kind = memoryKindNamed(std::string_view(name).substr(open + 2, arrow - open - 2));
      m.dst_kind = memoryKindNamed(std::string_view(name).substr(arrow + 4, close - arrow - 4));
    }
    return out_.append(m);
  }

  Status memset(const json& e) {
    MemsetRow m = gpuWork<MemsetRow>(e);
    m.bytes = jsonInteger(args(e), "bytes");
    const std::string name = jsonString(e, "name");  // "Memset (Device)"
    if (const size_t open = name.find(" ("); open != std::string::npos && name.size() > open + 3) {
      m.memory_kind = memoryKindNamed(std::string_view(name).substr(open + 2, name.size() - open - 3));
    }
    return out_.append(m);
  }

  Status apiCall(const json& e, bool driver) {
    const json& a = args(e);
    ApiCallRow c;
    c.session_id = kSession;
    c.api = driver ? ApiKind::kDriver : ApiKind::kRuntime;
    c.name = out_.intern(jsonString(e, "name"));
    c.cbid = jsonInteger(a, "cbid");
    c.thread_id = jsonInteger(e, "tid");
    c.start_ns = ns(e, "ts");
    c.end_ns = end(e);
    c.correlation_id = jsonInteger(a, "correlation");
    launches_[c.correlation_id] = {c.thread_id, c.end_ns};
    return out_.append(c);
  }

  Status range(const json& e, bool op) {
    NvtxRow r;
    r.session_id = kSession;
    r.kind = NvtxKind::kRange;
    if (op) r.domain = out_.intern("PyTorch ops");
    r.name = out_.intern(jsonString(e, "name"));
    r.thread_id = jsonInteger(e, "tid");
    r.start_ns = ns(e, "ts");
    r.end_ns = end(e);
    return out_.append(r);
  }

  // profile_memory's events: Bytes > 0 a tensor allocated, < 0 one freed; only CUDA's (Device Type 1).
  Status memory(const json& e) {
    const json& a = args(e);
    if (jsonInteger(a, "Device Type", -1) != 1) return Status::ok();
    const int64_t bytes = jsonInteger(a, "Bytes");
    AllocatorEventRow m;
    m.session_id = kSession;
    m.device_id = jsonInteger(a, "Device Id");
    m.timestamp_ns = ns(e, "ts");
    m.action = bytes >= 0 ? AllocatorAction::kAlloc : AllocatorAction::kFreeCompleted;
    m.address = jsonInteger(a, "Addr");
    m.bytes = std::llabs(bytes);
    return out_.append(m);
  }

  Status thread(const json& e) {
    // GPU rows name their streams with the device index as pid: only the process's own threads.
    if (!e.contains("tid") || !e["tid"].is_number() || jsonInteger(e, "pid", -1) != pid_) return Status::ok();
    ++threads_;
    return out_.append(ThreadRow{kSession, jsonInteger(e, "tid"), jsonString(args(e), "name")});
  }

  struct PendingCollective {
    int64_t start_ns, correlation_id;
    int64_t blocks;  // an NCCL kernel runs one block per channel
    std::string_view operation;
    const json* args;
  };
  std::vector<PendingCollective> collectives_;
  std::map<int64_t, std::pair<int64_t, int64_t>> launches_;  // correlation → (thread, end of the launch call)
  std::optional<int64_t> rank_;
  const json& trace_;
  TraceWriter& out_;
  std::string host_;
  int64_t base_ns_ = 0;
  int64_t pid_ = -1;
  int64_t rows_before_events_ = 0, threads_ = 0;
};

}  // namespace

Status importKineto(const json& trace, TraceWriter& out, const std::string& host) {
  return KinetoReader(trace, out, host).run();
}

std::string hostOfTraceFileName(const std::string& file_name) {
  static const std::regex kDefaultName(R"(^(.+)_[0-9]+\.[0-9]+\.pt\.trace\.json(\.gz)?$)");
  std::smatch m;
  return std::regex_match(file_name, m, kDefaultName) ? m[1].str() : "";
}

}  // namespace gpuscope
