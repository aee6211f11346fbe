// rank_memory_imbalance: the ranks of a data-parallel job hold the same model state and run the same batch, so
// their peaks should match. One rank that holds much more sets the job's memory limit: the batch, the sequence
// length and the model every rank can run are those that fit on it. The extra is nearly always work only that
// rank does (evaluation, metrics or logging kept on rank 0, a full state dict gathered for a checkpoint) or an
// uneven split (shards, pipeline stages, an embedding on one rank).
#include <algorithm>

#include "advisor/rule.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatBytes;
using analysis::formatShare;

namespace {

// Ranks' peaks differ by a little for ordinary reasons: NCCL's buffers, cuBLAS's workspaces, the caching
// allocator's rounding. Past both of these, one rank holds something the others do not.
constexpr double kOverMedian = 0.2;
constexpr int64_t kOverBytes = 256LL << 20;

std::optional<Finding> rankMemoryImbalance(const Context& c);

constexpr Rule kRule = {
    .id = "rank_memory_imbalance",
    .title = "One rank holds much more memory than the others",
    .reads = "each rank's peak device memory (analyzer/job: its tensors' where the trace has them, else CUDA's)",
    .fires_when =
        "the rank with the highest peak holds 20 % and 256 MiB or more above the median of the other ranks' peaks",
    .why =
        "Every rank runs the same step, so the job can only grow (batch, sequence length, model) as far as its "
        "fullest rank allows, and that rank is the one that runs out of memory first.",
    .fix =
        "Find what only that rank keeps and free it or spread it: evaluation, metrics or logged tensors kept on "
        "rank 0, a full state dict gathered for a checkpoint, shards or stages of unequal size.",
    .snippets = {"# on the heavy rank, see what holds its peak:\n"
                 "if dist.get_rank() == HEAVY_RANK:\n"
                 "    torch.cuda.memory._record_memory_history()\n"
                 "# ... at the end of a step:\n"
                 "    torch.cuda.memory._dump_snapshot(f'rank{HEAVY_RANK}.pickle')  # gpuscope import rankN.pickle",
                 "", "", ""},
    .verify =
        "Record again: `gpuscope stats --report ranks` shows every rank's peak memory within 20 % of the others'.",
    .check = rankMemoryImbalance};

// The median of the ranks' peaks other than `heavy`'s.
int64_t othersMedian(const std::vector<analysis::RankStep>& ranks, size_t heavy) {
  std::vector<int64_t> others;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (r != heavy) others.push_back(ranks[r].peak_bytes);
  }
  std::nth_element(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(others.size() / 2), others.end());
  return others[others.size() / 2];
}

std::optional<Finding> rankMemoryImbalance(const Context& c) {
  const std::vector<analysis::RankStep>& ranks = c.job.ranks;
  if (ranks.size() < 2) return std::nullopt;
  size_t heavy = 0;
  for (size_t r = 1; r < ranks.size(); ++r) heavy = ranks[r].peak_bytes > ranks[heavy].peak_bytes ? r : heavy;
  const int64_t median = othersMedian(ranks, heavy);
  const int64_t extra = ranks[heavy].peak_bytes - median;
  if (median <= 0 || extra < kOverBytes || static_cast<double>(extra) < kOverMedian * static_cast<double>(median)) {
    return std::nullopt;
  }
  const std::string who = "rank " + std::to_string(ranks[heavy].rank);
  Finding f = startFinding(c, kRule);
  f.title = "Rank " + std::to_string(ranks[heavy].rank) + " holds " + formatBytes(extra) +
            " more device memory at its peak than the other ranks";
  f.summary = who + "'s peak is " + formatBytes(ranks[heavy].peak_bytes) + ", the other ranks' median " +
              formatBytes(median) + " (+" + formatShare(static_cast<double>(extra) / static_cast<double>(median)) +
              "): the job fits only as much as " + who + " can hold.";
  for (size_t r = 0; r < ranks.size() && r < 8; ++r) {
    f.evidence.push_back({"rank " + std::to_string(ranks[r].rank) + ": peak " + formatBytes(ranks[r].peak_bytes) +
                              " on " + c.trace.deviceLabel(ranks[r].device),
                          {}});
  }
  const int32_t device = ranks[heavy].device;
  if (device >= 0 && static_cast<size_t>(device) < c.memory.devices.size()) {
    addLiveAtPeak(f, c, c.memory.devices[static_cast<size_t>(device)], who + "'s peak");
  }
  // The job's measured peak is its fullest device's: with the extra gone, that rank holds what the others do.
  f.gain.memory_bytes = extra;
  f.gain.share_of_peak = c.shareOfPeak(extra);
  f.gain.basis = who + "'s peak less the other ranks' median: what the job's fullest rank would hold without " +
                 "what only it keeps";
  setSeverity(f);
  return f;
}

}  // namespace

const Rule& rankMemoryImbalanceRule() { return kRule; }

}  // namespace gpuscope::advisor
