#include "analyzer/job.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <set>

#include "analyzer/duration_stats.h"
#include "analyzer/intervals.h"
#include "analyzer/iterations.h"
#include "analyzer/timeline_analysis.h"

namespace gpuscope::analysis {

namespace {

// Collectives matched by order only hold when the ranks issued the same ones: more differing names than
// this share means the sequences are not one job's.
constexpr double kMismatchedNames = 0.1;

// What ran on a rank's device, inside its timed steps, as disjoint intervals.
struct RankActivity {
  std::vector<Interval> spans;  // the timed steps, start to next start
  std::vector<Interval> comm, compute, copies, idle;
  std::vector<Interval> comm_kernels;  // every communication kernel of the device, whole run, in start order
  std::vector<int32_t> comm_names;     // their names (string ids)
  std::vector<int64_t> step_compute;   // per timed step, in order: its compute kernels' time (merged)
  std::vector<Interval> steps;         // the timed steps themselves, in order
  std::vector<Interval> away;          // its host's stretches without a CUDA call inside the timed steps
};

bool isComm(const TraceData& t, const std::vector<KernelKind>& kinds, size_t k) {
  return kinds[t.kernels.config[k]].cls == KernelClass::kCommunication;
}

// The processes that are ranks: those with GPU work that gave a rank, or that ran communication kernels.
std::vector<int32_t> rankSessions(const TraceData& t, const std::vector<KernelKind>& kinds) {
  std::vector<bool> gpu(t.sessions.size(), false), comm(t.sessions.size(), false);
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    gpu[t.kernels.session[k]] = true;
    if (isComm(t, kinds, k)) comm[t.kernels.session[k]] = true;
  }
  std::vector<int32_t> ranks;
  for (size_t s = 0; s < t.sessions.size(); ++s) {
    if (gpu[s] && (t.sessions[s].rank.has_value() || comm[s])) ranks.push_back(static_cast<int32_t>(s));
  }
  return ranks;
}

int32_t busiestDevice(const TraceData& t, int32_t session) {
  std::vector<int64_t> busy(t.devices.size(), 0);
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    if (t.kernels.session[k] == session) busy[t.kernels.device[k]] += t.kernels.end_ns[k] - t.kernels.start_ns[k];
  }
  return static_cast<int32_t>(std::max_element(busy.begin(), busy.end()) - busy.begin());
}

RankActivity activityOf(const TraceData& t, const std::vector<KernelKind>& kinds, const RankStep& r,
                        const std::vector<Interval>& spans) {
  RankActivity a;
  a.spans = mergeIntervals(spans);
  std::vector<Interval> comm, compute, copies;
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    if (t.kernels.device[k] != r.device) continue;
    const Interval i{t.kernels.start_ns[k], t.kernels.end_ns[k]};
    if (isComm(t, kinds, k)) {
      comm.push_back(i);
      a.comm_kernels.push_back(i);
      a.comm_names.push_back(t.configs[t.kernels.config[k]].name.id);
    } else {
      compute.push_back(i);
    }
  }
  for (size_t c = 0; c < t.copies.size(); ++c) {
    if (t.copies.device[c] == r.device) copies.push_back({t.copies.start_ns[c], t.copies.end_ns[c]});
  }
  for (size_t m = 0; m < t.memsets.size(); ++m) {
    if (t.memsets.device[m] == r.device) copies.push_back({t.memsets.start_ns[m], t.memsets.end_ns[m]});
  }
  a.comm = intersect(mergeIntervals(std::move(comm)), a.spans);
  a.compute = intersect(mergeIntervals(std::move(compute)), a.spans);
  std::vector<Interval> kernels = a.comm;
  kernels.insert(kernels.end(), a.compute.begin(), a.compute.end());
  kernels = mergeIntervals(std::move(kernels));
  a.copies = subtract(intersect(mergeIntervals(std::move(copies)), a.spans), kernels);
  std::vector<Interval> busy = kernels;
  busy.insert(busy.end(), a.copies.begin(), a.copies.end());
  a.idle = subtract(a.spans, mergeIntervals(std::move(busy)));
  return a;
}

