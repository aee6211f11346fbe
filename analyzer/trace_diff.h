// Two runs compared, as after a change: iteration time, peak memory and GPU busy time, time per kernel
// class and per kernel, which kernels appeared or disappeared, and for two runs of a job, each rank's step. When both
// runs have iterations, kernel times are per steady iteration (so runs of different lengths compare); otherwise they
// are run totals.
#pragma once

#include <string>
#include <vector>

#include "analyzer/kernel_classifier.h"
#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

struct Change {
  double before = 0, after = 0;
  double delta() const { return after - before; }
  double ratio() const { return before != 0 ? after / before : 0.0; }
};

struct KernelChange {
  std::string name;  // a kernel name, or "class precision" for class rows
  Change time_ns;    // per iteration (or in total)
  Change count;      // launches per iteration (or in total)
};

// One rank of a job in both runs: its step and what fills it, per step (analysis::RankStep).
struct RankChange {
  int64_t rank = -1;
  Change step_ns, compute_ns, comm_alone_ns, comm_overlapped_ns, idle_ns, host_ns;
};

struct TraceDiff {
  bool per_iteration = false;  // both runs had steady iterations
  Change iteration_ns;         // the step (analysis::stepNs; 0 when not per_iteration)
  Change peak_memory_bytes;    // highest device peak
  Change gpu_busy_ns, duration_ns, kernel_count;
  std::vector<KernelChange> classes;               // by class and precision, largest change first
  std::vector<KernelChange> kernels;               // by name, largest change first
  std::vector<std::string> appeared, disappeared;  // kernel names in only one run, by time
  // Where both runs are jobs of several ranks: the job's step (its slowest rank's) and each rank found in both.
  Change job_step_ns;
  std::vector<RankChange> ranks;
};

TraceDiff diffTraces(const TraceData& before, const TraceData& after);

// The change as a signed percentage ("+12.5 %", "-3.0 %"), "new" from nothing, "" from nothing to nothing.
std::string percentText(const Change& change);

}  // namespace gpuscope::analysis
