#include "collector/record_converter.h"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>

namespace gpuscope::collector {

using namespace schema;

namespace {

// CUPTI's ids are unsigned 64-bit; SQLite integers are signed. Addresses above 2^63 wrap to negative
// numbers and come back bit for bit.
int64_t i64(uint64_t v) { return static_cast<int64_t>(v); }

std::optional<int64_t> graphIdOf(uint32_t graph_id) {
  return graph_id == 0 ? std::nullopt : std::optional<int64_t>(graph_id);
}

std::optional<int64_t> graphNodeOf(uint32_t graph_id, uint64_t node) {
  return graph_id == 0 ? std::nullopt : std::optional<int64_t>(i64(node));
}

MemoryKind memoryKindOf(uint32_t cupti_kind) {
  return cupti_kind <= CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC ? static_cast<MemoryKind>(cupti_kind)
                                                                 : MemoryKind::kUnknown;
}

OverheadKind overheadKindOf(CUpti_ActivityOverheadKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return OverheadKind::kDriverCompiler;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return OverheadKind::kBufferFlush;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return OverheadKind::kInstrumentation;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return OverheadKind::kResource;
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return OverheadKind::kModuleLoading;
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return OverheadKind::kLazyFunctionLoading;
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return OverheadKind::kCommandBufferFull;
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return OverheadKind::kActivityBufferRequest;
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return OverheadKind::kUvmActivityInit;
    default: return OverheadKind::kUnknown;
  }
}

std::string uuidText(const CUuuid& uuid) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    const auto b = static_cast<unsigned char>(uuid.bytes[i]);
    text += kHex[b >> 4];
    text += kHex[b & 0xF];
  }
  return text;
}

}  // namespace

std::string demangle(const char* name) {
  if (!name) return {};
  if (std::strncmp(name, "_Z", 2) != 0) return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || !demangled) return name;
  std::string result(demangled);
  std::free(demangled);
  return result;
}

RecordConverter::RecordConverter(TraceWriter& writer, int64_t session_id, ApiNameLookup api_names)
    : writer_(writer), session_id_(session_id), api_names_(std::move(api_names)) {}

Status RecordConverter::convert(const CUpti_Activity& record) {
  ++converted_;
  // CUPTI delivers each kind as its own struct; the kind field tells which one this record is.
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return convertKernel(reinterpret_cast<const CUpti_ActivityKernel10&>(record));
    case CUPTI_ACTIVITY_KIND_MEMCPY: return convertMemcpy(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record));
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return convertPeerCopy(reinterpret_cast<const CUpti_ActivityMemcpyPtoP4&>(record));
    case CUPTI_ACTIVITY_KIND_MEMSET: return convertMemset(reinterpret_cast<const CUpti_ActivityMemset4&>(record));
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      return convertApi(reinterpret_cast<const CUpti_ActivityAPI&>(record), ApiKind::kRuntime);
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return convertApi(reinterpret_cast<const CUpti_ActivityAPI&>(record), ApiKind::kDriver);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return convertSync(reinterpret_cast<const CUpti_ActivitySynchronization2&>(record));
    case CUPTI_ACTIVITY_KIND_MEMORY2: return convertMemory(reinterpret_cast<const CUpti_ActivityMemory4&>(record));
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
      return convertMemoryPool(reinterpret_cast<const CUpti_ActivityMemoryPool3&>(record));
    case CUPTI_ACTIVITY_KIND_MARKER: return convertMarker(reinterpret_cast<const CUpti_ActivityMarker2&>(record));
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return convertOverhead(reinterpret_cast<const CUpti_ActivityOverhead3&>(record));
    case CUPTI_ACTIVITY_KIND_DEVICE: return convertDevice(reinterpret_cast<const CUpti_ActivityDevice5&>(record));
    case CUPTI_ACTIVITY_KIND_CONTEXT: return convertContext(reinterpret_cast<const CUpti_ActivityContext3&>(record));
    case CUPTI_ACTIVITY_KIND_NVLINK: return convertNvlink(reinterpret_cast<const CUpti_ActivityNvLink4&>(record));
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
      return convertUnifiedMemory(reinterpret_cast<const CUpti_ActivityUnifiedMemoryCounter3&>(record));
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
      return convertGraphTrace(reinterpret_cast<const CUpti_ActivityGraphTrace2&>(record));
    default:
      --converted_;
      ++skipped_;
      return Status::ok();
  }
}

// A record flushed before its work finished has end 0 (CUPTI_TIMESTAMP_UNKNOWN): keep it as a zero-length
// event at its start and count it, rather than invent an end.
int64_t RecordConverter::endOf(uint64_t start, uint64_t end) {
  if (end == 0 || end < start) {
    ++unfinished_;
    return i64(start);
  }
  return i64(end);
}

