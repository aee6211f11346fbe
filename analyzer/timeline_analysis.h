// Why a GPU sat idle, how long launches take to reach it, and whether copies overlapped compute: per
// device, inside its window (its first GPU activity to its last; start-up before it is not idle time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/duration_stats.h"
#include "analyzer/gpu_activity.h"
#include "analyzer/intervals.h"
#include "analyzer/paused_steps.h"
#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

// Each idle gap is given to a cause, looked at from the work that ended it:
//  - after_sync: that work was launched only after the GPU ran dry, and the host had waited for the GPU
//    (a synchronize call or a synchronous copy ended) in between: the host drained the queue, then
//    needed this long to give the GPU new work;
//  - copy_wait: the work is a pageable copy, which the host stages (the whole gap); otherwise the part of the
//    gap the host spent inside copy calls, the rest going to the causes below;
//  - launch_bound: the work's launch call returned after the GPU ran dry, with no sync in between: the
//    host could not issue work as fast as the GPU ran it; where that is kHostBusyGapNs or longer, host_busy:
//    the host was at other work;
//  - queued: the work's launch call had returned before the GPU went idle (dependencies between streams,
//    events, the GPU's own scheduling).
// Before that, the part of a gap the host spent allocating or freeing device memory (cudaMalloc, cudaFree,
// cuMemAlloc, cuMemFree: not the stream-ordered or host ones) is allocating: the GPU waited on those calls.
// In a process recorded by gpuscope's collector, each launch-bound gap is the host's time between two
// launches less the first one's kernel, and the recording made that time longer by its own cost per launch:
// that part of the gap is recording, not launch_bound.
struct IdleBreakdown {
  int64_t total_ns = 0;
  int64_t after_sync_ns = 0;
  int64_t copy_wait_ns = 0;
  int64_t launch_bound_ns = 0;  // corrected for the recording's cost
  int64_t host_busy_ns = 0;     // late launches after a gap of kHostBusyGapNs or more: the host was at other work
  int64_t recording_ns = 0;     // what the recording's cost per launch added to launch-bound gaps
  int64_t allocating_ns = 0;    // the host was inside device allocation or free calls
  int64_t queued_ns = 0;
  int64_t compiling_ns = 0;  // the host compiling a kernel (runtimeCompiles), or before a compiler's own work
  int64_t gaps = 0;
  // Copies to the host that a runtime's own thread issued once the GPU had run dry, the program waiting for
  // their result (JAX's float(x), np.asarray(x)): their gaps count as after_sync.
  int64_t results_fetched = 0;
};

// A gap this long before a late launch is no launch's cost: a launch call takes microseconds, and PyTorch's
// dispatch of an op tens of them. The host was at other work (compiling, loading, computing on the CPU, a
// library's set-up), which capturing the launches in a CUDA graph would not take away.
inline constexpr int64_t kHostBusyGapNs = 1'000'000;

// Host time gpuscope's collector adds to a kernel launch where the trace holds no measure of its own: an empty
// kernel launched 100,000 times took 6.57 µs a launch recorded against 4.12 µs plain (tests/bench/launch_cost.cu
// on an H100 host, 2026-11-23, docs/benchmarks.md "Where the launch cost goes"); CUPTI's own kernel and API
// records are most of it.
inline constexpr int64_t kRecordingCostPerLaunchNs = 2'450;

// What `gpuscope record` measured after the program on the same machine (gpuscope-calibrate, plain and recorded):
// the trace-wide data-quality row recording_cost_per_launch, if the trace holds one.
std::optional<int64_t> measuredRecordingCost(const TraceData& trace);

// What recording added to each kernel launch of a process (index into trace.sessions): nothing in a trace that
// gpuscope's collector did not record; else the machine's measured cost, else kRecordingCostPerLaunchNs, or what the
// process's own paused steps measured (pausedStepsCost) where that is more.
int64_t recordingCostPerLaunch(const TraceData& trace, int32_t session);
// The same, with the process's paused steps' cost already read (pausedStepsCost(trace, session)).
int64_t recordingCostPerLaunch(const TraceData& trace, int32_t session, const std::optional<PausedStepsCost>& own);

// The host's calls in one process (index into trace.sessions) that allocate or free device memory: cudaMalloc,
// cudaFree, cuMemAlloc, cuMemFree and their kin, the driver's cuMemCreate, cuMemMap, cuMemUnmap and cuMemRelease,
// not the stream-ordered (…Async) or pinned host (…Host) ones; with the synchronisations an allocator makes
// before freeing and the host's time between two such calls in a row (the allocator's own work); merged, sorted.
std::vector<Interval> deviceAllocationCalls(const TraceData& trace, int32_t session);
// The host's calls in one process that pin or unpin host memory (cudaHostAlloc, cudaMallocHost, cudaFreeHost,
// cudaHostRegister and the driver's kin); merged, sorted.
std::vector<Interval> hostPinningCalls(const TraceData& trace, int32_t session);

// Whether a process's events were recorded by gpuscope's collector (not imported from another profiler or a
// memory snapshot), so that the collector's own cost is in its timings.
bool recordedByCollector(const schema::SessionRow& session);