// The rank's host work and its stretches without a CUDA call in the median step (the step is a median too: one
// slow step, a collection or a checkpoint, is no rank's steady work); nothing where its calls are not recorded.
// The stretches themselves, of every step, go to a.away.
void measureHost(const TraceData& t, const std::vector<Interval>& steps, RankStep& r, RankActivity& a) {
  const std::vector<Interval> calls = cudaCalls(t, r.session);
  if (calls.empty()) return;
  const std::vector<Interval> waits = hostWaitCalls(t, r.session);
  std::vector<int64_t> own, away;
  for (const Interval& s : steps) {
    own.push_back(s.end - s.start - overlapLength(waits, s.start, s.end));
    const std::vector<Interval> stretches =
        awayStretches(calls, s.start, s.end, std::min(kHostBusyGapNs, r.step_ns / 10));
    away.push_back(totalLength(stretches));
    a.away.insert(a.away.end(), stretches.begin(), stretches.end());
  }
  r.host_ns = summarize(own).median;
  r.away_ns = summarize(away).median;
}

// Kernels of the device launched inside the spans (disjoint), counted by their launch calls, which the spans (the
// host's steps) hold: a lagging GPU's kernels would start in the next span.
int64_t launchesIn(const TraceData& t, int32_t device, const std::vector<Interval>& spans) {
  int64_t count = 0;
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    if (t.kernels.device[k] != device || t.kernels.launch_call[k] == kNone) continue;
    const int64_t launched = t.api_calls.start_ns[static_cast<size_t>(t.kernels.launch_call[k])];
    count += overlapLength(spans, launched, launched + 1) > 0;
  }
  return count;
}

// The rank's step and its breakdown, from its own iterations.
RankActivity measureRank(const TraceData& t, const std::vector<KernelKind>& kinds, RankStep& r) {
  const Iterations it = findIterations(t, r.session);
  const SteadySteps steady = steadySteps(it);
  const StepWindows& timed = steady.timed;
  RankActivity a = activityOf(t, kinds, r, timed.spans);
  a.steps = timed.spans;
  r.steps = static_cast<int64_t>(timed.spans.size());
  if (r.steps == 0) return a;
  for (const Interval& span : timed.spans) a.step_compute.push_back(overlapLength(a.compute, span.start, span.end));
  r.step_ns = stepOf(it, timed.periods);
  const std::vector<Interval> overlapped = intersect(a.comm, a.compute);
  const int64_t n = r.steps;
  r.comm_overlapped_ns = totalLength(overlapped) / n;
  r.comm_alone_ns = (totalLength(a.comm) - totalLength(overlapped)) / n;
  r.compute_ns = (totalLength(a.compute) - totalLength(overlapped)) / n;
  r.copy_ns = totalLength(a.copies) / n;
  r.idle_ns = totalLength(a.idle) / n;
  r.between_ns = overlapLength(a.idle, mergeIntervals(timed.between)) / n;
  measureHost(t, timed.spans, r, a);
  r.kernels = launchesIn(t, r.device, a.spans) / n;
  return a;
}

// The matched collectives' [start, end) per rank on rank 0's clock: across hosts each rank's clock is shifted by
// the median difference of the collectives' ends, which finish together; what is left is the residual.
std::vector<std::vector<Interval>> alignCollectives(const std::vector<std::vector<size_t>>& pairs,
                                                    const std::vector<RankActivity>& acts, JobView& job) {
  if (pairs.empty()) {
    job.unmatched = "no collective ends at the same moment on every rank";
    return {};
  }
  job.collectives = static_cast<int64_t>(pairs.size());
  job.clock_offset_ns.assign(acts.size(), 0);
  for (size_t r = 1; r < acts.size() && !job.oneHost(); ++r) {
    std::vector<int64_t> diffs;
    for (const auto& p : pairs) diffs.push_back(acts[0].comm_kernels[p[0]].end - acts[r].comm_kernels[p[r]].end);
    job.clock_offset_ns[r] = summarize(diffs).median;
  }
  std::vector<std::vector<Interval>> matched(acts.size());
  std::vector<int64_t> spread;
  for (const auto& p : pairs) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t r = 0; r < acts.size(); ++r) {
      const int64_t off = job.clock_offset_ns[r];
      const Interval& k = acts[r].comm_kernels[p[r]];
      matched[r].push_back({k.start + off, k.end + off});
      lo = std::min(lo, matched[r].back().end), hi = std::max(hi, matched[r].back().end);
    }
    spread.push_back(hi - lo);
  }
  job.clock_residual_ns = summarize(spread).median;
  return matched;
}

