// Enumerations stored in a trace as integers. Each has a lookup table (enum_*) in every trace,
// generated from the values below, so `sqlite3 run.gpuscope` users can join names in.
// Where CUPTI has the same concept the numbers follow CUPTI's, which keeps conversion obvious.
#pragma once

#include <optional>

#include "formats/schema_table.h"

namespace gpuscope::schema {

enum class ApiKind : int64_t { kRuntime = 1, kDriver = 2 };
template <>
struct EnumInfo<ApiKind> {
  static constexpr std::string_view kTable = "enum_api_kind";
  static constexpr EnumValue kValues[] = {
      {1, "runtime", "CUDA runtime API (cuda*)"},
      {2, "driver", "CUDA driver API (cu*)"},
  };
};

// CUpti_ActivityMemcpyKind.
enum class CopyKind : int64_t {
  kUnknown = 0,
  kHostToDevice = 1,
  kDeviceToHost = 2,
  kHostToArray = 3,
  kArrayToHost = 4,
  kArrayToArray = 5,
  kArrayToDevice = 6,
  kDeviceToArray = 7,
  kDeviceToDevice = 8,
  kHostToHost = 9,
  kPeerToPeer = 10,
};
template <>
struct EnumInfo<CopyKind> {
  static constexpr std::string_view kTable = "enum_copy_kind";
  static constexpr EnumValue kValues[] = {
      {0, "unknown", "direction not reported"},
      {1, "HtoD", "host to device"},
      {2, "DtoH", "device to host"},
      {3, "HtoA", "host to CUDA array"},
      {4, "AtoH", "CUDA array to host"},
      {5, "AtoA", "CUDA array to CUDA array"},
      {6, "AtoD", "CUDA array to device"},
      {7, "DtoA", "device to CUDA array"},
      {8, "DtoD", "device to device, same GPU"},
      {9, "HtoH", "host to host"},
      {10, "PtoP", "peer to peer, between two GPUs"},
  };
};

// CUpti_ActivityMemoryKind.
enum class MemoryKind : int64_t {
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
  kDeviceStatic = 6,
  kManagedStatic = 7,
};
template <>
struct EnumInfo<MemoryKind> {
  static constexpr std::string_view kTable = "enum_memory_kind";
  static constexpr EnumValue kValues[] = {
      {0, "unknown", "not reported"},
      {1, "pageable", "pageable host memory (copies through a staging buffer, not asynchronous)"},
      {2, "pinned", "page-locked host memory"},
      {3, "device", "device memory (cudaMalloc, memory pools)"},
      {4, "array", "CUDA array"},
      {5, "managed", "unified (managed) memory"},
      {6, "device_static", "__device__ globals of a loaded module"},
      {7, "managed_static", "__managed__ globals of a loaded module"},
  };
};

// CUpti_ActivityUnifiedMemoryCounterKind: what moved unified memory, or what it cost.
enum class MigrationKind : int64_t {
  kUnknown = 0,
  kToDevice = 1,
  kToHost = 2,
  kHostFault = 3,
  kDeviceFault = 4,
  kThrashing = 5,
  kThrottling = 6,
  kRemoteMap = 7,
  kDeviceToDevice = 8,
};
template <>
struct EnumInfo<MigrationKind> {
  static constexpr std::string_view kTable = "enum_migration_kind";
  static constexpr EnumValue kValues[] = {
      {0, "unknown", "not reported"},
      {1, "to_device", "pages migrated from the host to a GPU"},
      {2, "to_host", "pages migrated from a GPU to the host"},
      {3, "host_fault", "a CPU page fault on unified memory"},
      {4, "device_fault", "a group of GPU page faults on unified memory (the GPU stalls until it is served)"},
      {5, "thrashing", "the driver saw a region moving back and forth between processors"},
      {6, "throttling", "the driver throttled a processor's faults on a thrashing region"},
      {7, "remote_map", "the driver mapped a region remotely instead of migrating it"},
      {8, "device_to_device", "pages migrated from one GPU to another"},
  };
};

// Pages moved from one processor to another: the value is their bytes.
constexpr bool isMigration(MigrationKind kind) {
  return kind == MigrationKind::kToDevice || kind == MigrationKind::kToHost || kind == MigrationKind::kDeviceToDevice;
}

// CUpti_ActivitySynchronizationType.
enum class SyncKind : int64_t {
  kUnknown = 0,
  kEventSynchronize = 1,
  kStreamWaitEvent = 2,
  kStreamSynchronize = 3,
  kContextSynchronize = 4,
};
template <>
struct EnumInfo<SyncKind> {
  static constexpr std::string_view kTable = "enum_sync_kind";
  static constexpr EnumValue kValues[] = {
      {0, "unknown", "not reported"},
      {1, "event_synchronize", "host waits for an event (cudaEventSynchronize)"},
      {2, "stream_wait_event", "a stream waits for an event (cudaStreamWaitEvent)"},
      {3, "stream_synchronize", "host waits for a stream (cudaStreamSynchronize)"},
      {4, "context_synchronize", "host waits for the whole device (cudaDeviceSynchronize)"},
  };
};

// CUpti_ActivityMemoryOperationType.
enum class MemoryOp : int64_t { kAllocation = 1, kRelease = 2 };
template <>
struct EnumInfo<MemoryOp> {
  static constexpr std::string_view kTable = "enum_memory_op";
  static constexpr EnumValue kValues[] = {
      {1, "allocation", "memory was allocated"},
      {2, "release", "memory was freed"},
  };
};

// The action of a PyTorch caching-allocator trace entry (torch.cuda.memory._snapshot()["device_traces"]).
enum class AllocatorAction : int64_t {
  kAlloc = 1,
  kFreeRequested = 2,
  kFreeCompleted = 3,
  kSegmentAlloc = 4,
  kSegmentFree = 5,
  kSegmentMap = 6,
  kSegmentUnmap = 7,
  kOom = 8,
};
template <>
struct EnumInfo<AllocatorAction> {
  static constexpr std::string_view kTable = "enum_allocator_action";
  static constexpr EnumValue kValues[] = {
      {1, "alloc", "a block was handed to a tensor"},
      {2, "free_requested", "the tensor was freed; the block waits for the streams that used it"},
      {3, "free_completed", "the block is back in the allocator's cache"},
      {4, "segment_alloc", "the allocator took a segment from CUDA (cudaMalloc)"},
      {5, "segment_free", "the allocator gave a segment back to CUDA (cudaFree)"},
      {6, "segment_map", "memory was mapped into an expandable segment"},
      {7, "segment_unmap", "memory was unmapped from an expandable segment"},
      {8, "oom", "an allocation failed: out of memory (bytes: what was asked for)"},
  };
};

// What a tensor of a PyTorch program is, as the PyTorch bridge saw it.
enum class TensorRole : int64_t { kParameter = 1, kBuffer = 2, kGradient = 3, kOptimizerState = 4 };
template <>
struct EnumInfo<TensorRole> {
  static constexpr std::string_view kTable = "enum_tensor_role";
  static constexpr EnumValue kValues[] = {
      {1, "parameter", "a module's parameter (weights)"},
      {2, "buffer", "a module's buffer (batch-norm statistics, masks)"},
      {3, "gradient", "a parameter's gradient (.grad), seen before an optimizer step"},
      {4, "optimizer_state", "an optimizer's per-parameter state (Adam's moments), seen after a step"},
  };
};

// CUpti_ActivityMemoryPoolOperationType.
enum class PoolOp : int64_t { kCreated = 1, kDestroyed = 2, kTrimmed = 3 };
template <>
struct EnumInfo<PoolOp> {
  static constexpr std::string_view kTable = "enum_pool_op";
  static constexpr EnumValue kValues[] = {
      {1, "created", "a memory pool was created"},
      {2, "destroyed", "a memory pool was destroyed"},
      {3, "trimmed", "a memory pool released memory back to the device"},
  };
};

enum class NvtxKind : int64_t { kRange = 1, kMark = 2 };
template <>
struct EnumInfo<NvtxKind> {
  static constexpr std::string_view kTable = "enum_nvtx_kind";
  static constexpr EnumValue kValues[] = {
      {1, "range", "push/pop or start/end range"},
      {2, "mark", "instantaneous mark (start_ns = end_ns)"},
  };
};

// CUpti_ActivityOverheadKind, renumbered densely.
enum class OverheadKind : int64_t {
  kUnknown = 0,
  kDriverCompiler = 1,
  kBufferFlush = 2,
  kInstrumentation = 3,
  kResource = 4,
  kModuleLoading = 5,
  kLazyFunctionLoading = 6,
  kCommandBufferFull = 7,
  kActivityBufferRequest = 8,
  kUvmActivityInit = 9,
};
template <>
struct EnumInfo<OverheadKind> {
  static constexpr std::string_view kTable = "enum_overhead_kind";
  static constexpr EnumValue kValues[] = {
      {0, "unknown", "not reported"},
      {1, "driver_compiler", "the driver compiled PTX to machine code (JIT)"},
      {2, "buffer_flush", "CUPTI flushed an activity buffer"},
      {3, "instrumentation", "CUPTI instrumented a kernel"},
      {4, "resource", "CUPTI created or destroyed internal resources"},
      {5, "module_loading", "the runtime loaded a module"},
      {6, "lazy_function_loading", "a kernel was loaded lazily at its first launch"},
      {7, "command_buffer_full", "the launch queue was full and the host waited"},
      {8, "activity_buffer_request", "CUPTI waited for an activity buffer"},
      {9, "uvm_activity_init", "CUPTI set up unified-memory tracing"},
  };
};

enum class Severity : int64_t { kInfo = 0, kWarning = 1, kError = 2 };
template <>
struct EnumInfo<Severity> {
  static constexpr std::string_view kTable = "enum_severity";
  static constexpr EnumValue kValues[] = {
      {0, "info", "worth knowing; the data is complete"},
      {1, "warning", "some data is missing or approximate; results may be skewed"},
      {2, "error", "a whole kind of data is missing; results that need it are wrong or absent"},
  };
};

// The name of an enum value as stored in its lookup table; "unknown" for values a damaged trace may hold.
template <StoredEnum E>
constexpr std::string_view enumName(E value) {
  for (const EnumValue& v : EnumInfo<E>::kValues) {
    if (v.value == static_cast<int64_t>(value)) return v.name;
  }
  return "unknown";
}

// The value whose name in the lookup table is `name` (what importers read from other tools), if any.
template <StoredEnum E>
constexpr std::optional<E> enumNamed(std::string_view name) {
  for (const EnumValue& v : EnumInfo<E>::kValues) {
    if (v.name == name) return static_cast<E>(v.value);
  }
  return std::nullopt;
}

}  // namespace gpuscope::schema