schema::StringId RecordConverter::kernelName(const char* name, schema::StringId* mangled) {
  const std::string raw = name ? name : "<unnamed kernel>";
  auto it = kernel_names_.find(raw);
  if (it == kernel_names_.end()) {
    const std::string readable = demangle(raw.c_str());
    const StringId readable_id = writer_.intern(readable);
    const StringId mangled_id = readable == raw ? StringId{} : writer_.intern(raw);
    it = kernel_names_.emplace(raw, std::make_pair(readable_id, mangled_id)).first;
  }
  *mangled = it->second.second;
  return it->second.first;
}

schema::StringId RecordConverter::apiName(schema::ApiKind api, uint32_t cbid) {
  const uint64_t key = (static_cast<uint64_t>(api) << 32) | cbid;
  auto it = api_name_ids_.find(key);
  if (it == api_name_ids_.end()) it = api_name_ids_.emplace(key, writer_.intern(api_names_(api, cbid))).first;
  return it->second;
}

Status RecordConverter::convertKernel(const CUpti_ActivityKernel10& k) {
  KernelConfigRow c;
  c.name = kernelName(k.name, &c.mangled_name);
  c.grid_x = k.gridX, c.grid_y = k.gridY, c.grid_z = k.gridZ;
  c.block_x = k.blockX, c.block_y = k.blockY, c.block_z = k.blockZ;
  c.cluster_x = k.clusterX, c.cluster_y = k.clusterY, c.cluster_z = k.clusterZ;
  c.registers_per_thread = k.registersPerThread;
  c.static_shared_bytes = k.staticSharedMemory;
  c.dynamic_shared_bytes = k.dynamicSharedMemory;
  c.local_memory_per_thread_bytes = k.localMemoryPerThread;
  KernelRow row{session_id_, k.deviceId, k.contextId, k.streamId, k.correlationId, i64(k.start), endOf(k.start, k.end)};
  // queued/submitted are 0 unless latency timestamps are enabled (and for graph kernels).
  if (k.queued != 0) row.queued_ns = i64(k.queued);
  if (k.submitted != 0) row.submitted_ns = i64(k.submitted);
  row.config_id = writer_.intern(c);
  row.graph_id = graphIdOf(k.graphId);
  row.graph_node_id = graphNodeOf(k.graphId, k.graphNodeId);
  return writer_.append(row);
}

// The fields CUPTI's copy and peer-copy records share.
template <typename Record>
MemcpyRow RecordConverter::copyRow(const Record& m, CopyKind kind) {
  MemcpyRow row{session_id_,
                m.deviceId,
                m.contextId,
                m.streamId,
                m.correlationId,
                i64(m.start),
                endOf(m.start, m.end),
                kind,
                memoryKindOf(m.srcKind),
                memoryKindOf(m.dstKind),
                i64(m.bytes)};
  row.is_async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0;
  row.graph_id = graphIdOf(m.graphId);
  row.graph_node_id = graphNodeOf(m.graphId, m.graphNodeId);
  return row;
}

Status RecordConverter::convertMemcpy(const CUpti_ActivityMemcpy6& m) {
  const CopyKind kind =
      m.copyKind <= CUPTI_ACTIVITY_MEMCPY_KIND_PTOP ? static_cast<CopyKind>(m.copyKind) : CopyKind::kUnknown;
  return writer_.append(copyRow(m, kind));
}

Status RecordConverter::convertPeerCopy(const CUpti_ActivityMemcpyPtoP4& m) {
  MemcpyRow row = copyRow(m, CopyKind::kPeerToPeer);
  row.src_device_id = m.srcDeviceId;
  row.dst_device_id = m.dstDeviceId;
  return writer_.append(row);
}

Status RecordConverter::convertMemset(const CUpti_ActivityMemset4& m) {
  MemsetRow row{session_id_,
                m.deviceId,
                m.contextId,
                m.streamId,
                m.correlationId,
                i64(m.start),
                endOf(m.start, m.end),
                i64(m.bytes),
                m.value,
                memoryKindOf(m.memoryKind)};
  row.graph_id = graphIdOf(m.graphId);
  row.graph_node_id = graphNodeOf(m.graphId, m.graphNodeId);
  return writer_.append(row);
}

Status RecordConverter::convertApi(const CUpti_ActivityAPI& a, schema::ApiKind api) {
  threads_.insert(a.threadId);
  return writer_.append(ApiCallRow{session_id_, api, apiName(api, a.cbid), a.cbid, a.threadId, i64(a.start),
                                   endOf(a.start, a.end), a.correlationId, a.returnValue});
}