// Within this time of each other a collective's kernels end on every rank of one host: it finishes everywhere at
// once (median spread 49 µs in a 2-rank DDP job on 2 x H100).
constexpr int64_t kSameEndNs = 500'000;

// Per collective, the index of its kernel on each rank: the k-th of each (NCCL issues a communicator's collectives
// in the same order on every rank).
std::vector<std::vector<size_t>> byPosition(const std::vector<RankActivity>& acts, size_t n) {
  std::vector<std::vector<size_t>> out(n, std::vector<size_t>(acts.size()));
  for (size_t k = 0; k < n; ++k) std::fill(out[k].begin(), out[k].end(), k);
  return out;
}

// On one host (one clock): each of rank 0's communication kernels with the kernel of the same name that ends with
// it on every other rank, walking the ranks' kernels in order. A collective one rank issued and another did not
// (on a communicator of its own) is left out rather than shifting every later match by one, as position would:
// an FSDP2 job on 2 x H200 had one such all-gather per rank, and its ranks matched by position looked a whole step
// apart.
std::vector<std::vector<size_t>> byEnds(const TraceData& t, const std::vector<RankActivity>& acts) {
  const RankActivity& first = acts[0];
  std::vector<std::vector<size_t>> partner(acts.size(), std::vector<size_t>(first.comm_kernels.size(), SIZE_MAX));
  for (size_t r = 1; r < acts.size(); ++r) {
    const RankActivity& a = acts[r];
    for (size_t i = 0, j = 0; i < first.comm_kernels.size() && j < a.comm_kernels.size();) {
      const int64_t e0 = first.comm_kernels[i].end, e1 = a.comm_kernels[j].end;
      if (std::llabs(e0 - e1) <= kSameEndNs && t.text(first.comm_names[i]) == t.text(a.comm_names[j])) {
        partner[r][i++] = j++;
      } else if (e0 < e1) {
        ++i;
      } else {
        ++j;
      }
    }
  }
  std::vector<std::vector<size_t>> out;
  for (size_t i = 0; i < first.comm_kernels.size(); ++i) {
    std::vector<size_t> one(acts.size(), i);
    for (size_t r = 1; r < acts.size(); ++r) one[r] = partner[r][i];
    if (std::find(one.begin(), one.end(), SIZE_MAX) == one.end()) out.push_back(std::move(one));
  }
  return out;
}

// Matches the ranks' collectives (on one host by their ends, else by order) and sets the clocks' offsets and
// residual; returns the matched collectives' [start, end) per rank, or nothing when they cannot be matched.
std::vector<std::vector<Interval>> matchCollectives(const TraceData& t, const std::vector<RankActivity>& acts,
                                                    JobView& job) {
  size_t n = acts[0].comm_kernels.size();
  for (const RankActivity& a : acts) n = std::min(n, a.comm_kernels.size());
  if (n == 0) {
    job.unmatched = "no communication kernels on at least one rank";
    return {};
  }
  if (job.oneHost()) return alignCollectives(byEnds(t, acts), acts, job);
  size_t mismatched = 0;
  for (size_t k = 0; k < n; ++k) {
    for (const RankActivity& a : acts) mismatched += t.text(a.comm_names[k]) != t.text(acts[0].comm_names[k]);
  }
  if (static_cast<double>(mismatched) > kMismatchedNames * static_cast<double>(n * acts.size())) {
    job.unmatched = "the ranks' communication kernels differ in order or kind (" + std::to_string(mismatched) + " of " +
                    std::to_string(n * acts.size()) + " do not match by position)";
    return {};
  }
  return alignCollectives(byPosition(acts, n), acts, job);
}

