// Device memory over time, from the allocations and frees CUDA saw: live bytes per device, the peak and
// exactly what was alive at it (size, age, which call and NVTX range made it), and whether memory grows
// from iteration to iteration (a leak). For PyTorch, CUDA sees the caching allocator's segments (cudaMalloc
// of whole blocks); where the trace has the allocator's own events (record --torch, import), the processes
// that have them are measured by their tensors instead, and CUDA's segments give cuda_peak_bytes.
#pragma once

#include <climits>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/iterations.h"
#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

struct Allocation {
  int32_t session = 0, device = 0;
  int64_t address = 0, bytes = 0;
  int64_t alloc_ns = 0;
  int64_t free_ns = kNone;  // kNone: still alive when recording ended
  schema::MemoryKind kind = schema::MemoryKind::kUnknown;
  int32_t call = kNone;  // index into TraceData::api_calls of the allocating call
  bool tensor = false;   // a PyTorch tensor's block from the caching allocator (AllocatorTable), not a CUDA call
  bool aliveAt(int64_t t) const { return alloc_ns <= t && (free_ns == kNone || free_ns > t); }
};

struct MemoryPoint {
  int64_t time_ns = 0;
  int64_t live_bytes = 0;  // after the change at time_ns
};

struct DeviceMemory {
  int32_t device = 0;
  std::vector<MemoryPoint> timeline;  // one point per allocation or free that changed the live bytes
  int64_t peak_bytes = 0, peak_ns = 0;
  int64_t cuda_peak_bytes = 0;        // peak of what CUDA handed out: peak_bytes, or the allocator's segments'
  std::vector<int32_t> live_at_peak;  // indexes into MemoryAnalysis::allocations, largest first
  int64_t end_bytes = 0;              // still allocated when recording ended
};

// Whether live memory grew steadily: measured at the end of each steady iteration, or (without
// iterations) at eight even points in time after the first allocation.
struct LeakCheck {
  bool growing = false;
  std::string basis;             // "iterations", "time", or how XLA's readings were taken
  std::string measure;           // what the samples count where not CUDA's allocations (XLA's own figures); "" else
  int64_t steps_per_sample = 0;  // steady steps between two samples, where they are not one a step; 0: not known
  std::vector<int64_t> samples;  // live bytes at each measuring point
  int64_t growth_per_sample_bytes = 0;
  std::vector<int32_t> suspects;  // allocations made after the first measuring point and never freed, largest first

  // What one interval between samples is, in words: "iteration", "quarter of the steady steps", "eighth of the run".
  std::string interval() const;
  // The growth per step where the samples say it (0 where they do not: points in time).
  int64_t growthPerStepBytes() const;
  // "1.9 MiB per step", or per interval where the samples do not say a step's growth.
  std::string growthWords() const;
};

struct MemoryAnalysis {
  std::vector<Allocation> allocations;  // device memory only (device, managed, array kinds), in allocation order
  std::vector<DeviceMemory> devices;    // one per TraceData::devices entry
  int64_t unmatched_frees = 0;          // frees of memory allocated before recording began (ignored)
  LeakCheck leak;                       // for the device with the highest peak

  // The device with the highest peak, which the categories, leak check and reports describe; nullptr
  // when the trace has no devices.
  const DeviceMemory* peakDevice() const;
  // Whether some allocations are PyTorch tensors (the trace has the caching allocator's events).
  bool hasTensors() const;
};

MemoryAnalysis analyzeMemory(const TraceData& trace, const Iterations& iterations);

// The live bytes of a timeline at time t: its last point at or before t, 0 before its first.
int64_t liveAt(const std::vector<MemoryPoint>& timeline, int64_t t);

// What an allocator that hands out its own reservation (XLA's, recorded with --jax) said it had in use on a device
// (an index into TraceData::devices), by time: inside the reservation CUDA sees, the program's own memory. Empty
// where the trace has no such readings.
std::vector<MemoryPoint> allocatorInUse(const TraceData& t, int32_t device);
// That allocator's readings on the device, summed up; all 0 (and no allocator) without them.
struct AllocatorUsage {
  std::string allocator;  // whose figures: "xla"
  int64_t readings = 0;
  int64_t peak_bytes = 0;      // the most in use by its own account (XLA's peak_bytes_in_use counts moments between
                               // two readings too)
  int64_t end_bytes = 0;       // in use at its last reading
  int64_t reserved_bytes = 0;  // the most it held from CUDA, where it said (XLA's pool_bytes)
  int64_t limit_bytes = 0;     // the most it may hold, at its last reading, where it said
};
AllocatorUsage allocatorUsage(const TraceData& t, int32_t device);

// Indexes into memory.allocations of those on `device` alive at time t, largest first (at a device's peak
// time: its live_at_peak).
std::vector<int32_t> aliveAt(const MemoryAnalysis& memory, int32_t device, int64_t t);

// Who made an allocation: "cudaMalloc in NVTX range 'forward'" (the innermost range on the allocating
// thread), "a PyTorch tensor in NVTX range 'Net.fc1 (forward)'" (the innermost range of any thread: the
// allocator's events carry no thread), or what is known of it.
std::string creatorOf(const TraceData& trace, const Allocation& allocation);

// The innermost NVTX range of a process open at `time` on `thread` (kAnyThread: on any) whose name `accept`
// takes (nullptr: any name), as an index into TraceData::nvtx, or kNone.
inline constexpr int64_t kAnyThread = INT64_MIN;
int32_t innermostRange(const TraceData& trace, int32_t session, int64_t thread, int64_t time,
                       bool (*accept)(std::string_view name) = nullptr);

}  // namespace gpuscope::analysis