Status RecordConverter::convertSync(const CUpti_ActivitySynchronization2& s) {
  SyncRow row{session_id_,
              s.type <= CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE ? static_cast<SyncKind>(s.type)
                                                                                : SyncKind::kUnknown,
              s.contextId};
  // CUPTI reports "no stream" and "no event" as CUPTI_SYNCHRONIZATION_INVALID_VALUE (all ones).
  if (s.streamId != CUPTI_SYNCHRONIZATION_INVALID_VALUE) row.stream_id = s.streamId;
  if (s.cudaEventId != CUPTI_SYNCHRONIZATION_INVALID_VALUE) row.event_id = s.cudaEventId;
  row.start_ns = i64(s.start);
  row.end_ns = endOf(s.start, s.end);
  row.correlation_id = s.correlationId;
  return writer_.append(row);
}

Status RecordConverter::convertMemory(const CUpti_ActivityMemory4& m) {
  MemoryEventRow row;
  row.session_id = session_id_;
  row.device_id = m.deviceId;
  if (m.contextId != 0) row.context_id = m.contextId;
  if (m.isAsync) row.stream_id = m.streamId;
  if (m.correlationId != 0) row.correlation_id = m.correlationId;
  row.timestamp_ns = i64(m.timestamp);
  row.op = m.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE ? MemoryOp::kRelease
                                                                                 : MemoryOp::kAllocation;
  row.memory_kind = memoryKindOf(m.memoryKind);
  row.address = i64(m.address);
  row.bytes = i64(m.bytes);
  row.is_async = m.isAsync ? 1 : 0;
  if (m.memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID) {
    row.pool_address = i64(m.memoryPoolConfig.address);
  }
  if (m.name) row.name = writer_.intern(m.name);
  return writer_.append(row);
}

Status RecordConverter::convertMemoryPool(const CUpti_ActivityMemoryPool3& p) {
  MemoryPoolEventRow row{session_id_, p.deviceId, i64(p.timestamp)};
  switch (p.memoryPoolOperationType) {
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED: row.op = PoolOp::kDestroyed; break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED: row.op = PoolOp::kTrimmed; break;
    default: row.op = PoolOp::kCreated; break;
  }
  row.pool_address = i64(p.address);
  row.size_bytes = i64(p.size);
  row.release_threshold_bytes = i64(p.releaseThreshold);
  if (row.op == PoolOp::kTrimmed) row.utilized_bytes = i64(p.utilizedSize);
  return writer_.append(row);
}

// CUPTI's counter kinds are numbered as MigrationKind; one it adds later is stored as unknown. Where CUPTI gives
// no end (CPU faults, thrashing, remote maps) or no single processor, none is stored.
Status RecordConverter::convertUnifiedMemory(const CUpti_ActivityUnifiedMemoryCounter3& u) {
  UnifiedMemoryRow row{session_id_};
  const bool known = u.counterKind > CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_UNKNOWN &&
                     u.counterKind < CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_COUNT;
  row.kind = known ? static_cast<MigrationKind>(u.counterKind) : MigrationKind::kUnknown;
  const bool ends =
      isMigration(row.kind) || row.kind == MigrationKind::kDeviceFault || row.kind == MigrationKind::kThrottling;
  row.start_ns = i64(u.start);
  row.end_ns = ends && u.end >= u.start ? i64(u.end) : row.start_ns;
  row.value = i64(u.value);
  row.address = i64(u.address);
  // A thrashing record's srcId is a mask of the GPUs fighting over the pages, not one processor.
  if (row.kind != MigrationKind::kHostFault && row.kind != MigrationKind::kThrashing) row.source_id = u.srcId;
  if (isMigration(row.kind) || row.kind == MigrationKind::kRemoteMap) row.destination_id = u.dstId;
  row.flags = u.flags;
  return writer_.append(row);
}

// NVTX push/pop and start/end ranges arrive as a START and an END record sharing an id; the END has no name.
Status RecordConverter::convertMarker(const CUpti_ActivityMarker2& m) {
  const int64_t thread = m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m.objectId.pt.threadId : 0;
  threads_.insert(thread);
  const StringId domain = m.domain ? writer_.intern(m.domain) : StringId{};
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    open_ranges_[m.id] = {i64(m.timestamp), thread, writer_.intern(m.name ? m.name : ""), domain};
    return Status::ok();
  }
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto it = open_ranges_.find(m.id);
    if (it == open_ranges_.end()) return Status::ok();  // its start came before recording began
    const OpenRange r = it->second;
    open_ranges_.erase(it);
    return writer_.append(NvtxRow{session_id_, NvtxKind::kRange, r.domain, r.name, r.thread_id, r.start_ns,
                                  i64(m.timestamp), std::nullopt, std::nullopt});
  }
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    return writer_.append(NvtxRow{session_id_, NvtxKind::kMark, domain, writer_.intern(m.name ? m.name : ""), thread,
                                  i64(m.timestamp), i64(m.timestamp), std::nullopt, std::nullopt});
  }
  return Status::ok();  // synchronisation markers (NVTX sync API) are not stored
}