int64_t medianOfOthers(const std::vector<RankStep>& ranks, size_t except, int64_t (*of)(const RankStep&)) {
  std::vector<int64_t> values;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (r != except) values.push_back(of(ranks[r]));
  }
  return summarize(values).median;
}

// Per phase, how much of the intervals falls in the process's ranges of that phase. With the steps given, the
// host's time from the end of a step's last optimizer range to the step's end is kAfter: code the script runs
// after its optimizer step (logging, metrics, checkpoints), which names no phase of its own.
std::array<int64_t, 6> perPhase(const TraceData& t, int32_t session, const std::vector<Interval>& intervals,
                                const std::vector<Interval>& steps = {}) {
  std::array<std::vector<Interval>, 6> ranges;
  const std::vector<PhaseRange> named = phaseRanges(t, session);
  for (const PhaseRange& p : named) ranges[static_cast<size_t>(p.phase)].push_back({p.start, p.end});
  for (const Interval& step : steps) {
    int64_t optimizer_end = INT64_MIN;
    for (const PhaseRange& p : named) {
      if (p.phase == Phase::kOptimizer && p.end > step.start && p.end <= step.end) optimizer_end = p.end;
    }
    if (optimizer_end != INT64_MIN) ranges[static_cast<size_t>(Phase::kAfter)].push_back({optimizer_end, step.end});
  }
  std::array<int64_t, 6> out{};
  for (size_t p = 0; p < ranges.size(); ++p) out[p] = overlapLength(intervals, mergeIntervals(ranges[p]));
  return out;
}

// Why the straggler is late: the part of its step longest against the other ranks', and where it falls.
void explain(const TraceData& t, const std::vector<RankActivity>& acts, JobView& job, Straggler& s) {
  const size_t me = s.rank_index;
  const RankStep& r = job.ranks[me];
  const auto kernels = [](const RankStep& x) { return x.compute_ns + x.comm_overlapped_ns; };
  // The host's own work where every rank's CUDA calls are in the trace. Its GPU's idle time would do as well
  // but for the ranks that wait: their communication kernels spin through the wait and fill idle time, which
  // made an FSDP2 job on 2 x H200 (hosts busy for 98 ms of a 107 ms step on both ranks) show 72 ms more host
  // work on the rank that arrived last.
  const bool hosts = job.hostWorkMeasured();
  int64_t (*host)(const RankStep&) = hosts ? +[](const RankStep& x) { return x.host_ns; }
                                           : +[](const RankStep& x) { return x.idle_ns - x.between_ns; };
  const auto input = [](const RankStep& x) { return x.between_ns; };
  const auto away = [](const RankStep& x) { return x.away_ns; };
  const auto launched = [](const RankStep& x) { return x.kernels; };
  // Host work the others do not do: its own code between CUDA calls (Python, I/O, loading data, a sleep), or more
  // kernels to launch. The same calls each a little slower are a slower or busier CPU, and that jitter is as
  // large: clean 2-rank DDP jobs on 2 x H100 had one rank's host work 1.1-6.4 ms (3-19 % of the step) above the
  // other's, with the same launches and no more time away from CUDA calls (0.04-0.1 ms); a rank that slept 20 ms
  // a step showed 21.2 ms more.
  int64_t own_code = INT64_MAX;
  if (hosts && 20 * launched(r) < 21 * medianOfOthers(job.ranks, me, launched)) {
    own_code = away(r) - medianOfOthers(job.ranks, me, away);
  }
  const int64_t host_delta = host(r) - medianOfOthers(job.ranks, me, host);
  if (own_code != INT64_MAX) s.spread_ns = std::max<int64_t>(0, host_delta - std::max<int64_t>(0, own_code));
  const std::array<std::pair<const char*, int64_t>, 3> deltas{{
      {"its kernels", kernels(r) - medianOfOthers(job.ranks, me, kernels)},
      {"its host work", std::min(own_code, host_delta)},
      {"its input pipeline", std::min(own_code, input(r) - medianOfOthers(job.ranks, me, input))},
  }};
  const auto* most = &deltas[0];
  for (const auto& d : deltas) most = d.second > most->second ? &d : most;
  if (most->second <= 0) return;
  s.cause = most->first, s.cause_ns = most->second;
  if (most == &deltas[2]) return;  // between steps: no phase
  // The phase where its extra time falls: compute for kernels; for host work, its own code's stretches where
  // they are what it does more (on the host's clock, as the phases' ranges are), else its GPU's idle time. The
  // GPU's idle time falls where the host's lost lead shows, not where its work is: a rank that computed metrics
  // in NumPy after each optimizer step left its GPU idle in the next forward (2 x H200, 2026-11-29).
  const bool own = most == &deltas[1] && own_code != INT64_MAX;
  s.own_code = own;
  const auto measured = [&](size_t i) {
    return most == &deltas[0] ? acts[i].compute : own ? acts[i].away : acts[i].idle;
  };
  std::vector<std::array<int64_t, 6>> phases;  // per rank, once
  for (size_t i = 0; i < acts.size(); ++i) {
    phases.push_back(perPhase(t, job.ranks[i].session, measured(i), own ? acts[i].steps : std::vector<Interval>{}));
  }
  const std::array<int64_t, 6>& mine = phases[me];
  int64_t best = 0;
  for (size_t p = 1; p < mine.size(); ++p) {
    std::vector<int64_t> others;
    for (size_t o = 0; o < acts.size(); ++o) {
      if (o != me) others.push_back(phases[o][p]);
    }
    const int64_t extra = mine[p] - summarize(others).median;
    if (extra > best) best = extra, s.phase = static_cast<Phase>(p);
  }
}

