#include "formats/kineto_import.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "formats/trace_writer.h"

namespace gpuscope {

namespace {

using nlohmann::json;
using namespace schema;

constexpr int64_t kSession = 1;

int64_t integer(const json& object, const char* key, int64_t fallback = 0) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return fallback;
  return it->is_number_float() ? static_cast<int64_t>(std::llround(it->get<double>())) : it->get<int64_t>();
}

// "Memcpy HtoD (Pageable -> Device)": the direction and the two memory kinds.
template <typename Enum>
Enum enumNamed(std::string_view name, Enum fallback) {
  for (const EnumValue& v : EnumInfo<Enum>::kValues) {
    if (v.name == name) return static_cast<Enum>(v.value);
  }
  return fallback;
}

MemoryKind memoryKindNamed(std::string_view word) {
  std::string lower(word);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return enumNamed(lower, MemoryKind::kUnknown);
}

class KinetoReader {
 public:
  KinetoReader(const json& trace, TraceWriter& out) : trace_(trace), out_(out) {
    base_ns_ = integer(trace, "baseTimeNanoseconds", 0);
  }

  Status run() {
    const json& events = trace_["traceEvents"];
    GPUSCOPE_RETURN_IF_ERROR(writeSessionAndDevices(events));
    rows_before_events_ = out_.rowsWritten();
    for (const json& e : events) {
      if (!e.is_object() || !e.contains("ts")) continue;
      const std::string ph = e.value("ph", ""), cat = e.value("cat", "");
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
      else if (ph == "i" && e.value("name", "") == "[memory]")
        s = memory(e);
      else if (ph == "M" && e.value("name", "") == "thread_name")
        s = thread(e);
      GPUSCOPE_RETURN_IF_ERROR(s);
    }
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
    return ns(e, "ts") + static_cast<int64_t>(std::llround(e.value("dur", 0.0) * 1000));
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
      if (e.is_object() && e.value("cat", "") == "cpu_op" && e.contains("pid") && e["pid"].is_number()) {
        s.pid = pid_ = e["pid"].get<int64_t>();
        break;
      }
    }
    s.command_line = "imported from a torch.profiler trace";
    s.start_ns = INT64_MAX;
    for (const json& e : events) {
      if (e.is_object() && e.contains("ts") && e["ts"].is_number()) s.start_ns = std::min(s.start_ns, ns(e, "ts"));
    }
    if (s.start_ns == INT64_MAX) s.start_ns = base_ns_;
    s.cuda_driver_version = integer(trace_, "cuda_driver_version", 0);
    s.cuda_runtime_version = integer(trace_, "cuda_runtime_version", 0);
    s.cupti_version = integer(trace_, "cupti_version", 0);
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
    d.device_id = integer(p, "id");
    d.name = p.value("name", "");
    d.compute_major = integer(p, "computeMajor");
    d.compute_minor = integer(p, "computeMinor");
    d.sm_count = integer(p, "numSms");
    d.global_memory_bytes = integer(p, "totalGlobalMem");
    d.max_threads_per_block = integer(p, "maxThreadsPerBlock");
    d.max_threads_per_sm = integer(p, "maxThreadsPerMultiprocessor");
    d.registers_per_sm = integer(p, "regsPerMultiprocessor");
    d.registers_per_block = integer(p, "regsPerBlock");
    d.shared_memory_per_sm_bytes = integer(p, "sharedMemPerMultiprocessor");
    d.shared_memory_per_block_bytes = integer(p, "sharedMemPerBlock");
    if (p.contains("sharedMemPerBlockOptin"))
      d.shared_memory_per_block_optin_bytes = integer(p, "sharedMemPerBlockOptin");
    d.warp_size = integer(p, "warpSize", 32);
    return out_.append(d);
  }

  // What kernels, copies and memsets share: where they ran, their launch's correlation id, their span.
  template <typename Row>
  Row gpuWork(const json& e) const {
    const json& a = args(e);
    Row r;
    r.session_id = kSession;
    r.device_id = integer(a, "device");
    r.context_id = integer(a, "context");
    r.stream_id = integer(a, "stream");
    r.correlation_id = integer(a, "correlation");
    r.start_ns = ns(e, "ts");
    r.end_ns = end(e);
    return r;
  }