struct DeviceTimeline {
  int32_t device = 0;
  int64_t window_start_ns = 0, window_end_ns = 0;
  int64_t busy_ns = 0;
  IdleBreakdown idle;
  // Kernel start minus the start of its launch call. `all` includes time queued behind earlier work (how
  // far ahead the host runs); `on_idle_gpu` only kernels launched while the GPU had nothing to do: the
  // launch cost itself.
  DurationStats launch_latency_all, launch_latency_on_idle_gpu;
  int64_t launch_call_ns = 0;  // median host time of the calls that launched kernels (0: none recorded)
  int64_t kernels = 0;
  int64_t short_kernels = 0;    // kernels that ran for less than launch_call_ns
  int64_t short_kernel_ns = 0;  // their execution time
  int64_t copy_ns = 0;          // time copies or memsets ran (union)
  int64_t copy_overlap_ns = 0;  // of which a kernel ran at the same time
};

std::vector<DeviceTimeline> analyzeTimeline(const TraceData& trace);

// Per session, sorted: when the host stopped waiting for the GPU. From the API calls (synchronize calls,
// synchronous copies, copies into pageable memory) where the trace has them, else from CUPTI's synchronisation records
// of host waits (a stream waiting on an event is not one). The collector records those records only on request
// (`--trace sync`), since CUPTI then slows every CUDA runtime call; the API calls carry the same moments.
std::vector<std::vector<int64_t>> hostSyncEnds(const TraceData& trace);
// Of one process's host synchronisations (`sync_ends`, its hostSyncEnds), those that returned inside the PyTorch
// bridge's module ranges, counted by the innermost such range's name ("backbone.layer1.0.bn1 (forward)"), most
// first: where in the model the host waits. Only the annotated steps have module ranges below the model's own:
// those before `until_ns` (where the bridge removed its hooks; -1: the whole run) are counted.
std::vector<std::pair<std::string, int64_t>> syncsByModule(const TraceData& trace, int32_t session,
                                                           const std::vector<int64_t>& sync_ends, int64_t until_ns);
// The calls of one process (index into trace.sessions) in which its host waited for the GPU (synchronize
// calls, synchronous copies and copies into pageable memory, launch calls of 100 µs or more: the launch queue was
// full; and of a launch call queued 1 ms or more behind the GPU's work, what it took beyond twice the process's
// median launch call), merged: time that is not the host's own work.
std::vector<Interval> hostWaitCalls(const TraceData& trace, int32_t session);
// A kernel compiled (or chosen and loaded) at run time: a module load (cuModuleLoadData, cuLibraryLoadData, …)
// after its thread spent kCompileGapNs or more with no CUDA call, the compiler's work (NVRTC, cuDNN's runtime
// fusion, Triton, XLA, a library's search for the new shape's kernel); `stretch` runs from the thread's previous
// call to the load's end; or one of XLA's annotated compiles (annotatedCompiles), whole. `next_kernels` are the
// kernels the thread (for XLA's, the process) launched next (up to kNextKernels; the library
// that compiled runs them: cuDNN's attention backward starts with helper kernels before its "sdpa" one).
// A load with no such stretch before it is one too, `compiled` false, its `stretch` from the thread's last kernel
// launch (at most kCompileGapNs before it) to the load's end: a library
// loading its kernels again for each plan or handle made (a cuFFT plan made for every frame loaded its module
// in 130-180 µs each time, H200, bench/corpus/cuda_fft_plan_per_frame); once per kernel, as CUDA's lazy loading
// does, it is no step's. A module unloaded is one too, `unloaded` true, its stretch measured as a load's: the
// plan's or handle's destruction, which the same fix takes out of the steps; its `next_kernels` are those of
// the thread's latest load (the library that loaded what it unloads).
struct RuntimeCompile {
  Interval stretch;
  std::vector<std::string> next_kernels;
  bool compiled = true;
  bool unloaded = false;
};
inline constexpr int64_t kCompileGapNs = 1'000'000;
inline constexpr int kNextKernels = 4;
std::vector<RuntimeCompile> runtimeCompiles(const TraceData& trace, int32_t session);
// The host's waits for results fetched from `device` once its GPU was done (IdleBreakdown::results_fetched),
// which no call of the waiting thread shows: from the GPU running dry to the fetch's end. `busy`: the device's.
std::vector<Interval> resultFetchWaits(const TraceData& trace, int32_t device, const std::vector<Interval>& busy);
// Every CUDA call of one process (all its threads), merged: between them its host does work of its own.
std::vector<Interval> cudaCalls(const TraceData& trace, int32_t session);
// The stretches of `min_gap` or more inside [start, end) with none of `calls` (merged, sorted) in them: the host
// computing on its own (Python, NumPy, I/O, a sleep), which no CUDA-side fix takes away.
std::vector<Interval> awayStretches(const std::vector<Interval>& calls, int64_t start, int64_t end,
                                    int64_t min_gap = kHostBusyGapNs);
// The same inside the given windows only (e.g. the steady iterations' GPU spans): idle gaps wholly inside
// one, kernels that start in one, busy and copy time within them.
std::vector<DeviceTimeline> analyzeTimeline(const TraceData& trace, const std::vector<Interval>& windows);
// The same, for a caller that already has deviceActivity(trace).
std::vector<DeviceTimeline> analyzeTimeline(const TraceData& trace, const std::vector<Interval>& windows,
                                            const std::vector<DeviceActivity>& activity);

}  // namespace gpuscope::analysis
