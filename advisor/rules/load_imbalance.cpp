// load_imbalance: the ranks of a data-parallel job meet at every collective, so in each step they all wait for
// the rank with the most GPU work. Where that work differs from step to step (sequences of varying length,
// batches split unevenly, data-dependent paths), the busiest rank changes and no one rank is a straggler, yet
// every step runs at its busiest rank's pace. Balanced steps take the ranks' mean instead.
#include "advisor/host_work.h"
#include "advisor/rule.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatDuration;
using analysis::formatShare;

namespace {

// Ranks doing the same work differ a little: the busiest rank's compute was 0.5-3.7 % of the step above the mean
// on five clean 2-rank jobs on 2 x H100 (DDP, FSDP2, gradient accumulation; 2026-11-26), where the waiting rank's
// spinning collectives share its SMs. This share of the job's step is well past that.
constexpr double kImbalanceShare = 0.10;
// And what balancing would win, as the other time rules.
constexpr double kGainShare = 0.05;

std::optional<Finding> loadImbalance(const Context& c);

constexpr Rule kRule = {
    .id = "load_imbalance",
    .title = "The ranks' GPU work differs from step to step",
    .reads =
        "each rank's compute kernel time in each of its timed steps (analyzer/job), step k of every rank "
        "together",
    .fires_when =
        "the busiest rank's compute exceeds the ranks' mean by 10 % of the job's step or more, averaged over the "
        "steps, balancing would win 5 % or more, and one rank is not the busiest in most of the steps (that is the "
        "straggler rule's, cause: its kernels)",
    .why =
        "Every rank waits at the step's collectives for the one with the most work, so each step takes its "
        "busiest rank's time: uneven work costs the job the difference, on every rank.",
    .fix =
        "Give every rank the same amount of work in each step: batches of equal token counts (sequences "
        "bucketed or packed by length, each bucket split across the ranks), shards of equal size, or shapes "
        "padded to a fixed length.",
    .snippets = {"# group samples of similar length, then deal each group out to the ranks:\n"
                 "order = sorted(range(len(dataset)), key=lambda i: lengths[i])\n"
                 "groups = [order[i:i + world * batch] for i in range(0, len(order), world * batch)]\n"
                 "my_batches = [g[rank::world] for g in groups]  # equal lengths on every rank in a step",
                 "", "", ""},
    .verify =
        "Record again: `gpuscope stats --report ranks` shows the ranks' compute per step close together, and "
        "the job's step shorter.",
    .check = loadImbalance};

std::optional<Finding> loadImbalance(const Context& c) {
  const analysis::JobView& job = c.job;
  if (job.ranks.size() < 2 || job.step_ns <= 0) return std::nullopt;
  const double share = static_cast<double>(job.imbalance_ns) / static_cast<double>(job.step_ns);
  if (share < kImbalanceShare || job.busiest_share >= analysis::notByChance(job.ranks.size())) return std::nullopt;
  // The waiting is the GPU's: where the host sets the pace, it wins at most the step less the host's own work.
  const int64_t gain = std::min(job.imbalance_ns, gpuSlack(c));
  if (static_cast<double>(gain) < kGainShare * static_cast<double>(job.step_ns)) return std::nullopt;
  Finding f = startFinding(c, kRule);
  f.title = "The ranks' GPU work differs step by step: the busiest rank has " + formatDuration(job.imbalance_ns) +
            " more per step than their mean";
  f.summary = "Each step waits for whichever rank has the most GPU work, and that rank changes from step to step.";
  f.evidence.push_back({"per step, the busiest rank's compute kernels run " + formatDuration(job.imbalance_ns) +
                            " longer than the ranks' mean (" + formatShare(share) +
                            " of the job's step), averaged "
                            "over the steps",
                        {}});
  f.evidence.push_back({"the busiest rank changes: rank " + std::to_string(job.ranks[job.busiest].rank) +
                            " most often, in " + formatShare(job.busiest_share) + " of the steps",
                        {}});
  for (size_t r = 0; r < job.ranks.size() && r < 8; ++r) {
    const analysis::RankStep& x = job.ranks[r];
    f.evidence.push_back({"rank " + std::to_string(x.rank) + ": compute " +
                              formatDuration(x.compute_ns + x.comm_overlapped_ns) + " per step on average, step " +
                              formatDuration(x.step_ns),
                          {}});
  }
  f.gain = timeGain(c, gain,
                    "the busiest rank's compute above the ranks' mean, per step: with the work balanced each step "
                    "takes the mean; no more than the step less the host's own work");
  setSeverity(f);
  return f;
}

}  // namespace

const Rule& loadImbalanceRule() { return kRule; }

}  // namespace gpuscope::advisor
