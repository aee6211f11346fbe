// A job of several ranks (the processes torchrun, mpirun or srun started, each driving its GPU and meeting
// the others in collectives) seen as one: each rank's step and what fills it, the job's step (its slowest
// rank's), the ranks' collectives matched one to one, their clocks checked against each other, and the rank
// the others wait for, if one does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/kernel_classifier.h"
#include "analyzer/memory_timeline.h"
#include "analyzer/phases.h"
#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

// One rank's steady step, per step, over its timed steps (each from its start to the next one's start).
// compute + comm_alone + comm_overlapped + copy + idle is the step.
struct RankStep {
  int32_t session = kNone;         // index into trace.sessions
  int64_t rank = -1;               // global rank (the process's RANK); its order among the ranks where it gave none
  int32_t device = kNone;          // the device its kernels run on (the busiest of its process)
  int64_t steps = 0;               // timed steps found
  int64_t step_ns = 0;             // start-to-start (analysis::stepOf)
  int64_t compute_ns = 0;          // other kernels running, no communication beside them
  int64_t comm_alone_ns = 0;       // communication kernels with no compute beside them
  int64_t comm_overlapped_ns = 0;  // communication kernels beside compute
  int64_t copy_ns = 0;             // only copies or memsets running
  int64_t idle_ns = 0;             // nothing running
  int64_t between_ns = 0;          // of idle_ns, from one step's GPU end to the next one's start
  // Its host's own work: the step less the time its host waited for the GPU (synchronize calls, synchronous
  // copies, launches held by a full queue); 0 where the trace has none of its CUDA calls.
  int64_t host_ns = 0;
  // Of the median step, the stretches of 1 ms (or a tenth of the step) or more in which its process made no CUDA
  // call (its own code: Python, I/O, loading data, a sleep); 0 where host_ns is.
  int64_t away_ns = 0;
  int64_t kernels = 0;     // its device's kernels per step
  int64_t peak_bytes = 0;  // its device's peak memory: its tensors' where the trace has them, else CUDA's
  // At the collectives of the steady steps: the share it arrived at last, and per step how much later than
  // the next-latest rank it arrived at those.
  double last_share = 0;
  int64_t late_ns = 0;
  // Per step, what it waited inside those collectives for the rank that arrived last (at most each kernel's
  // time): communication that moves no data, whatever any overlap would do.
  int64_t wait_ns = 0;
};

// The rank the others wait for at their collectives.
struct Straggler {
  size_t rank_index = 0;  // into JobView::ranks
  double last_share = 0;  // of the matched collectives, those it arrived at last
  int64_t late_ns = 0;    // per step: how much later than the next-latest rank it arrived, over those
  int64_t wait_ns = 0;    // per step: what each other rank waited for it in its collectives, on average
  // Why: the part of its step that is longer than on the other ranks (median of theirs), per step.
  std::string cause;  // "its kernels", "its host work", "its input pipeline" or "" (not told)
  int64_t cause_ns = 0;
  // Where its extra time falls, where the trace names phases: its compute, its own code's stretches (kAfter: after
  // its optimizer step, before its next step) or its GPU's idle time.
  Phase phase = Phase::kNoPhase;
  bool own_code = false;  // host work: its own code between CUDA calls (Python, NumPy, I/O, a sleep)
  // Its host's extra time per step that is spread over the same CUDA calls as the others', with no more work of
  // its own between them: a slower or busier CPU, not counted in cause_ns.
  int64_t spread_ns = 0;
};

struct JobView {
  std::vector<RankStep> ranks;  // by rank; empty unless at least two ranks have GPU work
  size_t slowest = 0;           // index of the rank with the longest step
  int64_t step_ns = 0;          // the job's step: the slowest rank's
  // Distinct hosts of the ranks, 0 when the trace does not name them (an import of torch.profiler traces). On
  // one host the ranks share one clock (CUPTI's); otherwise their clocks are aligned on the collectives.
  int64_t hosts = 0;
  bool oneHost() const { return hosts == 1; }
  // Whether every rank's host work is in the trace (RankStep::host_ns): the collector recorded their CUDA calls.
  bool hostWorkMeasured() const;
  // Collectives matched across ranks: on one host, kernels of one name that end together on every rank; across
  // hosts, the k-th communication kernel of each rank (NCCL issues a communicator's collectives in the same
  // order on every rank).
  int64_t collectives = 0;
  std::string unmatched;  // why the ranks' collectives could not be matched; "" when they were
  // Per rank, what is added to its times to put it on the first rank's clock: 0 on one host; across hosts,
  // the median difference of the collectives' ends, which finish together on every rank.
  std::vector<int64_t> clock_offset_ns;
  int64_t clock_residual_ns = 0;  // median spread of a collective's end across ranks, after alignment
  std::optional<Straggler> straggler;
  // The ranks' GPU work step by step (the k-th timed step of each): per step, the busiest rank's compute kernel
  // time less the ranks' mean, averaged over the steps; the rank that was the busiest most often (index into
  // ranks) and the share of the steps it was.
  int64_t imbalance_ns = 0;
  size_t busiest = 0;
  double busiest_share = 0;
};

// A share of the collectives (or steps) that one of N ranks reaches by no coin toss: past halfway from chance
// (1/N) to all of them, 75 % of 2 ranks, 56 % of 8.
inline double notByChance(size_t ranks) { return (1.0 + 1.0 / static_cast<double>(ranks)) / 2.0; }

// The process (index into trace.sessions) that gave rank `rank` (torchrun's RANK, MPI's, Slurm's); kNone if none did.
int32_t sessionOfRank(const TraceData& trace, int64_t rank);
// The ranks the trace's processes gave, in order: "0, 1".
std::string ranksText(const TraceData& trace);

JobView analyzeJob(const TraceData& trace, const std::vector<KernelKind>& kinds, const MemoryAnalysis& memory);

// "on one host", "on 3 hosts", or "on hosts the trace does not name".
std::string hostsText(const JobView& job);

}  // namespace gpuscope::analysis
