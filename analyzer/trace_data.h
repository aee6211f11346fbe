// A trace loaded into memory for analysis: one columnar table per kind of event (a vector per column),
// each sorted by start time, with processes, devices, streams and kernel configurations numbered densely
// across the whole trace. The CLI, the advisor and the GUI all analyse this, never the SQLite file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/status.h"
#include "formats/trace_schema.h"

namespace gpuscope::analysis {

inline constexpr int32_t kNone = -1;  // an absent index (no stream, no graph, unknown launch)

struct Stream {
  int32_t device = 0;  // index into TraceData::devices
  int64_t stream_id = 0;
  // The context's legacy default stream (CUPTI's id for the NULL stream, from the trace's context rows): it waits
  // for the work of every other blocking stream, and they for its.
  bool legacy_default = false;
};

// The columns every kind of GPU work has: kernels, copies and memsets.
struct GpuWorkColumns {
  std::vector<int64_t> start_ns, end_ns, correlation_id;
  std::vector<int32_t> session, device, stream;  // indexes into TraceData's lists
  std::vector<int32_t> launch_call;              // index into TraceData::api_calls of its launch, or kNone
  size_t size() const { return start_ns.size(); }
};

struct KernelTable : GpuWorkColumns {
  std::vector<int32_t> config;    // index into TraceData::configs
  std::vector<int64_t> graph_id;  // kNone when not launched from a graph
};

struct CopyTable : GpuWorkColumns {  // memcpy
  std::vector<int64_t> bytes;
  std::vector<schema::CopyKind> kind;
  std::vector<schema::MemoryKind> src_kind, dst_kind;
};

struct MemsetTable : GpuWorkColumns {
  std::vector<int64_t> bytes;
};

struct ApiTable {
  std::vector<int64_t> start_ns, end_ns, correlation_id, thread_id;
  std::vector<int32_t> session, name;  // name: a string id
  std::vector<int32_t> return_code;
  size_t size() const { return start_ns.size(); }
};

struct SyncTable {
  std::vector<int64_t> start_ns, end_ns, correlation_id;
  std::vector<int64_t> stream_id;  // CUPTI's stream id; kNone for context or event synchronisation
  std::vector<int32_t> session;
  std::vector<schema::SyncKind> kind;
  size_t size() const { return start_ns.size(); }
};

struct MemoryTable {  // allocations and releases, by time
  std::vector<int64_t> time_ns, address, bytes, correlation_id;
  std::vector<int32_t> session, device, stream;  // stream: kNone when not stream-ordered
  std::vector<int32_t> call;                     // index into TraceData::api_calls of the call that made it, or kNone
  std::vector<schema::MemoryOp> op;
  std::vector<schema::MemoryKind> kind;
  std::vector<int64_t> pool;  // address of the memory pool it came from (cudaMallocAsync), 0 when none
  size_t size() const { return time_ns.size(); }
};

struct PoolEventTable {  // memory pools created, trimmed or destroyed, with their size then
  std::vector<int64_t> time_ns, pool, reserved_bytes;
  std::vector<int64_t> used_bytes;  // what the pool had handed out then, kNone when not reported
  std::vector<int32_t> session, device;
  std::vector<schema::PoolOp> op;
  size_t size() const { return time_ns.size(); }
};

// PyTorch's caching allocator (record --torch, import): tensors handed out of the segments MemoryTable sees.
struct AllocatorTable {  // by time
  std::vector<int64_t> time_ns, address, bytes;
  std::vector<int32_t> session, device;
  std::vector<schema::AllocatorAction> action;
  size_t size() const { return time_ns.size(); }
};

struct TensorRoleTable {  // what the PyTorch bridge knew a tensor's storage to be, when it saw it; by time
  std::vector<int64_t> time_ns, address, bytes;
  std::vector<int32_t> session, device, name;  // name: string id
  std::vector<schema::TensorRole> role;
  size_t size() const { return time_ns.size(); }
};

struct NvtxTable {
  std::vector<int64_t> start_ns, end_ns, thread_id;
  std::vector<int32_t> session, name, domain;  // string ids (0: none)
  std::vector<schema::NvtxKind> kind;
  size_t size() const { return start_ns.size(); }
};

// NCCL's operations as its profiler plugin described them (`collective` rows), in time order.
struct CollectiveTable {
  std::vector<schema::CollectiveRow> rows;
  std::vector<int32_t> session;  // index into TraceData::sessions, per row
  size_t size() const { return rows.size(); }
};

struct TraceData {
  std::string path;
  std::vector<std::string> strings;              // by string id; index 0 is ""
  std::vector<schema::SessionRow> sessions;      // one per process
  std::vector<schema::DeviceRow> devices;        // one per (process, GPU)
  std::vector<Stream> streams;                   // one per (device, stream id)
  std::vector<schema::KernelConfigRow> configs;  // kernel function and launch configuration
  KernelTable kernels;
  CopyTable copies;
  MemsetTable memsets;
  ApiTable api_calls;
  SyncTable syncs;
  MemoryTable memory;
  PoolEventTable pools;
  AllocatorTable allocator;
  TensorRoleTable roles;
  NvtxTable nvtx;
  CollectiveTable collectives;
  // What allocators that hand buffers out of their own reservation (XLA's) said they had in use, by time; the
  // rows' session_id is an index into sessions here.
  std::vector<schema::MemoryUsageRow> memory_usage;
  std::vector<schema::UnifiedMemoryRow> unified_memory;  // by start, sessions as indexes
  std::vector<schema::NvlinkRow> nvlinks;                // the GPUs' NVLink connections, as each process saw them
  std::vector<schema::EnvironmentRow> environment;       // the variables that change CUDA's, NCCL's, … behaviour
  std::vector<schema::DataQualityRow> data_quality;      // as recorded by the collector
  std::vector<std::string> load_warnings;                // what loading found doubtful (and how it was handled)

  const std::string& text(int32_t string_id) const;
  // A session's environment variable as recorded (environment table), "" when unset or not recorded.
  std::string environmentValue(int32_t session, std::string_view name) const;
  const std::string& kernelName(size_t kernel) const { return text(configs[kernels.config[kernel]].name.id); }
  // "GPU 0 (NVIDIA H100 80GB HBM3)"; with several processes "… of pid 650", and "(rank 0)" when it gave one.
  std::string deviceLabel(int32_t device) const;
  int64_t startNs() const { return start_ns_; }  // first event of any kind
  int64_t endNs() const { return end_ns_; }      // last end of any kind
  int64_t durationNs() const { return end_ns_ > start_ns_ ? end_ns_ - start_ns_ : 0; }
  size_t eventCount() const;

  int64_t start_ns_ = 0, end_ns_ = 0;
};

// Loads every table of a trace. Fails with the reader's one-line message for a file that is not a
// readable gpuscope trace; a trace with odd contents (events out of order, end before start, events on
// devices the trace does not describe) loads, with load_warnings saying what was repaired.
Result<TraceData> loadTrace(const std::string& path);

}  // namespace gpuscope::analysis
