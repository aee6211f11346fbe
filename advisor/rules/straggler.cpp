// straggler: in a multi-rank job every collective finishes when its last rank arrives, so one rank that is late
// to its collectives makes every other rank wait there, each step. Their waiting looks like slow or exposed
// communication on their own timelines; the fix is in the late rank's own work.
#include <algorithm>

#include "advisor/host_work.h"
#include "advisor/rule.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatDuration;
using analysis::formatShare;

namespace {

// A rank late by less than this share of the job's step, or this time, is within the ranks' normal jitter.
constexpr double kLateShare = 0.05;

// By chance each of N ranks arrives last at 1/N of the collectives; a straggler arrives last at most of them,
// past analysis::notByChance: a clean 2-rank DDP job recorded on 2 x H100 had one rank last at 52.9 % of 176
// collectives.
constexpr int64_t kLateNs = 50'000;

std::optional<Finding> straggler(const Context& c);

constexpr Rule kRule = {
    .id = "straggler",
    .title = "One rank makes the others wait at their collectives",
    .reads = "every rank's communication kernels, matched collective by collective, and each rank's step breakdown",
    .fires_when =
        "one rank arrives last at more of the collectives than halfway from chance (1/N of N ranks) to all of them "
        "(75 % of 2 ranks), later than the next rank by 5 % of the job's step (and 50 µs) or more per step",
    .why =
        "A collective finishes when its last rank arrives: every other rank waits inside it, each step, however "
        "fast its own work is. On their timelines the wait looks like slow or exposed communication.",
    .fix = "Make the late rank's own work as short as the others'.",
    .snippets = {},
    .verify =
        "Record again: `gpuscope stats` shows the ranks' steps, and no rank arrives last at most collectives; "
        "the job's step is shorter.",
    .check = straggler};

std::string phaseWords(analysis::Phase phase) {
  switch (phase) {
    case analysis::Phase::kForward: return "in its forward pass";
    case analysis::Phase::kBackward: return "in its backward pass";
    case analysis::Phase::kOptimizer: return "in its optimizer step";
    case analysis::Phase::kAfter: return "after its optimizer step, before its next step";
    default: return "";
  }
}

// What to change, by what makes the rank late; and, where another rank is analysed, how to see the late one's own
// findings.
void setFix(Finding& f, const analysis::Straggler& s, int64_t rank, bool analysed) {
  const std::string who = "rank " + std::to_string(rank);
  const std::string own_view =
      analysed ? "" : "gpuscope advise --rank " + std::to_string(rank) + " TRACE   # the late rank's own findings\n";
  f.fix.snippet_language = "shell";
  if (s.cause == "its kernels") {
    f.fix.summary = "Give " + who + " the same GPU work as the others: equal shards, batch and sequence lengths " +
                    "(pad or bucket them), or find why its GPU is slower (clocks, throttling, another process on it).";
    f.fix.snippet = own_view +
                    "nvidia-smi -q -d CLOCK,PERFORMANCE   # throttling reasons of each GPU\nnvidia-smi   # "
                    "another process on the late rank's GPU?";
  } else if (s.cause == "its input pipeline") {
    f.fix.summary = "Feed " + who + " as fast as the others: more DataLoader workers, pinned memory, or a " +
                    "sampler that gives every rank the same amount of data to load.";
    f.fix.snippet = own_view;
    if (own_view.empty()) f.fix.snippet_language.clear();
  } else {
    f.fix.summary = "Find what " + who + "'s host does each step that the others' do not (logging, metrics, " +
                    "checkpointing or evaluation on one rank only, a CPU shared with other work) and move it out " +
                    "of the step; give every rank its own CPU cores.";
    f.fix.snippet = own_view +
                    "# one set of cores per rank, and threads to match (here 2 ranks on 32 cores)\n"
                    "OMP_NUM_THREADS=16 torchrun --nproc_per_node=2 train.py\n"
                    "# see where the late rank's host time goes: py-spy record --pid <its pid>";
  }
}

std::string rankLine(const analysis::RankStep& r) {
  return "rank " + std::to_string(r.rank) + ": " + formatDuration(r.step_ns) + " per step; compute " +
         formatDuration(r.compute_ns) + ", communication alone " + formatDuration(r.comm_alone_ns) +
         ", communication beside compute " + formatDuration(r.comm_overlapped_ns) + ", copies " +
         formatDuration(r.copy_ns) + ", GPU idle " + formatDuration(r.idle_ns);
}

std::optional<Finding> straggler(const Context& c) {
  const analysis::JobView& job = c.job;
  if (!job.straggler || job.step_ns <= 0) return std::nullopt;
  const analysis::Straggler& s = *job.straggler;
  const double late_share = static_cast<double>(s.late_ns) / static_cast<double>(job.step_ns);
  if (s.last_share < analysis::notByChance(job.ranks.size()) || late_share < kLateShare || s.late_ns < kLateNs) {
    return std::nullopt;
  }
  const analysis::RankStep& late = job.ranks[s.rank_index];
  // Without the extra work the late rank arrives with the others; the others' wait goes, no more than that.
  // Where every rank's host work is measured and no part of the late rank's step is longer than the others',
  // the ranks do the same work a phase apart: each waits for its own host, and nobody would be faster.
  int64_t gain_ns = !s.cause.empty() ? std::min(s.late_ns, s.cause_ns) : job.hostWorkMeasured() ? 0 : s.late_ns;
  // And only where the wait holds the others up: a waiting rank whose host is busy for the whole step would then
  // wait for its own host. The ranks of an FSDP2 job on 2 x H200 issued in lockstep, one 2.3 ms behind at each of
  // 38 collectives a step, and each rank's host was busy for 98 ms of the 107 ms step.
  if (late.session != c.session) gain_ns = std::min(gain_ns, gpuSlack(c));
  // Late, but by little more than any one part of its step: clean 2-rank DDP jobs on 2 x H200 had a rank last
  // at 83 % of the collectives, 7-10 % of the step late, whose extra work explained 1.2-3.5 % of the step.
  if (static_cast<double>(gain_ns) < kLateShare * static_cast<double>(job.step_ns)) return std::nullopt;
  const std::string who = "rank " + std::to_string(late.rank);
  Finding f = startFinding(c, kRule);
  f.title = "Rank " + std::to_string(late.rank) + " makes the other ranks wait " + formatDuration(s.wait_ns) +
            " per step at their collectives";
  f.summary = who + " arrives last at " + formatShare(s.last_share) + " of the collectives" +
              (s.cause.empty() ? ""
                               : ": " + s.cause + " take" + (s.cause == "its kernels" ? "" : "s") +
                                     " longer than on the other ranks");
  f.evidence.push_back({who + " arrives " + formatDuration(s.late_ns) + " per step after the next-latest rank, at " +
                            std::to_string(job.collectives) + " collectives matched across " +
                            std::to_string(job.ranks.size()) + " ranks",
                        {}});
  if (!s.cause.empty()) {
    std::string where = phaseWords(s.phase);
    f.evidence.push_back({s.cause + ": " + formatDuration(s.cause_ns) + " more per step than the other ranks' median" +
                              (where.empty() ? "" : ", most of it " + where) +
                              (s.cause != "its host work" ? ""
                               : s.own_code ? " (code of its own between its CUDA calls: Python, NumPy, I/O)"
                                            : " (GPU idle while its host issues work)"),
                          {}});
  }
  for (size_t r = 0; r < job.ranks.size() && r < 8; ++r) f.evidence.push_back({rankLine(job.ranks[r]), {}});
  setFix(f, s, late.rank, late.session == c.session);
  f.gain = timeGain(c, gain_ns,
                    s.cause.empty()
                        ? "the late rank's lateness per step, all of which the others wait"
                        : "the late rank's extra " + s.cause.substr(4) +
                              " against the other ranks' median, at most its lateness at the collectives: without it "
                              "the rank arrives with the others and nobody waits");
  // Seen from another rank, the time is its waiting inside collectives (kernel time); from the late rank, its
  // own GPU's idle time.
  f.gain.idle_ns = late.session == c.session ? f.gain.time_ns : 0;
  setSeverity(f);
  return f;
}

}  // namespace

const Rule& stragglerRule() { return kRule; }

// Where the late rank's host runs the same calls as the others', only slower, no change to the program is known
// to help: the report says what was seen and lets the user look at the machine.
std::optional<std::string> slowerHostNote(const Context& c) {
  const analysis::JobView& job = c.job;
  if (!job.straggler || job.step_ns <= 0 || straggler(c)) return std::nullopt;
  const analysis::Straggler& s = *job.straggler;
  if (s.last_share < analysis::notByChance(job.ranks.size()) ||
      s.spread_ns < kLateShare * static_cast<double>(job.step_ns)) {
    return std::nullopt;
  }
  const std::string who = "rank " + std::to_string(job.ranks[s.rank_index].rank);
  return who + " arrives last at " + formatShare(s.last_share) + " of the collectives: its host takes " +
         formatDuration(s.spread_ns) +
         " longer per step over the same CUDA calls as the other ranks', with no work of its own between them (a "
         "slower or busier CPU: other processes on its cores, or threads of several ranks sharing cores); not "
         "reported as a straggler, as nothing in the program makes it late (pinning each rank to cores of its own "
         "may help: numactl or taskset around each rank)";
}

}  // namespace gpuscope::advisor
