// gpuscope stats: nsys-stats-like summaries of a trace, as text tables, CSV or JSON (docs/stats-json.md).
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/collectives.h"
#include "analyzer/fusion_chains.h"
#include "analyzer/iterations.h"
#include "analyzer/job.h"
#include "analyzer/memory_categories.h"
#include "analyzer/memory_model.h"
#include "analyzer/memory_pools.h"
#include "analyzer/memory_timeline.h"
#include "analyzer/module_memory.h"
#include "analyzer/stats.h"
#include "analyzer/timeline_analysis.h"
#include "cli/command.h"
#include "cli/report_table.h"

namespace gpuscope::cli {

namespace {

using analysis::DurationStats;
using analysis::Stats;

// JSON format version of `gpuscope stats --format json`; bump when a key changes meaning or goes away.
constexpr int64_t kStatsJsonVersion = 1;

// The count/total/mean/median/min/max columns every duration summary shares.
std::vector<Column> timeColumns() {
  return {{"count", "Count", Unit::kCount},        {"total_ns", "Total", Unit::kNanoseconds},
          {"mean_ns", "Mean", Unit::kNanoseconds}, {"median_ns", "Median", Unit::kNanoseconds},
          {"min_ns", "Min", Unit::kNanoseconds},   {"max_ns", "Max", Unit::kNanoseconds}};
}

void appendTime(std::vector<Cell>& row, const DurationStats& t) {
  row.insert(row.end(), {t.count, t.total, t.mean(), t.median, t.min, t.max});
}

Report kernelsReport(const Stats& s) {
  Report r{"kernels", "Kernels by name", {{"share_of_gpu", "GPU time", Unit::kShare}}, {}};
  for (Column& c : timeColumns()) r.columns.push_back(c);
  r.columns.insert(
      r.columns.end(),
      {{"class", "Class", Unit::kText}, {"precision", "Precision", Unit::kText}, {"name", "Name", Unit::kText}});
  for (const auto& k : s.kernels) {
    std::vector<Cell> row{k.share_of_gpu};
    appendTime(row, k.time);
    row.insert(row.end(), {std::string(toString(k.kind.cls)), std::string(toString(k.kind.precision)), k.name});
    r.rows.push_back(std::move(row));
  }
  return r;
}

Report kernelClassesReport(const Stats& s) {
  Report r{"kernel_classes", "Kernels by class", {{"share_of_gpu", "GPU time", Unit::kShare}}, {}};
  for (Column& c : timeColumns()) r.columns.push_back(c);
  r.columns.insert(r.columns.end(), {{"distinct_kernels", "Kernels", Unit::kCount},
                                     {"class", "Class", Unit::kText},
                                     {"precision", "Precision", Unit::kText}});
  for (const auto& k : s.kernel_classes) {
    std::vector<Cell> row{k.share_of_gpu};
    appendTime(row, k.time);
    row.insert(row.end(), {k.distinct_kernels, std::string(toString(k.cls)), std::string(toString(k.precision))});
    r.rows.push_back(std::move(row));
  }
  return r;
}

Report apiReport(const Stats& s) {
  Report r{"api", "CUDA API calls (host time)", {{"share_of_api", "API time", Unit::kShare}}, {}};
  for (Column& c : timeColumns()) r.columns.push_back(c);
  r.columns.insert(r.columns.end(), {{"errors", "Errors", Unit::kCount}, {"name", "Name", Unit::kText}});
  for (const auto& a : s.api_calls) {
    std::vector<Cell> row{a.share_of_api};
    appendTime(row, a.time);
    row.insert(row.end(), {a.errors, a.name});
    r.rows.push_back(std::move(row));
  }
  return r;
}

Report transfersReport(const Stats& s) {
  Report r{"transfers",
           "Copies and memsets",
           {{"operation", "Operation", Unit::kText}, {"memory", "Memory", Unit::kText}},
           {}};
  for (Column& c : timeColumns()) r.columns.push_back(c);
  r.columns.insert(r.columns.end(), {{"total_bytes", "Bytes", Unit::kBytes},
                                     {"mean_bytes", "Mean size", Unit::kBytes},
                                     {"bandwidth_bytes_per_s", "Bandwidth", Unit::kBytesPerSecond}});
  for (const auto& t : s.transfers) {
    std::vector<Cell> row{t.operation, t.memory};
    appendTime(row, t.time);
    row.insert(row.end(), {t.bytes.total, t.bytes.mean(), t.bandwidth_bytes_per_s});
    r.rows.push_back(std::move(row));
  }
  return r;
}

Report nvtxReport(const Stats& s) {
  Report r{"nvtx", "NVTX ranges (host time)", timeColumns(), {}};
  r.columns.insert(r.columns.end(), {{"domain", "Domain", Unit::kText}, {"name", "Name", Unit::kText}});
  for (const auto& n : s.nvtx_ranges) {
    std::vector<Cell> row;
    appendTime(row, n.time);
    row.insert(row.end(), {n.domain, n.name});
    r.rows.push_back(std::move(row));
  }
  return r;
}

// Each process of a job sees every GPU of its host, and CUPTI lists them all: a GPU a process ran nothing on is
// left out of the per-GPU tables (four empty rows of six in a 2-rank torchrun job), unless no GPU ran anything.
template <typename T, typename Active>
std::vector<const T*> usedDevices(const std::vector<T>& all, Active active) {
  std::vector<const T*> used;
  for (const T& d : all) {
    if (active(d)) used.push_back(&d);
  }
  if (used.empty()) {
    for (const T& d : all) used.push_back(&d);
  }
  return used;
}

Report devicesReport(const Stats& s) {
  Report r{"devices",
           "Devices (window: first to last GPU activity; GPUs a process ran nothing on left out)",
           {{"device", "Device", Unit::kText},
            {"window_ns", "Window", Unit::kNanoseconds},
            {"busy_ns", "Busy", Unit::kNanoseconds},
            {"busy_share", "Busy", Unit::kShare},
            {"kernel_busy_ns", "Kernels", Unit::kNanoseconds},
            {"copy_busy_ns", "Copies", Unit::kNanoseconds},
            {"kernels", "Kernels", Unit::kCount},
            {"copies", "Copies", Unit::kCount},
            {"memsets", "Memsets", Unit::kCount}},
           {}};
  for (const auto* d : usedDevices(s.devices, [](const auto& d) { return d.kernels + d.copies + d.memsets > 0; })) {
    r.rows.push_back({d->label, d->windowNs(), d->busy_ns, d->busyShare(), d->kernel_busy_ns, d->copy_busy_ns,
                      d->kernels, d->copies, d->memsets});
  }
  return r;
}

Report streamsReport(const Stats& s, const analysis::TraceData& trace) {
  Report r{"streams",
           "Streams",
           {{"device", "Device", Unit::kText},
            {"stream_id", "Stream", Unit::kCount},
            {"busy_ns", "Busy", Unit::kNanoseconds},
            {"share_of_window", "Of window", Unit::kShare},
            {"kernels", "Kernels", Unit::kCount},
            {"copies", "Copies", Unit::kCount},
            {"memsets", "Memsets", Unit::kCount}},
           {}};
  for (const auto& st : s.streams) {
    r.rows.push_back({trace.deviceLabel(st.device), st.stream_id, st.busy_ns, st.share_of_window, st.kernels, st.copies,
                      st.memsets});
  }
  return r;
}

Report summaryReport(const Stats& s) {
  const auto& m = s.summary;
  Report r{"summary",
           "Summary",
           {{"processes", "Processes", Unit::kCount},
            {"devices", "GPUs", Unit::kCount},
            {"duration_ns", "Duration", Unit::kNanoseconds},
            {"gpu_busy_ns", "GPU busy", Unit::kNanoseconds},
            {"kernel_count", "Kernels", Unit::kCount},
            {"kernel_time_ns", "Kernel time", Unit::kNanoseconds},
            {"copy_count", "Copies", Unit::kCount},
            {"bytes_copied", "Copied", Unit::kBytes},
            {"memset_count", "Memsets", Unit::kCount},
            {"api_call_count", "API calls", Unit::kCount},
            {"nvtx_range_count", "NVTX ranges", Unit::kCount}},
           {{m.process_count, m.device_count, m.duration_ns, m.gpu_busy_ns, m.kernel_count, m.kernel_time_ns,
             m.copy_count, m.bytes_copied, m.memset_count, m.api_call_count, m.nvtx_range_count}}};
  return r;
}

double ratio(int64_t part, int64_t whole) { return whole > 0 ? static_cast<double>(part) / whole : 0.0; }

Report timelineReport(const std::vector<analysis::DeviceTimeline>& timelines, const analysis::TraceData& trace) {
  Report r{"timeline",
           "Idle time and launches (per GPU, inside its window; GPUs a process ran nothing on left out)",
           {{"device", "Device", Unit::kText},
            {"window_ns", "Window", Unit::kNanoseconds},
            {"busy_ns", "Busy", Unit::kNanoseconds},
            {"idle_ns", "Idle", Unit::kNanoseconds},
            {"idle_after_sync_ns", "  after a host sync", Unit::kNanoseconds},
            {"idle_copy_wait_ns", "  host in a copy", Unit::kNanoseconds},
            {"idle_launch_bound_ns", "  host launching too slowly", Unit::kNanoseconds},
            {"idle_host_busy_ns", "  host at other work (gaps of 1 ms or more)", Unit::kNanoseconds},
            {"idle_queued_ns", "  work queued, not started", Unit::kNanoseconds},
            {"idle_compiling_ns", "  while a compiler ran (kernels compiled at run time, XLA's autotuner)",
             Unit::kNanoseconds},
            {"idle_gaps", "Idle gaps", Unit::kCount},
            {"launch_latency_median_ns", "Launch to start, median", Unit::kNanoseconds},
            {"launch_latency_idle_gpu_median_ns", "  onto an idle GPU", Unit::kNanoseconds},
            {"launch_call_median_ns", "Launch call, median", Unit::kNanoseconds},
            {"kernels", "Kernels", Unit::kCount},
            {"short_kernels", "  shorter than a launch call", Unit::kCount},
            {"short_kernel_share", "  share of kernels", Unit::kShare},
            {"copy_ns", "Copies", Unit::kNanoseconds},
            {"copy_overlap_ns", "  overlapped by kernels", Unit::kNanoseconds},
            {"copy_overlap_share", "  share of copy time", Unit::kShare}},
           {}};
  for (const auto* t : usedDevices(timelines, [](const auto& t) { return t.window_end_ns > t.window_start_ns; })) {
    const auto& i = t->idle;
    r.rows.push_back({trace.deviceLabel(t->device),
                      t->window_end_ns - t->window_start_ns,
                      t->busy_ns,
                      i.total_ns,
                      i.after_sync_ns,
                      i.copy_wait_ns,
                      i.launch_bound_ns,
                      i.host_busy_ns,
                      i.queued_ns,
                      i.compiling_ns,
                      i.gaps,
                      t->launch_latency_all.median,
                      t->launch_latency_on_idle_gpu.median,
                      t->launch_call_ns,
                      t->kernels,
                      t->short_kernels,
                      ratio(t->short_kernels, t->kernels),
                      t->copy_ns,
                      t->copy_overlap_ns,
                      ratio(t->copy_overlap_ns, t->copy_ns)});
  }
  return r;
}

Report iterationsReport(const analysis::Iterations& it) {
  std::string title = "Iterations";
  if (it.source == analysis::IterationSource::kNotFound) {
    title += ": none found (no repeating NVTX range, kernel pattern or host synchronisation)";
  } else {
    title += " (from " + std::string(toString(it.source)) + " '" + it.marker + "'; " + std::to_string(it.list.size()) +
             " found, " + std::to_string(it.warmupCount()) + " warm-up; step " + formatDuration(analysis::stepNs(it)) +
             ", " + std::string(analysis::stepStatistic(it)) + " start to start)";
  }
  Report r{"iterations",
           title,
           {{"index", "#", Unit::kCount},
            {"warmup", "Warm-up", Unit::kText},
            {"recorded", "Recorded", Unit::kText},
            {"duration_ns", "Duration", Unit::kNanoseconds},
            {"kernels", "Kernels", Unit::kCount},
            {"kernel_time_ns", "Kernel time", Unit::kNanoseconds},
            {"gpu_span_ns", "GPU span", Unit::kNanoseconds},
            {"start_ns", "Start", Unit::kCount}},
           {}};
  for (size_t i = 0; i < it.list.size(); ++i) {
    const auto& x = it.list[i];
    r.rows.push_back({static_cast<int64_t>(i), std::string(x.warmup ? "yes" : "no"),
                      std::string(x.unrecorded ? "paused" : "yes"), x.durationNs(), x.kernels, x.kernel_time_ns,
                      x.gpu_end_ns - x.gpu_start_ns, x.start_ns});
  }
  return r;
}

// The job's ranks, one row each; no rows for a single process.
Report ranksReport(const analysis::JobView& job, const analysis::TraceData& trace) {
  std::string title = "Ranks";
  if (!job.ranks.empty()) {
    title += " (" + std::to_string(job.ranks.size()) + " ranks " + analysis::hostsText(job) + "; the job's step " +
             formatDuration(job.step_ns) + " is rank " + std::to_string(job.ranks[job.slowest].rank) + "'s; " +
             (job.unmatched.empty() ? std::to_string(job.collectives) + " collectives matched, ending within " +
                                          formatDuration(job.clock_residual_ns) + " of each other"
                                    : "collectives not compared: " + job.unmatched) +
             "; per step, start to next start; each step's busiest rank ran " + formatDuration(job.imbalance_ns) +
             " of compute above the ranks' mean, rank " + std::to_string(job.ranks[job.busiest].rank) + " in " +
             analysis::formatShare(job.busiest_share) + " of the steps)";
  }
  Report r{"ranks",
           title,
           {{"rank", "Rank", Unit::kCount},
            {"steps", "Steps", Unit::kCount},
            {"step_ns", "Step", Unit::kNanoseconds},
            {"compute_ns", "Compute", Unit::kNanoseconds},
            {"comm_alone_ns", "Comm alone", Unit::kNanoseconds},
            {"comm_overlapped_ns", "Comm overlapped", Unit::kNanoseconds},
            {"copy_ns", "Copies", Unit::kNanoseconds},
            {"idle_ns", "Idle", Unit::kNanoseconds},
            {"host_ns", "Host work", Unit::kNanoseconds},
            {"away_ns", "Own code", Unit::kNanoseconds},
            {"last_share", "Last at collectives", Unit::kShare},
            {"late_ns", "Late by", Unit::kNanoseconds},
            {"peak_bytes", "Peak memory", Unit::kBytes},
            {"device", "Device", Unit::kText}},
           {}};
  for (const analysis::RankStep& x : job.ranks) {
    r.rows.push_back({x.rank, x.steps, x.step_ns, x.compute_ns, x.comm_alone_ns, x.comm_overlapped_ns, x.copy_ns,
                      x.idle_ns, x.host_ns, x.away_ns, x.last_share, x.late_ns, x.peak_bytes,
                      trace.deviceLabel(x.device)});
  }
  return r;
}

// NCCL's operations by rank, operation and size (from NCCL's profiler plugin), with the bus bandwidth they reached;
// no rows where the trace has none.
Report collectivesReport(const analysis::TraceData& trace) {
  std::string title =
      "NCCL operations (bus bandwidth as nccl-tests defines it; each operation timed by its shortest "
      "kernel over the ranks in the trace)";
  if (!trace.devices.empty()) {
    if (const std::optional<analysis::GpuLink> link = analysis::nvlinkOf(trace, 0)) {
      title += "; NVLink " + std::to_string(link->version) + ", " + std::to_string(link->links) + " links, " +
               analysis::formatFixed(static_cast<double>(link->bytes_per_s_each_way) / 1e9, 1) +
               " GB/s each way (CUPTI)";
    }
  }
  Report r{"collectives",
           title,
           {{"rank", "Rank", Unit::kCount},
            {"operation", "Operation", Unit::kText},
            {"bytes", "Size", Unit::kBytes},
            {"count", "Count", Unit::kCount},
            {"total_ns", "Total", Unit::kNanoseconds},
            {"median_ns", "Median", Unit::kNanoseconds},
            {"bus_bytes_per_s", "Bus bandwidth", Unit::kBytesPerSecond},
            {"algorithm", "Algorithm", Unit::kText},
            {"protocol", "Protocol", Unit::kText},
            {"channels", "Channels", Unit::kCount}},
           {}};
  std::map<std::tuple<int64_t, std::string_view, int64_t>, std::vector<const analysis::CollectiveOp*>> groups;
  const std::vector<analysis::CollectiveOp> ops = analysis::collectiveOps(trace);
  for (const analysis::CollectiveOp& op : ops) {
    groups[{trace.sessions[op.session].rank.value_or(op.session), op.operation, op.bytes}].push_back(&op);
  }
  for (auto& [key, list] : groups) {
    std::vector<int64_t> times;
    int64_t total = 0;
    double bus_bytes = 0;
    for (const analysis::CollectiveOp* op : list) {
      times.push_back(op->transfer_ns);
      total += op->transfer_ns;
      bus_bytes += op->busBytes();
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    const analysis::CollectiveOp& first = *list.front();
    r.rows.push_back({std::get<0>(key), std::string(std::get<1>(key)), std::get<2>(key),
                      static_cast<int64_t>(list.size()), total, times[times.size() / 2],
                      total > 0 ? bus_bytes * 1e9 / static_cast<double>(total) : 0.0, std::string(first.algorithm),
                      std::string(first.protocol), first.channels});
  }
  return r;
}

Report memoryReport(const analysis::MemoryAnalysis& m, const analysis::TraceData& trace) {
  const auto& leak = m.leak;
  const bool tensors = m.hasTensors();
  std::string title = tensors ? "Device memory (PyTorch's tensors, from its caching allocator's events)"
                              : "Device memory (allocations CUDA saw; for PyTorch, its caching allocator's segments)";
  title += leak.growing
               ? "\n  LEAK: live memory grew at every " + leak.interval() + ", by " +
                     formatBytes(leak.growth_per_sample_bytes) + " each"
               : "\n  no steady growth (" +
                     std::string(leak.basis.empty() ? "nothing to measure" : "measured over " + leak.basis) + ")";
  Report r{"memory",
           title,
           {{"device", "Device", Unit::kText},
            {"peak_bytes", "Peak", Unit::kBytes},
            {"cuda_peak_bytes", "CUDA's peak", Unit::kBytes},
            {"peak_at_ns", "Peak at (since start)", Unit::kNanoseconds},
            {"live_at_peak", "Allocations at peak", Unit::kCount},
            {"end_bytes", "Still allocated at end", Unit::kBytes},
            {"allocations", "Allocations", Unit::kCount},
            {"unmatched_frees", "Frees of earlier memory", Unit::kCount}},
           {}};
  for (const auto& d : m.devices) {
    int64_t allocations = 0;
    for (const auto& a : m.allocations) allocations += a.device == d.device;
    // A process that opened the device and allocated nothing (a launcher, a worker) has no peak to show.
    if (allocations == 0 && d.peak_bytes == 0 && d.cuda_peak_bytes == 0) continue;
    r.rows.push_back({trace.deviceLabel(d.device), d.peak_bytes, d.cuda_peak_bytes, d.peak_ns - trace.startNs(),
                      static_cast<int64_t>(d.live_at_peak.size()), d.end_bytes, allocations, m.unmatched_frees});
  }
  return r;
}

Report memoryPoolsReport(const std::vector<analysis::PoolUsage>& pools, const analysis::TraceData& trace) {
  Report r{"memory_pools",
           "Memory pools (cudaMallocAsync): reserved from the device against handed out",
           {{"device", "Device", Unit::kText},
            {"pool", "Pool", Unit::kText},
            {"allocations", "Allocations", Unit::kCount},
            {"peak_used_bytes", "Peak used", Unit::kBytes},
            {"peak_reserved_bytes", "Peak reserved", Unit::kBytes},
            {"worst_reserved_bytes", "Worst: reserved", Unit::kBytes},
            {"worst_used_bytes", "used", Unit::kBytes},
            {"worst_unused_bytes", "unused", Unit::kBytes},
            {"worst_at_ns", "at (since start)", Unit::kNanoseconds}},
           {}};
  for (const auto& p : pools) {
    char address[32];
    std::snprintf(address, sizeof address, "0x%llx", static_cast<unsigned long long>(p.pool));
    r.rows.push_back({trace.deviceLabel(p.device), std::string(address), p.allocations, p.peak_used_bytes,
                      p.peak_reserved_bytes, p.worst.reserved_bytes, p.worst.used_bytes, p.slackBytes(),
                      p.worst.time_ns ? p.worst.time_ns - trace.startNs() : int64_t{0}});
  }
  return r;
}

Report memoryUsageReport(const analysis::TraceData& trace) {
  Report r{"memory_usage",
           "In use by allocators that hand out their own reservation (XLA's memory_stats(), recorded with --jax)",
           {{"device", "Device", Unit::kText},
            {"allocator", "Allocator", Unit::kText},
            {"readings", "Readings", Unit::kCount},
            {"peak_in_use_bytes", "Peak in use", Unit::kBytes},
            {"end_in_use_bytes", "In use at end", Unit::kBytes},
            {"reserved_bytes", "Reserved", Unit::kBytes},
            {"limit_bytes", "Limit", Unit::kBytes}},
           {}};
  for (size_t d = 0; d < trace.devices.size(); ++d) {
    const analysis::AllocatorUsage u = analysis::allocatorUsage(trace, static_cast<int32_t>(d));
    if (u.readings == 0) continue;
    r.rows.push_back({trace.deviceLabel(static_cast<int32_t>(d)), u.allocator, u.readings, u.peak_bytes, u.end_bytes,
                      u.reserved_bytes, u.limit_bytes});
  }
  return r;
}

// Unified memory's migrations and faults by kind, as CUPTI reported them (recorded with `um` in --trace).
Report unifiedMemoryReport(const analysis::TraceData& trace) {
  Report r{"unified_memory",
           "Unified memory moved or faulted on demand (CUPTI's unified-memory records)",
           {{"kind", "Kind", Unit::kText},
            {"count", "Count", Unit::kCount},
            {"bytes", "Bytes", Unit::kBytes},
            {"total_ns", "Total time", Unit::kNanoseconds}},
           {}};
  std::map<schema::MigrationKind, std::array<int64_t, 3>> by_kind;  // count, bytes, time
  for (const schema::UnifiedMemoryRow& u : trace.unified_memory) {
    std::array<int64_t, 3>& k = by_kind[u.kind];
    k[0] += 1, k[1] += schema::isMigration(u.kind) ? u.value : 0, k[2] += u.end_ns - u.start_ns;
  }
  for (const auto& [kind, k] : by_kind) r.rows.push_back({std::string(schema::enumName(kind)), k[0], k[1], k[2]});
  return r;
}

Report memoryPeakReport(const analysis::MemoryAnalysis& m, const analysis::MemoryCategories& c,
                        const analysis::TraceData& trace) {
  Report r{"memory_peak",
           "Alive at each device's peak (largest first)",
           {{"device", "Device", Unit::kText},
            {"bytes", "Size", Unit::kBytes},
            {"age_ns", "Age at peak", Unit::kNanoseconds},
            {"category", "Category", Unit::kText},
            {"creator", "Made by", Unit::kText}},
           {}};
  for (const auto& d : m.devices) {
    for (int32_t i : d.live_at_peak) {
      const auto& a = m.allocations[i];
      r.rows.push_back({trace.deviceLabel(d.device), a.bytes, d.peak_ns - a.alloc_ns,
                        std::string(toString(c.of_allocation[i])), analysis::creatorOf(trace, a)});
      if (r.rows.size() >= 200) return r;  // creators are looked up one by one; a peak of thousands needs --format json
    }
  }
  return r;
}

Report memoryCategoriesReport(const analysis::MemoryCategories& c) {
  Report r{"memory_categories",
           std::string("Memory by category (device with the highest peak") +
               (c.phases_found ? ")"
                               : std::string("; no forward/backward/optimizer NVTX ranges, so only set-up vs loop is "
                                             "told") +
                                     (c.reservations_found ? ", and an allocator's reservation of half the GPU or "
                                                             "more is other, not parameters)"
                                                           : ")")),
           {{"category", "Category", Unit::kText},
            {"allocations", "Allocations", Unit::kCount},
            {"peak_bytes", "Own peak", Unit::kBytes},
            {"at_device_peak_bytes", "At device peak", Unit::kBytes}},
           {}};
  for (const auto& u : c.usage) {
    r.rows.push_back({std::string(toString(u.category)), u.allocations, u.peak_bytes, u.at_device_peak_bytes});
  }
  return r;
}

Report memoryModulesReport(const std::vector<analysis::ModuleMemory>& modules) {
  Report r{"memory_modules",
           "PyTorch tensors by the module that made them (recorded with --torch; device with the highest peak)",
           {{"module", "Module", Unit::kText},
            {"phase", "Pass", Unit::kText},
            {"allocations", "Tensors", Unit::kCount},
            {"allocated_bytes", "Allocated", Unit::kBytes},
            {"at_peak_bytes", "At peak", Unit::kBytes},
            {"activations_at_peak_bytes", "Activations at peak", Unit::kBytes}},
           {}};
  for (const analysis::ModuleMemory& m : modules) {
    r.rows.push_back({m.module, std::string(m.phase == analysis::Phase::kForward ? "forward" : "backward"),
                      m.allocations, m.allocated_bytes, m.at_peak_bytes, m.activations_at_peak_bytes});
  }
  return r;
}

Report memoryModelReport(const analysis::MemoryModel& m) {
  Report r{"memory_model",
           "Memory model M = P*D_param + P*D_grad + B*A*D_act + O*P*D_opt, fitted at the peak (P = " +
               std::to_string(m.parameter_count) +
               " fp32 parameters, O = " + std::to_string(m.optimizer_states_per_param).substr(0, 4) +
               " optimizer values per parameter), and what-ifs",
           {{"item", "Item", Unit::kText},
            {"bytes", "Peak", Unit::kBytes},
            {"change_bytes", "Change", Unit::kBytes},
            {"basis", "Based on", Unit::kText}},
           {}};
  const auto& t = m.terms;
  const std::string measured = "measured at the peak";
  r.rows.push_back({std::string("parameters  P*D_param"), t.parameters, int64_t{0}, measured});
  r.rows.push_back({std::string("gradients   P*D_grad"), t.gradients, int64_t{0}, measured});
  r.rows.push_back({std::string("activations B*A*D_act"), t.activations, int64_t{0}, measured});
  r.rows.push_back({std::string("optimizer   O*P*D_opt"), t.optimizer_state, int64_t{0}, measured});
  r.rows.push_back({std::string("unexplained (temporaries, other)"), t.unexplained, int64_t{0}, measured});
  r.rows.push_back(
      {std::string("measured peak"), m.measured_peak_bytes, int64_t{0}, std::string("allocations CUDA saw")});
  for (const auto& w : m.what_ifs) {
    r.rows.push_back(
        {"what if: " + w.change, w.predicted_peak_bytes, w.predicted_peak_bytes - m.measured_peak_bytes, w.basis});
  }
  return r;
}

Report fusionReport(const std::vector<analysis::FusionPattern>& patterns) {
  Report r{"fusion",
           "Fusable kernel chains (recurring patterns, largest estimated saving first)",
           {{"saving_ns", "Est. saving", Unit::kNanoseconds},
            {"occurrences", "Times", Unit::kCount},
            {"kernel_count", "Kernels", Unit::kCount},
            {"kernel_time_ns", "Kernel time", Unit::kNanoseconds},
            {"gap_time_ns", "Gaps", Unit::kNanoseconds},
            {"launches_removed", "Launches saved", Unit::kCount},
            {"intermediate_bytes", "Traffic saved", Unit::kBytes},
            {"kind", "Kind", Unit::kText},
            {"kernels", "Kernels", Unit::kText},
            {"basis", "Based on", Unit::kText}},
           {}};
  for (const auto& p : patterns) {
    std::string names;
    for (size_t i = 0; i < p.kernels.size(); ++i) {
      names += (i ? " -> " : "") + std::string(toString(p.classes[i])) + ":" + p.kernels[i].substr(0, 60);
    }
    r.rows.push_back({p.saving_ns, p.occurrences, static_cast<int64_t>(p.kernels.size()), p.kernel_time_ns,
                      p.gap_time_ns, p.launches_removed, p.intermediate_bytes, std::string(toString(p.kind)), names,
                      p.basis});
  }
  return r;
}

std::vector<Report> allReports(const Stats& s, const analysis::TraceData& trace) {
  const analysis::Iterations iterations = analysis::findIterations(trace);
  const analysis::MemoryAnalysis memory = analysis::analyzeMemory(trace, iterations);
  const analysis::MemoryCategories categories = analysis::categorizeMemory(trace, iterations, memory);
  return {summaryReport(s),
          kernelsReport(s),
          kernelClassesReport(s),
          apiReport(s),
          transfersReport(s),
          nvtxReport(s),
          devicesReport(s),
          streamsReport(s, trace),
          timelineReport(analysis::analyzeTimeline(trace), trace),
          iterationsReport(iterations),
          ranksReport(analysis::analyzeJob(trace, analysis::classifyConfigs(trace), memory), trace),
          collectivesReport(trace),
          memoryReport(memory, trace),
          memoryCategoriesReport(categories),
          memoryModulesReport(analysis::memoryByModule(trace, memory, categories)),
          memoryModelReport(analysis::fitMemoryModel(memory, categories, iterations)),
          memoryPeakReport(memory, categories, trace),
          memoryPoolsReport(analysis::analyzePools(trace), trace),
          memoryUsageReport(trace),
          unifiedMemoryReport(trace),
          fusionReport(analysis::findFusableChains(trace, iterations))};
}

// Names nsys stats users know, mapped to ours.
std::string canonicalReportName(const std::string& name) {
  if (name == "cuda_gpu_kern_sum") return "kernels";
  if (name == "cuda_api_sum") return "api";
  if (name == "cuda_gpu_mem_time_sum" || name == "cuda_gpu_mem_size_sum") return "transfers";
  if (name == "nvtx_sum") return "nvtx";
  if (name == "um_sum") return "unified_memory";
  return name;
}

void writeJson(const std::vector<Report>& reports, const Stats& s, const std::string& path) {
  JsonWriter json(stdout);
  json.beginObject().field("gpuscope_stats_version", kStatsJsonVersion).field("trace", path);
  for (const Report& r : reports) {
    json.key(r.name);
    if (r.name == "summary") {  // one object, not an array of one
      json.beginObject();
      for (size_t c = 0; c < r.columns.size(); ++c) {
        json.key(r.columns[c].key);
        std::visit([&](const auto& v) { json.value(v); }, r.rows[0][c]);
      }
      json.endObject();
    } else {
      writeJsonRows(json, r);
    }
  }
  json.key("warnings").beginArray(true);
  for (const std::string& w : s.warnings) json.value(w);
  json.endArray().endObject();
  std::fputc('\n', stdout);
  json.flush();
}

constexpr OptionSpec kOptions[] = {
    {"format", 0, "table|csv|json", "output format (default: table)"},
    {"report", 0, "NAME",
     "only this report: summary, kernels, kernel_classes, api, transfers, nvtx, devices, streams, timeline, "
     "iterations, ranks, collectives, memory, memory_categories, memory_modules, memory_model, memory_peak, "
     "memory_pools, memory_usage, unified_memory, fusion "
     "(nsys "
     "names such as "
     "cuda_gpu_kern_sum also work)"},
    {"limit", 0, "N", "rows per table in the table format (default: 20; 0: all)"},
};

int runStats(const ParsedArgs& args) {
  if (args.positional.size() != 1) {
    return reportError("stats", Status(ErrorKind::kUsage, "expected one trace file (see gpuscope stats --help)"));
  }
  const std::string format = args.get("format").value_or("table");
  if (format != "table" && format != "csv" && format != "json") {
    return reportError("stats", Status(ErrorKind::kUsage, "unknown --format '" + format + "' (table, csv or json)"));
  }
  Result<int64_t> limit = countOption(args, "limit", 20);
  if (!limit) return reportError("stats", limit.status());
  Result<analysis::TraceData> trace = analysis::loadTrace(args.positional[0]);
  if (!trace) return reportError("stats", trace.status());
  const Stats stats = analysis::computeStats(*trace);
  std::vector<Report> reports = allReports(stats, *trace);
  if (auto only = args.get("report")) {
    const std::string name = canonicalReportName(*only);
    std::erase_if(reports, [&](const Report& r) { return r.name != name; });
    if (reports.empty()) {
      return reportError("stats",
                         Status(ErrorKind::kUsage, "unknown --report '" + *only + "' (see gpuscope stats --help)"));
    }
  }
  if (format == "json") {
    writeJson(reports, stats, trace->path);
    return kExitOk;
  }
  if (format == "csv" && reports.size() != 1) {
    return reportError("stats", Status(ErrorKind::kUsage, "--format csv writes one report: add --report NAME"));
  }
  for (size_t i = 0; i < reports.size(); ++i) {
    // A single process is no job: its empty ranks table is left out unless asked for; so is an empty NCCL table.
    if (format == "table" && (reports[i].name == "ranks" || reports[i].name == "collectives") &&
        reports[i].rows.empty() && !args.get("report")) {
      continue;
    }
    if (format == "csv") {
      writeCsv(stdout, reports[i]);
    } else if (reports[i].name == "summary" || reports[i].name == "timeline") {
      writeVertical(stdout, reports[i]);
    } else {
      writeTable(stdout, reports[i], static_cast<size_t>(*limit));
    }
    if (format == "table" && i + 1 < reports.size()) std::printf("\n");
  }
  for (const std::string& w : stats.warnings) std::fprintf(stderr, "gpuscope stats: %s\n", w.c_str());
  return kExitOk;
}

}  // namespace

const Command& statsCommand() {
  static const Command command{
      "stats",
      "per-kernel, per-API, copy, NVTX and utilisation summaries of a trace",
      "gpuscope stats TRACE [options]",
      "Prints nsys-stats-like summaries: kernels by name and by class (with GEMM precision), CUDA API calls,\n"
      "copies and memsets with their bandwidth, NVTX ranges, how busy each GPU and stream was, and why each\n"
      "GPU was idle (after host syncs, host copies, slow launching, queued work), with launch latencies.\n"
      "The JSON form is described in docs/stats-json.md.",
      kOptions,
      runStats};
  return command;
}

}  // namespace gpuscope::cli