// The rank that arrives last at the collectives of the steady steps, and by how much.
void findStraggler(const TraceData& t, const std::vector<RankActivity>& acts,
                   const std::vector<std::vector<Interval>>& matched, JobView& job) {
  const size_t ranks = job.ranks.size();
  if (matched.empty() || acts[0].spans.empty() || job.ranks[0].steps == 0) return;
  const int64_t from = acts[0].spans.front().start, to = acts[0].spans.back().end;
  std::vector<int64_t> last(ranks, 0), late(ranks, 0), wait(ranks, 0), waited(ranks, 0);
  int64_t counted = 0;
  for (size_t k = 0; k < matched[0].size(); ++k) {
    if (matched[0][k].start < from || matched[0][k].start >= to) continue;
    ++counted;
    size_t latest = 0;
    for (size_t r = 1; r < ranks; ++r) latest = matched[r][k].start > matched[latest][k].start ? r : latest;
    int64_t next = INT64_MIN;
    for (size_t r = 0; r < ranks; ++r) {
      if (r == latest) continue;
      next = std::max(next, matched[r][k].start);
      wait[latest] += matched[latest][k].start - matched[r][k].start;
      waited[r] += std::min(matched[latest][k].start - matched[r][k].start, matched[r][k].end - matched[r][k].start);
    }
    ++last[latest];
    late[latest] += matched[latest][k].start - next;
  }
  if (counted == 0) return;
  const int64_t steps = job.ranks[0].steps;
  for (size_t r = 0; r < ranks; ++r) {
    job.ranks[r].last_share = static_cast<double>(last[r]) / static_cast<double>(counted);
    job.ranks[r].late_ns = late[r] / steps;
    job.ranks[r].wait_ns = waited[r] / steps;
  }
  const size_t worst = static_cast<size_t>(std::max_element(late.begin(), late.end()) - late.begin());
  if (late[worst] <= 0) return;
  Straggler s;
  s.rank_index = worst;
  s.last_share = job.ranks[worst].last_share;
  s.late_ns = job.ranks[worst].late_ns;
  s.wait_ns = wait[worst] / static_cast<int64_t>(ranks - 1) / steps;
  explain(t, acts, job, s);
  job.straggler = s;
}

