// Builds small traces for analyzer tests, one event per call, on one process with one H100-like GPU.
// Times are plain nanoseconds from 0; every kernel, copy and memset gets a launching API call (so the
// correlation ids join) unless said otherwise.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "formats/status.h"
#include "formats/trace_writer.h"

namespace gpuscope::testing {

class TraceBuilder {
 public:
  explicit TraceBuilder(const std::string& path);
  // One rank of a job (a process that gave its RANK), on `host`: build one per rank, then mergeTraces().
  TraceBuilder(const std::string& path, int64_t rank, const std::string& host);

  // A kernel on a stream, launched by cudaLaunchKernel at launch_ns (or 1 µs before start when < 0).
  // Launched by a cudaLaunchKernel call at launch_ns (default: 1 µs before it starts) that takes launch_call_ns.
  TraceBuilder& kernel(const std::string& name, int64_t start_ns, int64_t end_ns, int64_t stream = 7,
                       int64_t launch_ns = -1, int64_t launch_call_ns = 500);
  // A copy issued 1 µs before it starts by a cudaMemcpyAsync call on `thread`; the host side of a device-to-host
  // copy is `host` memory.
  TraceBuilder& copy(schema::CopyKind kind, schema::MemoryKind src, int64_t bytes, int64_t start_ns, int64_t end_ns,
                     int64_t stream = 7, schema::MemoryKind host = schema::MemoryKind::kPageable, int64_t thread = 1);
  TraceBuilder& memset(int64_t bytes, int64_t start_ns, int64_t end_ns, int64_t stream = 7);
  TraceBuilder& api(const std::string& name, int64_t start_ns, int64_t end_ns, int64_t correlation_id = 0,
                    int64_t thread = 1);
  // A range in the default NVTX domain, or in `domain` where it names one.
  TraceBuilder& nvtx(const std::string& name, int64_t start_ns, int64_t end_ns, int64_t thread = 1,
                     const std::string& domain = "");
  TraceBuilder& mark(const std::string& name, int64_t time_ns, int64_t thread = 1);
  TraceBuilder& memory(schema::MemoryOp op, int64_t address, int64_t bytes, int64_t time_ns);
  // Any row, for what the helpers above do not cover (unknown devices, odd values).
  template <typename Row>
  TraceBuilder& row(const Row& r) {
    if (status_) status_ = writer_.append(r);
    return *this;
  }
  TraceWriter& writer() { return writer_; }
  Status finish();

 private:
  TraceWriter writer_;
  Status status_;
  int64_t next_correlation_ = 1;
};

// A built 2-rank job of six 1 ms steps (NVTX "step"), merged into one trace at `dir`/job.gpuscope. Each step a
// rank's host issues a 500 µs GEMM and then an all-reduce that ends at 900 µs on both ranks. Rank 1's host is
// `late_ns` late to issue its GEMM each step, so rank 0 waits that long in its all-reduce; rank 1 runs on
// `host1`, whose clock reads `skew_ns` more than rank 0's (host "host-a"), its collective is named
// `collective1`, and it holds `held1_bytes` of device memory. With `hosts_busy` no host waits: the same work on
// both ranks, rank 1's a phase behind.
struct TwoRankJob {
  int64_t late_ns = 300'000;
  std::string host1 = "host-a";
  int64_t skew_ns = 0;
  std::string collective1 = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  int64_t held1_bytes = 1LL << 30;  // device memory rank 1 allocates before its first step and keeps (rank 0: 1 GiB)
  // The hosts never wait for the GPU (no synchronize): both are busy the whole step, rank 1's steps `late_ns`
  // behind rank 0's (its step ranges too).
  bool hosts_busy = false;
  // Rank 1's lateness spent in CUDA calls (30 µs apart) before its GEMM's launch, not in a stretch of its own:
  // the same launches, a slower host.
  bool late_in_calls = false;
  // The ranks take turns at having more work: each step, the GEMM of rank (step % 2) runs this much longer.
  int64_t alternating_extra_ns = 0;
  // When > 0, NCCL's profiler plugin describes each all-reduce (a `collective` row 600 ns after its launch, on
  // the launching thread) as this many bytes of bf16, and the GPUs are joined by NVLink 4 as two H100s are
  // (18 links, 849.96 GB/s both ways, CUPTI's record); `environment` rows (NAME=value) go with every rank.
  int64_t allreduce_bytes = 0;
  std::vector<std::string> environment;
};
std::string buildTwoRankJob(const std::filesystem::path& dir, const TwoRankJob& job);

// As `record --torch` writes a training loop of 18 steps with the bridge's paused steps (formats/bridge_marks.h):
// hooks removed at step 1; recorded steps timed from step 2; paused at step 6 (steps 6-9 run unrecorded, faster),
// resumed at step 10, its switch; steps 11-14 timed recorded again, and the figures of 4 steps each time marked at
// step 15 (where it does not resume, the rest of the run is paused). Written to `dir`/t.gpuscope.
struct PausedRecording {
  int kernels_per_step = 4;
  int64_t kernel_ns = 7'000;
  int64_t recorded_step_ns = 100'000, paused_step_ns = 60'000;
  int64_t after_step_ns = 100'000;  // the recorded steps after the pause
  bool collector_paused = true;     // false: a collector that does not know the marks recorded on
  bool resumed = true;              // false: the program ended paused
  bool figures = true;              // false: it ended after resuming, before the bridge wrote its figures
  int timed_again_at = -1;          // a step before the pause (2-5) whose start the bridge marks timed again
};
std::string buildPausedRecording(const std::filesystem::path& dir, const PausedRecording& r);

}  // namespace gpuscope::testing