  Status kernel(const json& e) {
    const json& a = args(e);
    KernelConfigRow c;
    c.name = out_.intern(e.value("name", ""));
    const auto dims = [&](const char* key, int64_t& x, int64_t& y, int64_t& z) {
      const auto it = a.find(key);
      if (it == a.end() || !it->is_array() || it->size() != 3) return;
      x = (*it)[0].get<int64_t>(), y = (*it)[1].get<int64_t>(), z = (*it)[2].get<int64_t>();
    };
    dims("grid", c.grid_x, c.grid_y, c.grid_z);
    dims("block", c.block_x, c.block_y, c.block_z);
    c.registers_per_thread = integer(a, "registers per thread");
    c.static_shared_bytes = integer(a, "shared memory");  // Kineto gives static and dynamic together
    KernelRow k = gpuWork<KernelRow>(e);
    k.config_id = out_.intern(c);
    return out_.append(k);
  }

  Status copy(const json& e) {
    MemcpyRow m = gpuWork<MemcpyRow>(e);
    m.bytes = integer(args(e), "bytes");
    // "Memcpy HtoD (Pageable -> Device)"
    const std::string name = e.value("name", "");
    const size_t space = name.find(' '), open = name.find(" ("), arrow = name.find(" -> "), close = name.rfind(')');
    if (space != std::string::npos && open != std::string::npos && open > space) {
      m.copy_kind = enumNamed(std::string_view(name).substr(space + 1, open - space - 1), CopyKind::kUnknown);
    }
    if (open != std::string::npos && arrow != std::string::npos && close != std::string::npos && close > arrow) {
      m.src_kind = memoryKindNamed(std::string_view(name).substr(open + 2, arrow - open - 2));
      m.dst_kind = memoryKindNamed(std::string_view(name).substr(arrow + 4, close - arrow - 4));
    }
    return out_.append(m);
  }

  Status memset(const json& e) {
    MemsetRow m = gpuWork<MemsetRow>(e);
    m.bytes = integer(args(e), "bytes");
    const std::string name = e.value("name", "");  // "Memset (Device)"
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
    c.name = out_.intern(e.value("name", ""));
    c.cbid = integer(a, "cbid");
    c.thread_id = integer(e, "tid");
    c.start_ns = ns(e, "ts");
    c.end_ns = end(e);
    c.correlation_id = integer(a, "correlation");
    return out_.append(c);
  }

  Status range(const json& e, bool op) {
    NvtxRow r;
    r.session_id = kSession;
    r.kind = NvtxKind::kRange;
    if (op) r.domain = out_.intern("PyTorch ops");
    r.name = out_.intern(e.value("name", ""));
    r.thread_id = integer(e, "tid");
    r.start_ns = ns(e, "ts");
    r.end_ns = end(e);
    return out_.append(r);
  }

  // profile_memory's events: Bytes > 0 a tensor allocated, < 0 one freed; only CUDA's (Device Type 1).
  Status memory(const json& e) {
    const json& a = args(e);
    if (integer(a, "Device Type", -1) != 1) return Status::ok();
    const int64_t bytes = integer(a, "Bytes");
    AllocatorEventRow m;
    m.session_id = kSession;
    m.device_id = integer(a, "Device Id");
    m.timestamp_ns = ns(e, "ts");
    m.action = bytes >= 0 ? AllocatorAction::kAlloc : AllocatorAction::kFreeCompleted;
    m.address = a.contains("Addr") && a["Addr"].is_number_unsigned() ? static_cast<int64_t>(a["Addr"].get<uint64_t>())
                                                                     : integer(a, "Addr");
    m.bytes = std::llabs(bytes);
    return out_.append(m);
  }

  Status thread(const json& e) {
    // GPU rows name their streams with the device index as pid: only the process's own threads.
    if (!e.contains("tid") || !e["tid"].is_number() || integer(e, "pid", -1) != pid_) return Status::ok();
    ++threads_;
    return out_.append(ThreadRow{kSession, integer(e, "tid"), args(e).value("name", "")});
  }

  const json& trace_;
  TraceWriter& out_;
  int64_t base_ns_ = 0;
  int64_t pid_ = -1;
  int64_t rows_before_events_ = 0, threads_ = 0;
};

}  // namespace

Status importKineto(const json& trace, TraceWriter& out) { return KinetoReader(trace, out).run(); }

}  // namespace gpuscope
