// The gpuscope trace schema: the one definition of every table and column.
// DDL, INSERT/SELECT statements, row binding and docs/schema.md are all generated from this file.
//
// Conventions: times are integer nanoseconds on the collector's clock (CUPTI's, which is CLOCK_REALTIME
// unless the session's clock_sync rows say otherwise); sizes are bytes; strings that repeat (kernel names,
// API names, NVTX text) are interned in `string` and referenced by id; every event row names its session
// (one profiled process).
//
// Changing a table means bumping kSchemaVersion: readers refuse traces of any other version.
#pragma once

#include <array>
#include <tuple>

#include "formats/schema_table.h"
#include "formats/trace_enums.h"

namespace gpuscope::schema {

inline constexpr int64_t kSchemaVersion = 5;
// Tables added after version 1, with the version that added them: in older traces a reader finds them empty.
struct AddedTable {
  std::string_view name;
  int64_t version;
};
inline constexpr AddedTable kAddedTables[] = {{"allocator_event", 2}, {"tensor_role", 2}, {"collective", 3},
                                              {"environment", 3},     {"nvlink", 3},      {"memory_usage", 4},
                                              {"unified_memory", 5}};
// PRAGMA application_id of every gpuscope trace ("GPUS"), so other SQLite files are told apart.
inline constexpr int64_t kApplicationId = 0x47505553;

template <typename Row>
struct TableOf;

#define GPUSCOPE_COL(Row, member, ...) ::gpuscope::schema::column(&Row::member, #member, __VA_ARGS__)

// ---- file and process metadata -------------------------------------------------------------------------

struct TraceInfoRow {
  friend bool operator==(const TraceInfoRow&, const TraceInfoRow&) = default;
  std::string key;
  std::string value;
};
template <>
struct TableOf<TraceInfoRow> {
  static constexpr auto kTable =
      table<TraceInfoRow>("trace_info", "File-level facts as key/value pairs (writer, creation time, merge sources).",
                          GPUSCOPE_COL(TraceInfoRow, key, "Name of the fact, e.g. `created_by`."),
                          GPUSCOPE_COL(TraceInfoRow, value, "Its value, as text."));
};

struct StringRow {
  friend bool operator==(const StringRow&, const StringRow&) = default;
  int64_t id = 0;
  std::string value;
};
template <>
struct TableOf<StringRow> {
  static constexpr auto kTable = table<StringRow>(
      "string", "Interned strings: every kernel name, API name and NVTX text is stored once and referenced by id.",
      GPUSCOPE_COL(StringRow, id, "Id referenced by other tables (never 0; 0 means no string and is stored NULL)."),
      GPUSCOPE_COL(StringRow, value, "The text, as the program produced it (may be invalid UTF-8)."));
};

struct SessionRow {
  friend bool operator==(const SessionRow&, const SessionRow&) = default;
  int64_t id = 0;
  int64_t pid = 0;
  std::optional<int64_t> parent_pid;
  std::string hostname;
  std::string command_line;
  std::optional<int64_t> rank;
  std::optional<int64_t> local_rank;
  std::optional<int64_t> world_size;
  int64_t start_ns = 0;
  std::optional<int64_t> end_ns;
  std::optional<int64_t> cuda_driver_version;
  std::optional<int64_t> cuda_runtime_version;
  std::optional<int64_t> cupti_version;
  std::string gpuscope_version;
};
template <>
struct TableOf<SessionRow> {
  static constexpr auto kTable = table<SessionRow>(
      "session", "One profiled process. A merged trace holds one row per process of the run.",
      GPUSCOPE_COL(SessionRow, id, "Session id, referenced by every event row."),
      GPUSCOPE_COL(SessionRow, pid, "Operating-system process id."),
      GPUSCOPE_COL(SessionRow, parent_pid, "Parent process id."),
      GPUSCOPE_COL(SessionRow, hostname, "Host the process ran on."),
      GPUSCOPE_COL(SessionRow, command_line, "Command line, arguments separated by spaces."),
      GPUSCOPE_COL(SessionRow, rank, "Global rank (RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID), if launched as one."),
      GPUSCOPE_COL(SessionRow, local_rank, "Rank on this host (LOCAL_RANK and equivalents)."),
      GPUSCOPE_COL(SessionRow, world_size, "Number of ranks in the job (WORLD_SIZE and equivalents)."),
      GPUSCOPE_COL(SessionRow, start_ns, "When recording started, ns."),
      GPUSCOPE_COL(SessionRow, end_ns, "When recording ended, ns; NULL if the process died before it could say."),
      GPUSCOPE_COL(SessionRow, cuda_driver_version, "CUDA driver API version, e.g. 13000 for 13.0."),
      GPUSCOPE_COL(SessionRow, cuda_runtime_version, "CUDA runtime version the program used, e.g. 13000."),
      GPUSCOPE_COL(SessionRow, cupti_version, "CUPTI API version (cuptiGetVersion)."),
      GPUSCOPE_COL(SessionRow, gpuscope_version, "Version of the gpuscope collector that wrote the session."));
};

struct ClockSyncRow {
  friend bool operator==(const ClockSyncRow&, const ClockSyncRow&) = default;
  int64_t session_id = 0;
  int64_t trace_ns = 0;
  int64_t realtime_ns = 0;
  int64_t monotonic_ns = 0;
};
template <>
struct TableOf<ClockSyncRow> {
  static constexpr auto kTable = table<ClockSyncRow>(
      "clock_sync",
      "Clock mapping: the trace clock read together with the host clocks, at least at the start and end of a session.",
      GPUSCOPE_COL(ClockSyncRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(ClockSyncRow, trace_ns, "Trace clock (the clock of every *_ns column), ns."),
      GPUSCOPE_COL(ClockSyncRow, realtime_ns, "CLOCK_REALTIME at the same moment, ns since the Unix epoch."),
      GPUSCOPE_COL(ClockSyncRow, monotonic_ns, "CLOCK_MONOTONIC at the same moment, ns."));
};

struct DeviceRow {
  friend bool operator==(const DeviceRow&, const DeviceRow&) = default;
  int64_t session_id = 0;
  int64_t device_id = 0;
  std::string name;
  std::string uuid;
  int64_t compute_major = 0;
  int64_t compute_minor = 0;
  int64_t sm_count = 0;
  int64_t global_memory_bytes = 0;
  std::optional<int64_t> memory_bandwidth_bytes_per_s;
  std::optional<int64_t> l2_cache_bytes;
  int64_t max_threads_per_block = 0;
  int64_t max_threads_per_sm = 0;
  std::optional<int64_t> max_blocks_per_sm;
  int64_t registers_per_sm = 0;
  int64_t registers_per_block = 0;
  int64_t shared_memory_per_sm_bytes = 0;
  int64_t shared_memory_per_block_bytes = 0;
  std::optional<int64_t> shared_memory_per_block_optin_bytes;
  int64_t warp_size = 32;
  std::optional<int64_t> core_clock_khz;
};
template <>
struct TableOf<DeviceRow> {
  static constexpr auto kTable = table<DeviceRow>(
      "device", "A GPU the session used, with the properties analysis needs (occupancy, roofline).",
      GPUSCOPE_COL(DeviceRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(DeviceRow, device_id, "CUDA device ordinal in that process."),
      GPUSCOPE_COL(DeviceRow, name, "Marketing name, e.g. `NVIDIA H100 80GB HBM3`."),
      GPUSCOPE_COL(DeviceRow, uuid, "Device UUID, identifies the same GPU across processes."),
      GPUSCOPE_COL(DeviceRow, compute_major, "Compute capability, major."),
      GPUSCOPE_COL(DeviceRow, compute_minor, "Compute capability, minor."),
      GPUSCOPE_COL(DeviceRow, sm_count, "Number of streaming multiprocessors."),
      GPUSCOPE_COL(DeviceRow, global_memory_bytes, "Device memory, bytes."),
      GPUSCOPE_COL(DeviceRow, memory_bandwidth_bytes_per_s, "Peak device-memory bandwidth, bytes/s."),
      GPUSCOPE_COL(DeviceRow, l2_cache_bytes, "L2 cache size, bytes."),
      GPUSCOPE_COL(DeviceRow, max_threads_per_block, "Most threads one block may have."),
      GPUSCOPE_COL(DeviceRow, max_threads_per_sm, "Most resident threads per SM."),
      GPUSCOPE_COL(DeviceRow, max_blocks_per_sm, "Most resident blocks per SM."),
      GPUSCOPE_COL(DeviceRow, registers_per_sm, "32-bit registers per SM."),
      GPUSCOPE_COL(DeviceRow, registers_per_block, "32-bit registers one block may use."),
      GPUSCOPE_COL(DeviceRow, shared_memory_per_sm_bytes, "Shared memory per SM, bytes."),
      GPUSCOPE_COL(DeviceRow, shared_memory_per_block_bytes, "Shared memory one block may use by default, bytes."),
      GPUSCOPE_COL(DeviceRow, shared_memory_per_block_optin_bytes, "Shared memory one block may opt in to, bytes."),
      GPUSCOPE_COL(DeviceRow, warp_size, "Threads per warp."),
      GPUSCOPE_COL(DeviceRow, core_clock_khz, "SM clock, kHz."));
};

struct NvlinkRow {
  friend bool operator==(const NvlinkRow&, const NvlinkRow&) = default;
  int64_t session_id = 0;
  std::string device_uuid;
  std::string peer_uuid;
  std::string peer_kind;
  int64_t version = 0;
  int64_t links = 0;
  int64_t bandwidth_bytes_per_s = 0;
  int64_t through_nvswitch = 0;
};
template <>
struct TableOf<NvlinkRow> {
  static constexpr auto kTable = table<NvlinkRow>(
      "nvlink", "An NVLink connection of a GPU the session saw (CUPTI NVLINK): the topology collectives run on.",
      GPUSCOPE_COL(NvlinkRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(NvlinkRow, device_uuid, "UUID of the GPU at one end (device.uuid)."),
      GPUSCOPE_COL(NvlinkRow, peer_uuid, "UUID of the GPU at the other end; empty when it is not a GPU."),
      GPUSCOPE_COL(NvlinkRow, peer_kind, "What the other end is: `gpu`, `cpu` or `other`."),
      GPUSCOPE_COL(NvlinkRow, version, "NVLink version."),
      GPUSCOPE_COL(NvlinkRow, links, "Physical links between the two ends."),
      GPUSCOPE_COL(NvlinkRow, bandwidth_bytes_per_s,
                   "Bandwidth CUPTI reports for the connection, bytes/s: both directions of all its links together "
                   "(849.96 GB/s for the 18 NVLink 4 links between two H100s)."),
      GPUSCOPE_COL(NvlinkRow, through_nvswitch, "1 when an NVSwitch sits between the two ends."));
};

struct ContextRow {
  friend bool operator==(const ContextRow&, const ContextRow&) = default;
  int64_t session_id = 0;
  int64_t context_id = 0;
  int64_t device_id = 0;
  std::optional<int64_t> null_stream_id;
};
template <>
struct TableOf<ContextRow> {
  static constexpr auto kTable = table<ContextRow>(
      "context", "A CUDA context and the device it belongs to.",
      GPUSCOPE_COL(ContextRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(ContextRow, context_id, "CUPTI context id."),
      GPUSCOPE_COL(ContextRow, device_id, "Device of the context."),
      GPUSCOPE_COL(ContextRow, null_stream_id, "Stream id CUPTI reports for the legacy default stream."));
};

struct ThreadRow {
  friend bool operator==(const ThreadRow&, const ThreadRow&) = default;
  int64_t session_id = 0;
  int64_t thread_id = 0;
  std::string name;
};
template <>
struct TableOf<ThreadRow> {
  static constexpr auto kTable = table<ThreadRow>(
      "thread", "Names of host threads that called CUDA.", GPUSCOPE_COL(ThreadRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(ThreadRow, thread_id, "Operating-system thread id (gettid)."),
      GPUSCOPE_COL(ThreadRow, name, "Thread name (/proc/self/task/TID/comm)."));
};

// ---- GPU activities ------------------------------------------------------------------------------------

struct KernelConfigRow {
  friend bool operator==(const KernelConfigRow&, const KernelConfigRow&) = default;
  int64_t id = 0;
  StringId name;
  StringId mangled_name;
  int64_t grid_x = 0, grid_y = 0, grid_z = 0;
  int64_t block_x = 0, block_y = 0, block_z = 0;
  int64_t cluster_x = 0, cluster_y = 0, cluster_z = 0;
  int64_t registers_per_thread = 0;
  int64_t static_shared_bytes = 0;
  int64_t dynamic_shared_bytes = 0;
  int64_t local_memory_per_thread_bytes = 0;
};
template <>
struct TableOf<KernelConfigRow> {
  static constexpr auto kTable = internedTable<KernelConfigRow>(
      "kernel_config",
      "A kernel function with one launch configuration. Interned: every launch of the same function with the same "
      "grid, block and resources shares one row, which keeps kernel rows small.",
      GPUSCOPE_COL(KernelConfigRow, id, "Id referenced by kernel.config_id."),
      GPUSCOPE_COL(KernelConfigRow, name, "Demangled kernel name."),
      GPUSCOPE_COL(KernelConfigRow, mangled_name, "Mangled name, when it differs from the demangled one."),
      GPUSCOPE_COL(KernelConfigRow, grid_x, "Grid size in blocks, x."),
      GPUSCOPE_COL(KernelConfigRow, grid_y, "Grid size, y."), GPUSCOPE_COL(KernelConfigRow, grid_z, "Grid size, z."),
      GPUSCOPE_COL(KernelConfigRow, block_x, "Block size in threads, x."),
      GPUSCOPE_COL(KernelConfigRow, block_y, "Block size, y."),
      GPUSCOPE_COL(KernelConfigRow, block_z, "Block size, z."),
      GPUSCOPE_COL(KernelConfigRow, cluster_x, "Thread-block cluster size, x (0 = no cluster)."),
      GPUSCOPE_COL(KernelConfigRow, cluster_y, "Cluster size, y."),
      GPUSCOPE_COL(KernelConfigRow, cluster_z, "Cluster size, z."),
      GPUSCOPE_COL(KernelConfigRow, registers_per_thread, "Registers per thread."),
      GPUSCOPE_COL(KernelConfigRow, static_shared_bytes, "Static shared memory per block, bytes."),
      GPUSCOPE_COL(KernelConfigRow, dynamic_shared_bytes, "Dynamic shared memory per block, bytes."),
      GPUSCOPE_COL(KernelConfigRow, local_memory_per_thread_bytes,
                   "Local memory per thread (register spills), bytes."));
};

struct KernelRow {
  friend bool operator==(const KernelRow&, const KernelRow&) = default;
  int64_t session_id = 0;
  int64_t device_id = 0;
  int64_t context_id = 0;
  int64_t stream_id = 0;
  int64_t correlation_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::optional<int64_t> queued_ns;
  std::optional<int64_t> submitted_ns;
  int64_t config_id = 0;
  std::optional<int64_t> graph_id;
  std::optional<int64_t> graph_node_id;
};
inline constexpr std::string_view kKernelIndexes[] = {"start_ns", "session_id, correlation_id"};
template <>
struct TableOf<KernelRow> {
  static constexpr auto kTable = indexedTable<KernelRow>(
      "kernel", "One kernel execution on a GPU (CUPTI CONCURRENT_KERNEL). `kernel_view` joins in its configuration.",
      kKernelIndexes, GPUSCOPE_COL(KernelRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(KernelRow, device_id, "Device ordinal."), GPUSCOPE_COL(KernelRow, context_id, "CUPTI context id."),
      GPUSCOPE_COL(KernelRow, stream_id, "CUPTI stream id."),
      GPUSCOPE_COL(KernelRow, correlation_id, "Id of the API call that launched it (api_call.correlation_id)."),
      GPUSCOPE_COL(KernelRow, start_ns, "Execution start, ns."), GPUSCOPE_COL(KernelRow, end_ns, "Execution end, ns."),
      GPUSCOPE_COL(KernelRow, queued_ns, "When the launch entered the queue, ns (latency timestamps only)."),
      GPUSCOPE_COL(KernelRow, submitted_ns, "When the launch was submitted to the GPU, ns (latency timestamps only)."),
      GPUSCOPE_COL(KernelRow, config_id, "The function and launch configuration.", "kernel_config"),
      GPUSCOPE_COL(KernelRow, graph_id, "CUDA graph id when launched from a graph."),
      GPUSCOPE_COL(KernelRow, graph_node_id, "Graph node id when launched from a graph."));
};

struct MemcpyRow {
  friend bool operator==(const MemcpyRow&, const MemcpyRow&) = default;
  int64_t session_id = 0;
  int64_t device_id = 0;
  int64_t context_id = 0;
  int64_t stream_id = 0;
  int64_t correlation_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  CopyKind copy_kind = CopyKind::kUnknown;
  MemoryKind src_kind = MemoryKind::kUnknown;
  MemoryKind dst_kind = MemoryKind::kUnknown;
  int64_t bytes = 0;
  std::optional<int64_t> src_device_id;
  std::optional<int64_t> dst_device_id;
  int64_t is_async = 0;
  std::optional<int64_t> graph_id;
  std::optional<int64_t> graph_node_id;
};
inline constexpr std::string_view kMemcpyIndexes[] = {"start_ns", "session_id, correlation_id"};
template <>
struct TableOf<MemcpyRow> {
  static constexpr auto kTable = indexedTable<MemcpyRow>(
      "memcpy", "One memory copy performed by a GPU (CUPTI MEMCPY and MEMCPY2).", kMemcpyIndexes,
      GPUSCOPE_COL(MemcpyRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(MemcpyRow, device_id, "Device that performed the copy."),
      GPUSCOPE_COL(MemcpyRow, context_id, "CUPTI context id."), GPUSCOPE_COL(MemcpyRow, stream_id, "CUPTI stream id."),
      GPUSCOPE_COL(MemcpyRow, correlation_id, "Id of the API call that issued it."),
      GPUSCOPE_COL(MemcpyRow, start_ns, "Start, ns."), GPUSCOPE_COL(MemcpyRow, end_ns, "End, ns."),
      GPUSCOPE_COL(MemcpyRow, copy_kind, "Direction."),
      GPUSCOPE_COL(MemcpyRow, src_kind, "Kind of the source memory (pageable host memory makes copies synchronous)."),
      GPUSCOPE_COL(MemcpyRow, dst_kind, "Kind of the destination memory."),
      GPUSCOPE_COL(MemcpyRow, bytes, "Bytes copied."),
      GPUSCOPE_COL(MemcpyRow, src_device_id, "Source device of a peer-to-peer copy."),
      GPUSCOPE_COL(MemcpyRow, dst_device_id, "Destination device of a peer-to-peer copy."),
      GPUSCOPE_COL(MemcpyRow, is_async, "1 if issued by an asynchronous API call, else 0."),
      GPUSCOPE_COL(MemcpyRow, graph_id, "CUDA graph id when part of a graph."),
      GPUSCOPE_COL(MemcpyRow, graph_node_id, "Graph node id when part of a graph."));
};

struct MemsetRow {
  friend bool operator==(const MemsetRow&, const MemsetRow&) = default;
  int64_t session_id = 0;
  int64_t device_id = 0;
  int64_t context_id = 0;
  int64_t stream_id = 0;
  int64_t correlation_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t bytes = 0;
  int64_t value = 0;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  std::optional<int64_t> graph_id;
  std::optional<int64_t> graph_node_id;
};
inline constexpr std::string_view kMemsetIndexes[] = {"start_ns", "session_id, correlation_id"};
template <>
struct TableOf<MemsetRow> {
  static constexpr auto kTable = indexedTable<MemsetRow>(
      "memset", "One memory set performed by a GPU (CUPTI MEMSET).", kMemsetIndexes,
      GPUSCOPE_COL(MemsetRow, session_id, "Session.", "session"), GPUSCOPE_COL(MemsetRow, device_id, "Device ordinal."),
      GPUSCOPE_COL(MemsetRow, context_id, "CUPTI context id."), GPUSCOPE_COL(MemsetRow, stream_id, "CUPTI stream id."),
      GPUSCOPE_COL(MemsetRow, correlation_id, "Id of the API call that issued it."),
      GPUSCOPE_COL(MemsetRow, start_ns, "Start, ns."), GPUSCOPE_COL(MemsetRow, end_ns, "End, ns."),
      GPUSCOPE_COL(MemsetRow, bytes, "Bytes set."), GPUSCOPE_COL(MemsetRow, value, "Value written to each byte."),
      GPUSCOPE_COL(MemsetRow, memory_kind, "Kind of the memory set."),
      GPUSCOPE_COL(MemsetRow, graph_id, "CUDA graph id when part of a graph."),
      GPUSCOPE_COL(MemsetRow, graph_node_id, "Graph node id when part of a graph."));
};

struct GraphLaunchRow {
  friend bool operator==(const GraphLaunchRow&, const GraphLaunchRow&) = default;
  int64_t session_id = 0;
  int64_t device_id = 0;
  int64_t context_id = 0;
  int64_t stream_id = 0;
  int64_t correlation_id = 0;
  int64_t graph_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};
inline constexpr std::string_view kGraphLaunchIndexes[] = {"start_ns", "session_id, correlation_id"};
template <>
struct TableOf<GraphLaunchRow> {
  static constexpr auto kTable = indexedTable<GraphLaunchRow>(
      "graph_launch", "A whole CUDA graph execution, when graphs are traced as one unit (CUPTI GRAPH_TRACE).",
      kGraphLaunchIndexes, GPUSCOPE_COL(GraphLaunchRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(GraphLaunchRow, device_id, "Device ordinal."),
      GPUSCOPE_COL(GraphLaunchRow, context_id, "CUPTI context id."),
      GPUSCOPE_COL(GraphLaunchRow, stream_id, "CUPTI stream id."),
      GPUSCOPE_COL(GraphLaunchRow, correlation_id, "Id of the cudaGraphLaunch call."),
      GPUSCOPE_COL(GraphLaunchRow, graph_id, "CUDA graph id."),
      GPUSCOPE_COL(GraphLaunchRow, start_ns, "Start of the first node, ns."),
      GPUSCOPE_COL(GraphLaunchRow, end_ns, "End of the last node, ns."));
};

// ---- host side -----------------------------------------------------------------------------------------

struct ApiCallRow {
  friend bool operator==(const ApiCallRow&, const ApiCallRow&) = default;
  int64_t session_id = 0;
  ApiKind api = ApiKind::kRuntime;
  StringId name;
  int64_t cbid = 0;
  int64_t thread_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t correlation_id = 0;
  int64_t return_code = 0;
};
inline constexpr std::string_view kApiCallIndexes[] = {"start_ns", "session_id, correlation_id"};
template <>
struct TableOf<ApiCallRow> {
  static constexpr auto kTable = indexedTable<ApiCallRow>(
      "api_call", "One CUDA runtime or driver API call on a host thread.", kApiCallIndexes,
      GPUSCOPE_COL(ApiCallRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(ApiCallRow, api, "Runtime or driver API."),
      GPUSCOPE_COL(ApiCallRow, name, "Function name, e.g. `cudaLaunchKernel`."),
      GPUSCOPE_COL(ApiCallRow, cbid, "CUPTI callback id of the function."),
      GPUSCOPE_COL(ApiCallRow, thread_id, "Calling thread (gettid)."), GPUSCOPE_COL(ApiCallRow, start_ns, "Entry, ns."),
      GPUSCOPE_COL(ApiCallRow, end_ns, "Return, ns."),
      GPUSCOPE_COL(ApiCallRow, correlation_id, "Links the call to the GPU work it issued."),
      GPUSCOPE_COL(ApiCallRow, return_code, "CUresult/cudaError_t returned (0 = success)."));
};

struct SyncRow {
  friend bool operator==(const SyncRow&, const SyncRow&) = default;
  int64_t session_id = 0;
  SyncKind kind = SyncKind::kUnknown;
  int64_t context_id = 0;
  std::optional<int64_t> stream_id;
  std::optional<int64_t> event_id;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t correlation_id = 0;
};
template <>
struct TableOf<SyncRow> {
  static constexpr auto kTable = table<SyncRow>(
      "sync", "A synchronisation: the host or a stream waited (CUPTI SYNCHRONIZATION; recorded with --trace sync).",
      GPUSCOPE_COL(SyncRow, session_id, "Session.", "session"), GPUSCOPE_COL(SyncRow, kind, "What waited for what."),
      GPUSCOPE_COL(SyncRow, context_id, "CUPTI context id."),
      GPUSCOPE_COL(SyncRow, stream_id, "Stream waited on or waiting."),
      GPUSCOPE_COL(SyncRow, event_id, "CUDA event waited on."), GPUSCOPE_COL(SyncRow, start_ns, "Wait began, ns."),
      GPUSCOPE_COL(SyncRow, end_ns, "Wait ended, ns."),
      GPUSCOPE_COL(SyncRow, correlation_id, "Id of the API call that waited."));
};

struct MemoryEventRow {
  friend bool operator==(const MemoryEventRow&, const MemoryEventRow&) = default;
  int64_t session_id = 0;
  int64_t device_id = 0;
  std::optional<int64_t> context_id;
  std::optional<int64_t> stream_id;
  std::optional<int64_t> correlation_id;
  int64_t timestamp_ns = 0;
  MemoryOp op = MemoryOp::kAllocation;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  int64_t address = 0;
  int64_t bytes = 0;
  int64_t is_async = 0;
  std::optional<int64_t> pool_address;
  StringId name;
};
inline constexpr std::string_view kMemoryEventIndexes[] = {"timestamp_ns"};
template <>
struct TableOf<MemoryEventRow> {
  static constexpr auto kTable = indexedTable<MemoryEventRow>(
      "memory_event", "A device or host memory allocation or release seen by CUDA (CUPTI MEMORY2).",
      kMemoryEventIndexes, GPUSCOPE_COL(MemoryEventRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(MemoryEventRow, device_id, "Device ordinal."),
      GPUSCOPE_COL(MemoryEventRow, context_id, "CUPTI context id."),
      GPUSCOPE_COL(MemoryEventRow, stream_id, "Stream of a stream-ordered (async) allocation."),
      GPUSCOPE_COL(MemoryEventRow, correlation_id, "Id of the API call that allocated or freed."),
      GPUSCOPE_COL(MemoryEventRow, timestamp_ns, "When it happened, ns."),
      GPUSCOPE_COL(MemoryEventRow, op, "Allocation or release."),
      GPUSCOPE_COL(MemoryEventRow, memory_kind, "Kind of memory."),
      GPUSCOPE_COL(MemoryEventRow, address, "Start address (as a signed 64-bit integer)."),
      GPUSCOPE_COL(MemoryEventRow, bytes, "Size, bytes."),
      GPUSCOPE_COL(MemoryEventRow, is_async, "1 for stream-ordered allocations (cudaMallocAsync), else 0."),
      GPUSCOPE_COL(MemoryEventRow, pool_address, "Memory pool it came from, for pool allocations."),
      GPUSCOPE_COL(MemoryEventRow, name, "Symbol name, for module globals."));
};

struct AllocatorEventRow {
  friend bool operator==(const AllocatorEventRow&, const AllocatorEventRow&) = default;
  int64_t session_id = 0;
  int64_t device_id = 0;
  int64_t timestamp_ns = 0;
  AllocatorAction action = AllocatorAction::kAlloc;
  int64_t address = 0;
  int64_t bytes = 0;
  std::optional<int64_t> stream;
};
inline constexpr std::string_view kAllocatorEventIndexes[] = {"timestamp_ns"};
template <>
struct TableOf<AllocatorEventRow> {
  static constexpr auto kTable = indexedTable<AllocatorEventRow>(
      "allocator_event",
      "A PyTorch caching-allocator event: tensors handed out of and back to the segments CUDA sees in "
      "memory_event (recorded with `record --torch`, or imported from a memory snapshot).",
      kAllocatorEventIndexes, GPUSCOPE_COL(AllocatorEventRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(AllocatorEventRow, device_id, "Device ordinal."),
      GPUSCOPE_COL(AllocatorEventRow, timestamp_ns, "When it happened, ns (PyTorch's clock has µs resolution)."),
      GPUSCOPE_COL(AllocatorEventRow, action, "What happened."),
      GPUSCOPE_COL(AllocatorEventRow, address, "Block or segment start address (as a signed 64-bit integer)."),
      GPUSCOPE_COL(AllocatorEventRow, bytes, "Size, bytes (the block's, rounded up by the allocator)."),
      GPUSCOPE_COL(AllocatorEventRow, stream, "CUDA stream handle the block belongs to."));
};

struct TensorRoleRow {
  friend bool operator==(const TensorRoleRow&, const TensorRoleRow&) = default;
  int64_t session_id = 0;
  int64_t device_id = 0;
  int64_t timestamp_ns = 0;
  TensorRole role = TensorRole::kParameter;
  int64_t address = 0;
  int64_t bytes = 0;
  StringId name;
};
template <>
struct TableOf<TensorRoleRow> {
  static constexpr auto kTable = table<TensorRoleRow>(
      "tensor_role",
      "What a PyTorch tensor's storage is (parameter, gradient, optimizer state), seen by the PyTorch bridge at "
      "a moment; the allocator_event block live then at that address is that tensor's memory.",
      GPUSCOPE_COL(TensorRoleRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(TensorRoleRow, device_id, "Device ordinal."),
      GPUSCOPE_COL(TensorRoleRow, timestamp_ns, "When it was seen, ns."),
      GPUSCOPE_COL(TensorRoleRow, role, "What the tensor is."),
      GPUSCOPE_COL(TensorRoleRow, address, "Storage start address (as a signed 64-bit integer)."),
      GPUSCOPE_COL(TensorRoleRow, bytes, "Storage size, bytes."),
      GPUSCOPE_COL(TensorRoleRow, name, "Qualified name: the parameter's, with .grad or the state's key appended."));
};

struct MemoryPoolEventRow {
  friend bool operator==(const MemoryPoolEventRow&, const MemoryPoolEventRow&) = default;
  int64_t session_id = 0;
  int64_t device_id = 0;
  int64_t timestamp_ns = 0;
  PoolOp op = PoolOp::kCreated;
  int64_t pool_address = 0;
  int64_t size_bytes = 0;
  std::optional<int64_t> release_threshold_bytes;
  std::optional<int64_t> utilized_bytes;
};
template <>
struct TableOf<MemoryPoolEventRow> {
  static constexpr auto kTable = table<MemoryPoolEventRow>(
      "memory_pool_event", "A CUDA memory pool was created, destroyed or trimmed (CUPTI MEMORY_POOL).",
      GPUSCOPE_COL(MemoryPoolEventRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(MemoryPoolEventRow, device_id, "Device ordinal."),
      GPUSCOPE_COL(MemoryPoolEventRow, timestamp_ns, "When it happened, ns."),
      GPUSCOPE_COL(MemoryPoolEventRow, op, "What happened."),
      GPUSCOPE_COL(MemoryPoolEventRow, pool_address, "Pool base address."),
      GPUSCOPE_COL(MemoryPoolEventRow, size_bytes, "Pool size, bytes."),
      GPUSCOPE_COL(MemoryPoolEventRow, release_threshold_bytes, "Release threshold, bytes."),
      GPUSCOPE_COL(MemoryPoolEventRow, utilized_bytes, "Bytes in use after a trim."));
};

struct MemoryUsageRow {
  friend bool operator==(const MemoryUsageRow&, const MemoryUsageRow&) = default;
  int64_t session_id = 0;
  int64_t device_id = 0;
  int64_t timestamp_ns = 0;
  std::string allocator;
  int64_t in_use_bytes = 0;
  std::optional<int64_t> peak_in_use_bytes;
  std::optional<int64_t> reserved_bytes;
  std::optional<int64_t> limit_bytes;
};
template <>
struct TableOf<MemoryUsageRow> {
  static constexpr auto kTable = table<MemoryUsageRow>(
      "memory_usage",
      "What an allocator that hands buffers out of its own reservation has in use, as it reports it (recorded "
      "with `record --jax`: each GPU's memory_stats() from XLA), sampled when a figure changed.",
      GPUSCOPE_COL(MemoryUsageRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(MemoryUsageRow, device_id, "Device ordinal, as the allocator numbers it."),
      GPUSCOPE_COL(MemoryUsageRow, timestamp_ns, "When it was read, ns (the bridge's clock has µs resolution)."),
      GPUSCOPE_COL(MemoryUsageRow, allocator, "Whose figures: `xla` (JAX's memory_stats())."),
      GPUSCOPE_COL(MemoryUsageRow, in_use_bytes, "Bytes in use by the program's buffers (bytes_in_use)."),
      GPUSCOPE_COL(MemoryUsageRow, peak_in_use_bytes, "The most in use since the allocator started, bytes."),
      GPUSCOPE_COL(MemoryUsageRow, reserved_bytes, "Bytes the allocator holds from CUDA (XLA's pool_bytes)."),
      GPUSCOPE_COL(MemoryUsageRow, limit_bytes, "The most the allocator may hold, bytes (bytes_limit)."));
};

// Unified (managed) memory moved on demand: CUPTI's unified-memory counters, recorded once the program allocates
// managed memory. Processor ids are CUPTI's: a GPU's device ordinal, or the CPU's id for the host.
struct UnifiedMemoryRow {
  friend bool operator==(const UnifiedMemoryRow&, const UnifiedMemoryRow&) = default;
  int64_t session_id = 0;
  MigrationKind kind = MigrationKind::kUnknown;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t value = 0;
  int64_t address = 0;
  std::optional<int64_t> source_id;
  std::optional<int64_t> destination_id;
  int64_t flags = 0;
};
inline constexpr std::string_view kUnifiedMemoryIndexes[] = {"start_ns"};
template <>
struct TableOf<UnifiedMemoryRow> {
  static constexpr auto kTable = indexedTable<UnifiedMemoryRow>(
      "unified_memory",
      "Unified memory moved or faulted on demand (CUPTI UNIFIED_MEMORY_COUNTER), recorded from the program's first "
      "managed allocation on.",
      kUnifiedMemoryIndexes, GPUSCOPE_COL(UnifiedMemoryRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(UnifiedMemoryRow, kind, "What happened."),
      GPUSCOPE_COL(UnifiedMemoryRow, start_ns,
                   "Migration began on the GPU, or the driver began serving the fault, ns."),
      GPUSCOPE_COL(UnifiedMemoryRow, end_ns,
                   "Migration ended, or the faulting accesses were queued for replay, ns; start_ns where CUPTI gives "
                   "no end (CPU faults, thrashing, remote maps)."),
      GPUSCOPE_COL(UnifiedMemoryRow, value,
                   "Bytes for migrations, thrashing and remote maps; faults in the group for a GPU fault; the "
                   "faulting instruction's address for a CPU fault."),
      GPUSCOPE_COL(UnifiedMemoryRow, address, "Virtual address of the pages (as a signed 64-bit integer)."),
      GPUSCOPE_COL(UnifiedMemoryRow, source_id, "Processor the pages came from (or that faulted)."),
      GPUSCOPE_COL(UnifiedMemoryRow, destination_id, "Processor the pages went to."),
      GPUSCOPE_COL(UnifiedMemoryRow, flags,
                   "CUPTI's flags: the access type of a GPU fault, the cause of a migration or remote map."));
};

struct NvtxRow {
  friend bool operator==(const NvtxRow&, const NvtxRow&) = default;
  int64_t session_id = 0;
  NvtxKind kind = NvtxKind::kRange;
  StringId domain;
  StringId name;
  int64_t thread_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::optional<int64_t> category;
  std::optional<int64_t> color;
};
inline constexpr std::string_view kNvtxIndexes[] = {"start_ns"};
template <>
struct TableOf<NvtxRow> {
  static constexpr auto kTable = indexedTable<NvtxRow>(
      "nvtx", "An NVTX range or mark (CUPTI MARKER).", kNvtxIndexes,
      GPUSCOPE_COL(NvtxRow, session_id, "Session.", "session"), GPUSCOPE_COL(NvtxRow, kind, "Range or mark."),
      GPUSCOPE_COL(NvtxRow, domain, "NVTX domain; NULL for the default domain."),
      GPUSCOPE_COL(NvtxRow, name, "Message text."), GPUSCOPE_COL(NvtxRow, thread_id, "Thread that opened it."),
      GPUSCOPE_COL(NvtxRow, start_ns, "Start, ns."),
      GPUSCOPE_COL(NvtxRow, end_ns, "End, ns (equal to start_ns for marks)."),
      GPUSCOPE_COL(NvtxRow, category, "NVTX category."), GPUSCOPE_COL(NvtxRow, color, "ARGB colour, if set."));
};

struct CollectiveRow {
  friend bool operator==(const CollectiveRow&, const CollectiveRow&) = default;
  int64_t session_id = 0;
  int64_t thread_id = 0;
  int64_t timestamp_ns = 0;
  int64_t communicator = 0;
  int64_t communicator_ranks = 0;
  int64_t communicator_nodes = 0;
  int64_t rank = 0;
  std::optional<int64_t> sequence;
  StringId operation;
  int64_t count = 0;
  StringId datatype;
  std::optional<int64_t> peer;
  std::optional<int64_t> root;
  std::optional<int64_t> channels;
  StringId algorithm;
  StringId protocol;
};
inline constexpr std::string_view kCollectiveIndexes[] = {"timestamp_ns"};
template <>
struct TableOf<CollectiveRow> {
  static constexpr auto kTable = indexedTable<CollectiveRow>(
      "collective",
      "An NCCL collective or point-to-point operation as NCCL's profiler plugin interface describes it when the "
      "program enqueues it; the NCCL kernel the same thread launches next carries it out.",
      kCollectiveIndexes, GPUSCOPE_COL(CollectiveRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(CollectiveRow, thread_id, "Host thread that enqueued it."),
      GPUSCOPE_COL(CollectiveRow, timestamp_ns, "When NCCL handed it to the profiler, just before its launch, ns."),
      GPUSCOPE_COL(CollectiveRow, communicator, "NCCL's hash of the communicator, the same in every rank of it."),
      GPUSCOPE_COL(CollectiveRow, communicator_ranks, "Ranks in the communicator."),
      GPUSCOPE_COL(CollectiveRow, communicator_nodes, "Hosts the communicator spans."),
      GPUSCOPE_COL(CollectiveRow, rank, "This process's rank in the communicator."),
      GPUSCOPE_COL(CollectiveRow, sequence,
                   "Sequence number of a collective in its communicator (NULL for send/recv)."),
      GPUSCOPE_COL(CollectiveRow, operation, "NCCL's name of the operation, e.g. `AllReduce`, `Send`."),
      GPUSCOPE_COL(CollectiveRow, count,
                   "Element count as passed to NCCL (per rank for AllGather's send and "
                   "ReduceScatter's receive buffer)."),
      GPUSCOPE_COL(CollectiveRow, datatype, "NCCL's name of the element type, e.g. `ncclFloat32`."),
      GPUSCOPE_COL(CollectiveRow, peer, "Peer rank of a send or receive."),
      GPUSCOPE_COL(CollectiveRow, root, "Root rank of a rooted collective (Broadcast, Reduce)."),
      GPUSCOPE_COL(CollectiveRow, channels, "Channels (thread blocks) NCCL chose."),
      GPUSCOPE_COL(CollectiveRow, algorithm, "Algorithm NCCL chose, e.g. `RING`; NULL for send/recv."),
      GPUSCOPE_COL(CollectiveRow, protocol, "Protocol NCCL chose, e.g. `LL128`; NULL for send/recv."));
};

struct EnvironmentRow {
  friend bool operator==(const EnvironmentRow&, const EnvironmentRow&) = default;
  int64_t session_id = 0;
  std::string name;
  std::string value;
};
template <>
struct TableOf<EnvironmentRow> {
  static constexpr auto kTable = table<EnvironmentRow>(
      "environment",
      "Environment variables of the process that change how CUDA, NCCL, PyTorch or XLA behave (names starting "
      "with CUDA_, NCCL_, PYTORCH_, TORCH_, XLA_, JAX_, and OMP_NUM_THREADS), read when recording began; NCCL's "
      "again when the first communicator was created.",
      GPUSCOPE_COL(EnvironmentRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(EnvironmentRow, name, "Variable name."), GPUSCOPE_COL(EnvironmentRow, value, "Its value."));
};

struct OverheadRow {
  friend bool operator==(const OverheadRow&, const OverheadRow&) = default;
  int64_t session_id = 0;
  OverheadKind kind = OverheadKind::kUnknown;
  std::optional<int64_t> thread_id;
  std::optional<int64_t> device_id;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};
template <>
struct TableOf<OverheadRow> {
  static constexpr auto kTable = table<OverheadRow>(
      "overhead", "Time spent by CUDA or CUPTI on work the program did not ask for (CUPTI OVERHEAD).",
      GPUSCOPE_COL(OverheadRow, session_id, "Session.", "session"),
      GPUSCOPE_COL(OverheadRow, kind, "What the overhead was."),
      GPUSCOPE_COL(OverheadRow, thread_id, "Host thread that paid it."),
      GPUSCOPE_COL(OverheadRow, device_id, "Device that paid it."), GPUSCOPE_COL(OverheadRow, start_ns, "Start, ns."),
      GPUSCOPE_COL(OverheadRow, end_ns, "End, ns."));
};

struct DataQualityRow {
  friend bool operator==(const DataQualityRow&, const DataQualityRow&) = default;
  std::optional<int64_t> session_id;
  Severity severity = Severity::kInfo;
  std::string code;
  int64_t count = 1;
  std::string message;
  std::optional<int64_t> timestamp_ns;
};
template <>
struct TableOf<DataQualityRow> {
  static constexpr auto kTable = table<DataQualityRow>(
      "data_quality",
      "What is missing or doubtful in this trace (dropped records, collector errors, another profiler holding "
      "CUPTI). Every consumer shows these.",
      GPUSCOPE_COL(DataQualityRow, session_id, "Session it concerns; NULL for the whole file.", "session"),
      GPUSCOPE_COL(DataQualityRow, severity, "How much it matters."),
      GPUSCOPE_COL(DataQualityRow, code, "Stable machine-readable code, e.g. `dropped_records`."),
      GPUSCOPE_COL(DataQualityRow, count, "How many times, or how many records (e.g. records dropped)."),
      GPUSCOPE_COL(DataQualityRow, message, "One sentence for the user: what happened and what it affects."),
      GPUSCOPE_COL(DataQualityRow, timestamp_ns, "When it was noticed, ns."));
};

#undef GPUSCOPE_COL

// Every table of the trace, in creation order.
using AllRows =
    std::tuple<TraceInfoRow, StringRow, SessionRow, ClockSyncRow, DeviceRow, NvlinkRow, ContextRow, ThreadRow,
               KernelConfigRow, KernelRow, MemcpyRow, MemsetRow, GraphLaunchRow, ApiCallRow, SyncRow, MemoryEventRow,
               MemoryPoolEventRow, AllocatorEventRow, TensorRoleRow, MemoryUsageRow, UnifiedMemoryRow, NvtxRow,
               CollectiveRow, EnvironmentRow, OverheadRow, DataQualityRow>;
// Tables whose rows are events on a timeline; the others describe the file, its processes and devices.
using EventRows =
    std::tuple<KernelRow, MemcpyRow, MemsetRow, GraphLaunchRow, ApiCallRow, SyncRow, MemoryEventRow, MemoryPoolEventRow,
               AllocatorEventRow, MemoryUsageRow, UnifiedMemoryRow, NvtxRow, CollectiveRow, OverheadRow>;
// Every enum stored in the trace, each with its lookup table.
using AllEnums = std::tuple<ApiKind, CopyKind, MemoryKind, MigrationKind, SyncKind, MemoryOp, PoolOp, AllocatorAction,
                            TensorRole, NvtxKind, OverheadKind, Severity>;

template <typename Row>
constexpr const auto& tableOf() {
  return TableOf<Row>::kTable;
}

template <typename Fn>
void forEachTable(Fn&& fn) {
  std::apply([&](auto... rows) { (fn(tableOf<decltype(rows)>()), ...); }, AllRows{});
}

template <typename Fn>
void forEachRowType(Fn&& fn) {
  std::apply([&](auto... rows) { (fn(rows), ...); }, AllRows{});
}

}  // namespace gpuscope::schema
