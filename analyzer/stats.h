// The summaries of `gpuscope stats`, in the spirit of `nsys stats`: kernels by name and by class, API
// calls, copies and memsets, NVTX ranges, and how busy each device and stream was. Times are ns, sizes bytes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/duration_stats.h"
#include "analyzer/kernel_classifier.h"
#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

struct KernelNameSummary {
  std::string name;
  KernelKind kind;
  DurationStats time;       // execution time, ns
  double share_of_gpu = 0;  // of all kernels' execution time, 0..1
};

struct KernelClassSummary {
  KernelClass cls = KernelClass::kOther;
  Precision precision = Precision::kUnknown;  // GEMM, convolution and attention rows are split by precision
  DurationStats time;
  double share_of_gpu = 0;
  int64_t distinct_kernels = 0;
};

struct ApiSummary {
  std::string name;
  DurationStats time;       // host time inside the call, ns
  double share_of_api = 0;  // of all recorded API time
  int64_t errors = 0;       // calls that returned an error
};

// A copy's direction as nsys names it: "HtoD", "DtoH", "DtoD", "HtoH", "PtoP".
std::string_view directionOf(schema::CopyKind kind);

struct TransferSummary {  // copies of one direction and memory kind, or memsets
  std::string operation;  // "memcpy HtoD", "memcpy DtoD", "memset"
  std::string memory;     // "pageable -> device", "pinned -> device", "device"
  DurationStats time;     // ns
  DurationStats bytes;
  double bandwidth_bytes_per_s = 0;  // total bytes over total time
};

struct NvtxSummary {
  std::string name;
  std::string domain;  // "" for the default domain
  DurationStats time;  // ns, ranges only
};

struct DeviceUsage {
  int32_t device = 0;
  std::string label;
  int64_t window_start_ns = 0, window_end_ns = 0;  // first GPU activity start to last end on this device
  int64_t busy_ns = 0;                             // union of kernels, copies and memsets
  int64_t kernel_busy_ns = 0, copy_busy_ns = 0;    // unions of each
  int64_t kernels = 0, copies = 0, memsets = 0;
  int64_t windowNs() const { return window_end_ns - window_start_ns; }
  double busyShare() const { return windowNs() > 0 ? static_cast<double>(busy_ns) / windowNs() : 0.0; }
};

struct StreamUsage {
  int32_t stream = 0;  // index into TraceData::streams
  int32_t device = 0;
  int64_t stream_id = 0;
  int64_t kernels = 0, copies = 0, memsets = 0;
  int64_t busy_ns = 0;         // union of its work
  double share_of_window = 0;  // of its device's window
};

struct StatsSummary {
  int64_t process_count = 0, device_count = 0;
  int64_t kernel_count = 0, copy_count = 0, memset_count = 0, api_call_count = 0, nvtx_range_count = 0;
  int64_t duration_ns = 0;     // first to last event of any kind
  int64_t gpu_busy_ns = 0;     // summed over devices: time each had a kernel, copy or memset running
  int64_t kernel_time_ns = 0;  // summed execution time of all kernels (overlapping kernels count twice)
  int64_t bytes_copied = 0;
};

struct Stats {
  StatsSummary summary;
  std::vector<KernelNameSummary> kernels;  // by total time, longest first
  std::vector<KernelClassSummary> kernel_classes;
  std::vector<ApiSummary> api_calls;
  std::vector<TransferSummary> transfers;
  std::vector<NvtxSummary> nvtx_ranges;
  std::vector<DeviceUsage> devices;
  std::vector<StreamUsage> streams;
  std::vector<std::string> warnings;  // data-quality rows of warning or error severity, and load repairs
};

Stats computeStats(const TraceData& trace);

// One rank's kernels of one name, in a job of several ranks.
struct RankKernelSummary {
  int64_t rank = 0;
  KernelNameSummary kernel;  // share_of_gpu: of all ranks' kernels' execution time
};

// The kernels of each process that gave a rank (torchrun's RANK, MPI's, Slurm's), by rank and name, longest first;
// empty unless two processes or more did.
std::vector<RankKernelSummary> kernelsByRank(const TraceData& trace);

// The trace's data-quality rows of warning or error severity, and what loading it repaired, as lines.
std::vector<std::string> traceWarnings(const TraceData& trace);

// Why the recorded program failed ("the program exited with code 1, of Python's AttributeError: …"), from the
// trace-wide "program_failed" row `gpuscope record` writes; empty for a run that ended as it should, and for
// traces recorded before the exit status was kept.
std::string programFailure(const TraceData& trace);

}  // namespace gpuscope::analysis
