#include "tests/support/trace_builder.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzer/phases.h"
#include "formats/bridge_marks.h"
#include "formats/trace_merge.h"

namespace gpuscope::testing {

using namespace schema;

namespace {

constexpr int64_t kSession = 1;
constexpr int64_t kThread = 1;

TraceWriter createWriter(const std::string& path) {
  Result<TraceWriter> w = TraceWriter::create(path, {.overwrite = true});
  if (!w) throw std::runtime_error(w.status().message());
  return std::move(*w);
}

}  // namespace

TraceBuilder::TraceBuilder(const std::string& path) : TraceBuilder(path, -1, "test-host") {}

TraceBuilder::TraceBuilder(const std::string& path, int64_t rank, const std::string& host)
    : writer_(createWriter(path)) {
  SessionRow session;
  session.id = kSession;
  session.pid = 100 + std::max<int64_t>(rank, 0);
  session.hostname = host;
  if (rank >= 0) session.rank = session.local_rank = rank;
  session.command_line = "./program";
  DeviceRow device;
  device.session_id = kSession;
  device.name = "NVIDIA H100 80GB HBM3";
  device.compute_major = 9;
  device.sm_count = 132;
  device.global_memory_bytes = 85'031'714'816;
  device.memory_bandwidth_bytes_per_s = 3'352'000'000'000;
  row(session).row(device);
}

TraceBuilder& TraceBuilder::api(const std::string& name, int64_t start_ns, int64_t end_ns, int64_t correlation_id,
                                int64_t thread) {
  return row(
      ApiCallRow{kSession, ApiKind::kRuntime, writer_.intern(name), 0, thread, start_ns, end_ns, correlation_id, 0});
}

TraceBuilder& TraceBuilder::kernel(const std::string& name, int64_t start_ns, int64_t end_ns, int64_t stream,
                                   int64_t launch_ns, int64_t launch_call_ns) {
  const int64_t correlation = next_correlation_++;
  const int64_t launch = launch_ns >= 0 ? launch_ns : start_ns - 1000;
  api("cudaLaunchKernel", launch, launch + launch_call_ns, correlation);
  KernelConfigRow config;
  config.name = writer_.intern(name);
  config.grid_x = config.grid_y = config.grid_z = config.block_y = config.block_z = 1;
  config.block_x = 256;
  KernelRow k;
  k.session_id = kSession;
  k.stream_id = stream;
  k.correlation_id = correlation;
  k.start_ns = start_ns;
  k.end_ns = end_ns;
  k.config_id = writer_.intern(config);
  return row(k);
}

TraceBuilder& TraceBuilder::copy(CopyKind kind, MemoryKind src, int64_t bytes, int64_t start_ns, int64_t end_ns,
                                 int64_t stream, MemoryKind host, int64_t thread) {
  const int64_t correlation = next_correlation_++;
  api("cudaMemcpyAsync", start_ns - 1000, start_ns - 500, correlation, thread);
  MemcpyRow c;
  c.session_id = kSession;
  c.stream_id = stream;
  c.correlation_id = correlation;
  c.start_ns = start_ns;
  c.end_ns = end_ns;
  c.copy_kind = kind;
  c.src_kind = src;
  c.dst_kind = kind == CopyKind::kHostToDevice ? MemoryKind::kDevice : host;
  c.bytes = bytes;
  return row(c);
}

TraceBuilder& TraceBuilder::memset(int64_t bytes, int64_t start_ns, int64_t end_ns, int64_t stream) {
  const int64_t correlation = next_correlation_++;
  api("cudaMemsetAsync", start_ns - 1000, start_ns - 500, correlation);
  MemsetRow m;
  m.session_id = kSession;
  m.stream_id = stream;
  m.correlation_id = correlation;
  m.start_ns = start_ns;
  m.end_ns = end_ns;
  m.bytes = bytes;
  m.memory_kind = MemoryKind::kDevice;
  return row(m);
}

TraceBuilder& TraceBuilder::nvtx(const std::string& name, int64_t start_ns, int64_t end_ns, int64_t thread,
                                 const std::string& domain) {
  NvtxRow n;
  n.session_id = kSession;
  n.kind = NvtxKind::kRange;
  if (!domain.empty()) n.domain = writer_.intern(domain);
  n.name = writer_.intern(name);
  n.thread_id = thread;
  n.start_ns = start_ns;
  n.end_ns = end_ns;
  return row(n);
}

TraceBuilder& TraceBuilder::mark(const std::string& name, int64_t time_ns, int64_t thread) {
  NvtxRow n;
  n.session_id = kSession;
  n.kind = NvtxKind::kMark;
  n.name = writer_.intern(name);
  n.thread_id = thread;
  n.start_ns = n.end_ns = time_ns;
  return row(n);
}

TraceBuilder& TraceBuilder::memory(MemoryOp op, int64_t address, int64_t bytes, int64_t time_ns) {
  MemoryEventRow m;
  m.session_id = kSession;
  m.timestamp_ns = time_ns;
  m.op = op;
  m.memory_kind = MemoryKind::kDevice;
  m.address = address;
  m.bytes = bytes;
  return row(m);
}

Status TraceBuilder::finish() {
  if (!status_) return status_;
  return writer_.finish();
}

std::string buildTwoRankJob(const std::filesystem::path& dir, const TwoRankJob& job) {
  const char* gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
  TwoRankJob rank0{.late_ns = 0, .host1 = "host-a", .skew_ns = 0, .collective1 = TwoRankJob{}.collective1};
  rank0.hosts_busy = job.hosts_busy;
  rank0.alternating_extra_ns = job.alternating_extra_ns;
  rank0.allreduce_bytes = job.allreduce_bytes;
  rank0.environment = job.environment;
  std::vector<std::string> traces;
  for (int rank = 0; rank < 2; ++rank) {
    const TwoRankJob& r = rank == 0 ? rank0 : job;
    traces.push_back((dir / ("rank" + std::to_string(rank) + ".gpuscope")).string());
    TraceBuilder b(traces.back(), rank, rank == 0 ? "host-a" : job.host1);
    b.memory(schema::MemoryOp::kAllocation, 0x7f0000000000, r.held1_bytes, r.skew_ns);
    for (int step = 0; step < 6; ++step) {
      const int64_t t = step * 1'000'000 + r.skew_ns;
      b.nvtx("step", t + (r.hosts_busy ? r.late_ns : 0), t + 50'000 + r.late_ns);
      for (int64_t c = 5'000; r.late_in_calls && c < r.late_ns; c += 30'000) {
        b.api("cudaStreamGetCaptureInfo", t + c, t + c + 20'000);
      }
      const int64_t extra = step % 2 == rank ? r.alternating_extra_ns : 0;
      b.kernel(gemm, t + 10'000 + r.late_ns, t + 510'000 + r.late_ns + extra, 7, t + 5'000 + r.late_ns);
      b.kernel(r.collective1, t + 520'000 + r.late_ns + extra, t + 900'000, 9, t + 6'000 + r.late_ns);
      if (r.allreduce_bytes > 0) {
        CollectiveRow c{1,
                        kThread,
                        t + 7'100 + r.late_ns,
                        77,
                        2,
                        1,
                        rank,
                        step,
                        b.writer().intern("AllReduce"),
                        r.allreduce_bytes / 2,
                        b.writer().intern("ncclBfloat16")};
        c.root = 0;
        c.channels = 4;
        c.algorithm = b.writer().intern("RING");
        c.protocol = b.writer().intern("SIMPLE");
        b.row(c);
      }
      // The host issues the step, then waits for it (as `loss.item()` does): the GPU sets the pace.
      if (!r.hosts_busy) b.api("cudaStreamSynchronize", t + 50'000 + r.late_ns, t + 900'000);
    }
    if (r.allreduce_bytes > 0) b.row(NvlinkRow{1, "", "GPU-peer", "gpu", 4, 18, 849'960'000'000, 1});
    for (const std::string& v : r.environment) {
      const size_t eq = v.find('=');
      b.row(EnvironmentRow{1, v.substr(0, eq), v.substr(eq + 1)});
    }
    if (Status s = b.finish(); !s) throw std::runtime_error(s.message());
  }
  const std::string merged = (dir / "job.gpuscope").string();
  if (Status s = mergeTraces(traces, merged, {}); !s) throw std::runtime_error(s.message());
  return merged;
}

std::string buildPausedRecording(const std::filesystem::path& dir, const PausedRecording& r) {
  const std::string path = (dir / "t.gpuscope").string();
  TraceBuilder b(path);
  int64_t t = 1'000'000, timed_from = 0, paused_from = 0;
  for (int step = 0; step < 18; ++step) {
    const bool in_pause = step >= 6 && (step < 10 || !r.resumed);
    if (step == 1) b.mark(std::string(analysis::kHooksRemovedMark), t - 100);
    if (step == 2) b.mark(std::string(marks::kRecordedStepsTimed), t - 100), timed_from = t;
    if (step == r.timed_again_at) b.mark(std::string(marks::kRecordedStepsTimed), t - 100);
    if (step == 6) b.mark(std::string(marks::kRecordingPaused), t - 100), paused_from = t;
    if (step == 10 && r.resumed) b.mark(std::string(marks::kRecordingResumed), t - 100);
    if (step == 15 && r.resumed && r.figures) {
      b.mark(std::string(marks::kRecordingCostTimed) + " (4 steps: " + std::to_string(paused_from - timed_from) +
                 " ns recorded before, " + std::to_string(4 * r.paused_step_ns) + " ns paused, " +
                 std::to_string(4 * r.after_step_ns) + " ns recorded after)",
             t - 100);
    }
    const int64_t length = step >= 6 && step < 10 ? r.paused_step_ns
                           : step >= 10           ? r.after_step_ns
                                                  : r.recorded_step_ns;
    b.nvtx("Net (forward)", t, t + length / 2);
    if (!in_pause || !r.collector_paused) {
      for (int k = 0; k < r.kernels_per_step; ++k) {
        const int64_t at = t + 2'000 + k * r.kernel_ns;  // one after another
        b.kernel("k", at, at + r.kernel_ns);
      }
    }
    b.nvtx("optimizer.step (SGD)", t + length * 6 / 10, t + length * 7 / 10);
    t += length;
  }
  if (Status s = b.finish(); !s) throw std::runtime_error(s.message());
  return path;
}

}  // namespace gpuscope::testing
