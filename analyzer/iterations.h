// Training or inference iterations: found from NVTX ranges when the program has them ("step",
// "ProfilerStep#3", "iteration 12"), otherwise from the repeating structure of its kernel sequence, or from
// the host synchronisations that end each step. Per-iteration figures are what users compare.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "analyzer/duration_stats.h"
#include "analyzer/intervals.h"
#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

struct Iteration {
  int64_t start_ns = 0, end_ns = 0;          // host time: the NVTX range, or launch of its first kernel to the next's
  int64_t gpu_start_ns = 0, gpu_end_ns = 0;  // its first kernel's start to its last kernel's end
  int64_t kernels = 0;
  int64_t kernel_time_ns = 0;  // execution time of its kernels, added up
  bool warmup = false;         // one of the first iterations, markedly slower than the rest
  bool hook_free = false;      // began after the PyTorch bridge removed its module hooks (kHooksRemovedMark)
  bool as_written = false;     // `apply --record`'s timing check ran it as the script wrote it (kApplyAsWrittenMark)
  bool unrecorded = false;     // ran while the bridge paused recording (PausedSteps): its kernels are not in the trace
  int32_t forwards = 1;        // a root module's forwards in it: the micro-batches of gradient accumulation
  // Where forwards alone (an evaluation) ran after it, before the next step: from end_ns to here, in no step and not
  // between steps; 0 where none did.
  int64_t evaluation_end_ns = 0;
  // Host time or GPU time, whichever is longer: a GPU-bound step's kernels run on after its host range.
  int64_t durationNs() const { return std::max(end_ns, gpu_end_ns) - start_ns; }
  // Where the time between it and the next step begins: its GPU end, or the end of an evaluation after it.
  int64_t followedFrom() const { return std::max({end_ns, gpu_end_ns, evaluation_end_ns}); }
};

enum class IterationSource { kNotFound, kNvtx, kGraphLaunch, kKernelPattern, kHostSync, kCopyPattern, kXlaModule };

struct Iterations {
  IterationSource source = IterationSource::kNotFound;
  std::string marker;  // the NVTX range name, or the kernel name that opens each iteration
  int32_t session = 0;
  std::vector<Iteration> list;
  DurationStats steady_duration;  // durations of the iterations that are not warm-up, ns
  // When the bridge removed its module hooks in `session` (under `apply --record`, or ended its timing check
  // there, whichever came later); -1: it never did.
  int64_t hooks_removed_ns = -1;
  // Where `apply --record`'s timing check ran the model as written (kApplyAsWrittenMark to kApplyCheckDoneMark);
  // empty (start == end) where it did not.
  Interval as_written;
  // Where the bridge paused recording to time steps unrecorded (PausedSteps::paused), empty where it did not: those
  // steps are in no figure but the recording's cost.
  Interval paused;
  // Recorded under `apply --record`, whose check marked its end (kApplyCheckDoneMark): the steps before it ran the
  // model as written (its first call), compiling or inside the check, none the program as applied.
  bool applied = false;
  // Whether most steady iterations launch the very same kernels with the same grids. Batches of one shape do; shapes
  // that change from step to step (variable lengths) or data-dependent branches do not. True with fewer than two.
  bool repeating = true;
  int64_t warmupCount() const;
  // The steady (not warm-up) iteration whose GPU span holds this time, or kNone.
  int32_t steadyIterationAt(int64_t gpu_ns) const;
};

// Steady iterations as stretches of time: each one's window (its start to its GPU end), its period to the
// next when that one is taken too, that period as an interval, and the gap from its GPU end to the next
// one's start.
struct StepWindows {
  std::vector<Interval> windows, spans, between;
  // The windows as the GPU runs them: a GPU behind its host still runs the step before when the first of a run
  // of windows begins, so that window opens once those kernels are done (the host's stay `windows`).
  std::vector<Interval> gpu_windows;
  std::vector<int64_t> periods;
};

// The steady iterations a step is measured on. Where the PyTorch bridge removed its module hooks part-way
// and at least two hook-free steps follow, `timed` are those (less the first, in which the switch happened
// and a compiled model may recompile) and `annotated` the ones before (under `apply --record` the timed ones
// too: Iterations::applied); otherwise both are every steady iteration. Without NVTX ranges the last iteration has no
// end of its own (it runs on into the program's clean-up) and is left out.
struct SteadySteps {
  StepWindows annotated, timed;
  bool hook_free = false;
  // Whether `annotated` are steps that ran with the module hooks (not the timed ones in their place): none did where
  // the bridge removed them at the model's first call (a model the script compiled).
  bool module_ranges = false;
};
SteadySteps steadySteps(const Iterations& it);

// Which iterations (index into it.list) the step is timed on: those steadySteps().timed holds.
std::vector<bool> timedIterations(const Iterations& it);

// The step, one definition for stats, advise, diff and the GUI: the start-to-start period of the timed iterations
// (a host that queues steps ahead of its GPU makes each iteration's own span several steps long); 0 without two
// consecutive timed iterations. Of `periods` (those of steadySteps' timed iterations): the median where the steps
// repeat, so that a rare long one (a checkpoint saved, an evaluation) is no step; their mean where they do not
// (Iterations::repeating), since no one of them is typical and a clock over many steps measures the mean (a
// classifier fed texts of 8 to 128 tokens: 1.449 ms a step by its clock, median 1.133, mean 1.322; H200).
int64_t stepOf(const Iterations& it, std::vector<int64_t> periods);
int64_t stepNs(const Iterations& it);
// "median" or "mean": which stepOf takes.
std::string_view stepStatistic(const Iterations& it);

// The iterations of one process (index into trace.sessions: a rank of a job), or with kNone of the process
// whose ranges or kernels cover the most of the trace's work.
Iterations findIterations(const TraceData& trace, int32_t session = kNone);

std::string_view toString(IterationSource source);  // "nvtx", "kernel pattern", "host sync", "none"

}  // namespace gpuscope::analysis