Status RecordConverter::closeOpenRanges(int64_t end_ns) {
  for (const auto& [id, r] : open_ranges_) {
    GPUSCOPE_RETURN_IF_ERROR(
        writer_.append(NvtxRow{session_id_, NvtxKind::kRange, r.domain, r.name, r.thread_id, r.start_ns,
                               std::max(end_ns, r.start_ns), std::nullopt, std::nullopt}));
  }
  open_ranges_.clear();
  return Status::ok();
}

Status RecordConverter::convertOverhead(const CUpti_ActivityOverhead3& o) {
  OverheadRow row{session_id_, overheadKindOf(o.overheadKind)};
  if (o.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) row.thread_id = o.objectId.pt.threadId;
  if (o.objectKind == CUPTI_ACTIVITY_OBJECT_DEVICE) row.device_id = o.objectId.dcs.deviceId;
  row.start_ns = i64(o.start);
  row.end_ns = endOf(o.start, o.end);
  return writer_.append(row);
}

Status RecordConverter::convertDevice(const CUpti_ActivityDevice5& d) {
  DeviceRow row;
  row.session_id = session_id_;
  row.device_id = d.id;
  row.name = d.name ? d.name : "";
  row.uuid = uuidText(d.uuid);
  row.compute_major = d.computeCapabilityMajor;
  row.compute_minor = d.computeCapabilityMinor;
  row.sm_count = d.numMultiprocessors;
  row.global_memory_bytes = i64(d.globalMemorySize);
  row.memory_bandwidth_bytes_per_s = i64(d.globalMemoryBandwidth) * 1000;  // CUPTI reports KB/s
  row.l2_cache_bytes = d.l2CacheSize;
  row.max_threads_per_block = d.maxThreadsPerBlock;
  row.max_threads_per_sm = static_cast<int64_t>(d.maxWarpsPerMultiprocessor) * d.numThreadsPerWarp;
  row.max_blocks_per_sm = d.maxBlocksPerMultiprocessor;
  row.registers_per_sm = d.maxRegistersPerMultiprocessor;
  row.registers_per_block = d.maxRegistersPerBlock;
  row.shared_memory_per_sm_bytes = d.maxSharedMemoryPerMultiprocessor;
  row.shared_memory_per_block_bytes = d.maxSharedMemoryPerBlock;
  row.warp_size = d.numThreadsPerWarp;
  row.core_clock_khz = d.coreClockRate;
  return writer_.append(row);
}

Status RecordConverter::convertNvlink(const CUpti_ActivityNvLink4& l) {
  if (l.typeDev0 != CUPTI_DEV_TYPE_GPU) return Status::ok();  // each GPU's links are described from its side
  auto kind = [](CUpti_DevType t) {
    return t == CUPTI_DEV_TYPE_GPU ? "gpu" : t == CUPTI_DEV_TYPE_NPU ? "cpu" : "other";
  };
  NvlinkRow row;
  row.session_id = session_id_;
  row.device_uuid = uuidText(l.idDev0.uuidDev);
  if (l.typeDev1 == CUPTI_DEV_TYPE_GPU) row.peer_uuid = uuidText(l.idDev1.uuidDev);
  row.peer_kind = kind(l.typeDev1);
  row.version = l.nvlinkVersion;
  row.links = l.physicalNvLinkCount;
  row.bandwidth_bytes_per_s = i64(l.bandwidth) * 1000;  // CUPTI reports KB/s
  row.through_nvswitch = l.nvswitchConnected;
  return writer_.append(row);
}

Status RecordConverter::convertContext(const CUpti_ActivityContext3& c) {
  return writer_.append(ContextRow{session_id_, c.contextId, c.deviceId, c.nullStreamId});
}

Status RecordConverter::convertGraphTrace(const CUpti_ActivityGraphTrace2& g) {
  return writer_.append(GraphLaunchRow{session_id_, g.deviceId, g.contextId, g.streamId, g.correlationId, g.graphId,
                                       i64(g.start), endOf(g.start, g.end)});
}

}  // namespace gpuscope::collector