// Per step (the k-th timed step of each rank), how far the busiest rank's compute exceeds the ranks' mean, and
// which rank was the busiest most often.
void findImbalance(const std::vector<RankActivity>& acts, JobView& job) {
  size_t steps = SIZE_MAX;
  for (const RankActivity& a : acts) steps = std::min(steps, a.step_compute.size());
  if (steps == 0 || steps == SIZE_MAX) return;
  std::vector<int64_t> busiest(acts.size(), 0);
  int64_t over = 0;
  for (size_t k = 0; k < steps; ++k) {
    size_t top = 0;
    int64_t sum = 0;
    for (size_t r = 0; r < acts.size(); ++r) {
      sum += acts[r].step_compute[k];
      top = acts[r].step_compute[k] > acts[top].step_compute[k] ? r : top;
    }
    over += acts[top].step_compute[k] - sum / static_cast<int64_t>(acts.size());
    ++busiest[top];
  }
  job.imbalance_ns = over / static_cast<int64_t>(steps);
  job.busiest = static_cast<size_t>(std::max_element(busiest.begin(), busiest.end()) - busiest.begin());
  job.busiest_share = static_cast<double>(busiest[job.busiest]) / static_cast<double>(steps);
}

}  // namespace

JobView analyzeJob(const TraceData& trace, const std::vector<KernelKind>& kinds, const MemoryAnalysis& memory) {
  JobView job;
  std::set<std::string> hosts;
  const std::vector<int32_t> sessions = rankSessions(trace, kinds);
  if (sessions.size() < 2) return job;
  for (size_t i = 0; i < sessions.size(); ++i) {
    const schema::SessionRow& row = trace.sessions[sessions[i]];
    RankStep r;
    r.session = sessions[i];
    r.rank = row.rank.value_or(static_cast<int64_t>(i));
    r.device = busiestDevice(trace, r.session);
    job.ranks.push_back(r);
    if (!row.hostname.empty()) hosts.insert(row.hostname);
  }
  // A host is named for every rank or the hosts are unknown.
  const bool named =
      std::all_of(sessions.begin(), sessions.end(), [&](int32_t s) { return !trace.sessions[s].hostname.empty(); });
  job.hosts = named ? static_cast<int64_t>(hosts.size()) : 0;
  std::sort(job.ranks.begin(), job.ranks.end(), [](const RankStep& a, const RankStep& b) { return a.rank < b.rank; });
  std::vector<RankActivity> acts;
  for (RankStep& r : job.ranks) {
    acts.push_back(measureRank(trace, kinds, r));
    if (static_cast<size_t>(r.device) < memory.devices.size()) r.peak_bytes = memory.devices[r.device].peak_bytes;
  }
  for (size_t r = 0; r < job.ranks.size(); ++r) {
    if (job.ranks[r].step_ns > job.ranks[job.slowest].step_ns) job.slowest = r;
  }
  job.step_ns = job.ranks[job.slowest].step_ns;
  const std::vector<std::vector<Interval>> matched = matchCollectives(trace, acts, job);
  findStraggler(trace, acts, matched, job);
  findImbalance(acts, job);
  return job;
}

int32_t sessionOfRank(const TraceData& trace, int64_t rank) {
  for (size_t s = 0; s < trace.sessions.size(); ++s) {
    if (trace.sessions[s].rank == rank) return static_cast<int32_t>(s);
  }
  return kNone;
}

std::string ranksText(const TraceData& trace) {
  std::set<int64_t> ranks;
  for (const schema::SessionRow& s : trace.sessions) {
    if (s.rank) ranks.insert(*s.rank);
  }
  std::string text;
  for (int64_t r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text.empty() ? "none" : text;
}

bool JobView::hostWorkMeasured() const {
  return std::all_of(ranks.begin(), ranks.end(), [](const RankStep& r) { return r.host_ns > 0; });
}

std::string hostsText(const JobView& job) {
  if (job.hosts == 0) return "on hosts the trace does not name";
  return job.hosts == 1 ? "on one host" : "on " + std::to_string(job.hosts) + " hosts";
}

}  // namespace gpuscope::analysis
