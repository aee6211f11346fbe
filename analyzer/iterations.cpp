#include "analyzer/iterations.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "analyzer/kernel_names.h"
#include "analyzer/paused_steps.h"
#include "analyzer/phases.h"
#include "analyzer/stats.h"
#include "analyzer/units.h"

namespace gpuscope::analysis {

namespace {

// Chunks whose sizes vary by less than this (coefficient of variation) repeat regularly enough to be
// iterations.
constexpr double kRegularity = 0.1;
// Found without annotations, fewer repeats than this are not evidence of a loop.
constexpr size_t kMinIterations = 3;
// Fewer stretches than this, found from a kernel pattern, may be an outer loop's (epochs of steps); a name that
// splits the run this many times more often, nearly as evenly, marks the inner loop.
constexpr size_t kFewIterations = 6;
constexpr size_t kFinerLoop = 4;
// An iteration is warm-up when it took this many times the median iteration.
constexpr double kWarmupFactor = 1.5;

// When each kernel was launched (its launch call's start), or its own start when no call was recorded.
std::vector<int64_t> launchTimes(const TraceData& t) {
  std::vector<int64_t> times(t.kernels.size());
  for (size_t k = 0; k < times.size(); ++k) {
    const int32_t call = t.kernels.launch_call[k];
    times[k] = call == kNone ? t.kernels.start_ns[k] : t.api_calls.start_ns[call];
  }
  return times;
}

double variation(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  double mean = 0, var = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  for (double v : values) var += (v - mean) * (v - mean);
  return mean > 0 ? std::sqrt(var / static_cast<double>(values.size())) / mean : 1e9;
}

// The variation of the values less those farthest from their median, three or a fifth of them, whichever is
// more, where eight or more are left: a few steps of a loop can launch other kernels than the rest (`gpuscope
// apply` runs three calls of a compiled model as the script wrote them, to time them) and the loop is still a
// loop.
double variationOfMost(std::vector<double> values) {
  if (values.size() < 11) return variation(values);
  std::vector<double> sorted = values;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const double median = sorted[sorted.size() / 2];
  std::sort(values.begin(), values.end(),
            [&](double a, double b) { return std::abs(a - median) < std::abs(b - median); });
  values.resize(values.size() - std::max<size_t>(3, values.size() / 5));
  return variation(values);
}

// "step 12" and "ProfilerStep#12" name every instance of one range differently; digits are not the name.
std::string withoutDigits(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      out += c;
    } else if (out.empty() || out.back() != '#') {
      out += '#';
    }
  }
  return out;
}

// Fills the kernel figures of iterations (sorted, disjoint host intervals) from the kernels launched in them,
// less those a compiler launched for itself (annotatedCompiles).
void assignKernels(const TraceData& t, const std::vector<int64_t>& launch, int32_t session, Iterations& it) {
  for (Iteration& i : it.list) i.gpu_start_ns = INT64_MAX, i.gpu_end_ns = INT64_MIN;
  const std::vector<Interval> compiles = annotatedCompiles(t, session);
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    if (t.kernels.session[k] != session || insideAny(compiles, launch[k])) continue;
    auto pos = std::upper_bound(it.list.begin(), it.list.end(), launch[k],
                                [](int64_t time, const Iteration& i) { return time < i.start_ns; });
    if (pos == it.list.begin()) continue;
    Iteration& i = *std::prev(pos);
    if (launch[k] >= i.end_ns) continue;
    ++i.kernels;
    i.kernel_time_ns += t.kernels.end_ns[k] - t.kernels.start_ns[k];
    i.gpu_start_ns = std::min(i.gpu_start_ns, t.kernels.start_ns[k]);
    i.gpu_end_ns = std::max(i.gpu_end_ns, t.kernels.end_ns[k]);
  }
  for (Iteration& i : it.list) {
    if (i.kernels == 0) i.gpu_start_ns = i.gpu_end_ns = i.start_ns;
  }
}

// Kernel launches inside each instance of a repeating range.
std::vector<double> launchesPerRange(const std::vector<int64_t>& sorted_launch, const std::vector<Iteration>& ranges) {
  std::vector<double> counts;
  for (const Iteration& r : ranges) {
    counts.push_back(static_cast<double>(std::upper_bound(sorted_launch.begin(), sorted_launch.end(), r.end_ns) -
                                         std::lower_bound(sorted_launch.begin(), sorted_launch.end(), r.start_ns)));
  }
  return counts;
}

using RangeKey = std::tuple<int32_t, int32_t, std::string, int64_t>;  // session, domain, name, thread
// Each process's kernel launch times, sorted.
using LaunchesBySession = std::map<int32_t, std::vector<int64_t>>;

// The PyTorch bridge's marks in one process: where it removed its module hooks, and where `apply --record`'s
// timing check began running the model as written and where it ended; -1 where absent.
struct BridgeMarks {
  int64_t removed = -1, written = -1, checked = -1;
  Interval paused;  // the bridge's steps timed with the recording paused (PausedSteps), empty where none
  // The check's calls as written, empty (start == end) where it ran none.
  Interval asWritten() const { return written >= 0 && checked > written ? Interval{written, checked} : Interval{}; }
};

// The marks of every process (index into trace.sessions), in one pass over the NVTX rows.
std::vector<BridgeMarks> bridgeMarks(const TraceData& t) {
  std::vector<BridgeMarks> marks(t.sessions.size());
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    if (t.nvtx.kind[r] != schema::NvtxKind::kMark || static_cast<size_t>(t.nvtx.session[r]) >= marks.size()) continue;
    BridgeMarks& m = marks[static_cast<size_t>(t.nvtx.session[r])];
    const std::string& name = t.text(t.nvtx.name[r]);
    if (name == kHooksRemovedMark && m.removed < 0) m.removed = t.nvtx.start_ns[r];
    if (name == kApplyCheckDoneMark && m.checked < 0) m.checked = t.nvtx.start_ns[r];
    if (name == kApplyAsWrittenMark && m.written < 0) m.written = t.nvtx.start_ns[r];
  }
  const std::vector<std::optional<PausedSteps>> paused = pausedStepsOfEach(t);
  for (size_t s = 0; s < marks.size(); ++s) {
    if (paused[s]) marks[s].paused = paused[s]->paused;
  }
  return marks;
}

// One process's marks; none for a process the trace does not list.
BridgeMarks marksOf(const std::vector<BridgeMarks>& marks, int32_t session) {
  return session >= 0 && static_cast<size_t>(session) < marks.size() ? marks[static_cast<size_t>(session)]
                                                                     : BridgeMarks{};
}

// Per process, the ends of the PyTorch bridge's optimizer.step ranges, in order.
std::map<int32_t, std::vector<int64_t>> optimizerStepEnds(const TraceData& t) {
  std::map<int32_t, std::vector<int64_t>> ends;
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    const std::string& name = t.text(t.nvtx.name[r]);
    if (t.nvtx.kind[r] == schema::NvtxKind::kRange && name.starts_with("optimizer.step (")) {
      ends[t.nvtx.session[r]].push_back(t.nvtx.end_ns[r]);
    }
  }
  for (auto& [session, times] : ends) std::sort(times.begin(), times.end());
  return ends;
}

// A root module's forwards that open training steps, and the runs of forwards between them that no optimizer step
// follows (an evaluation each epoch, under no_grad). Each forward goes with the optimizer step it precedes; the
// micro-batches of a step are the median count per optimizer step (gradient accumulation: several), and where an
// optimizer step has more forwards before it, the earlier ones are an evaluation, as are the forwards after the last
// optimizer step. PyTorch's transfer-learning tutorial, which evaluates 39 batches after each epoch of 61, had its
// steps taken from an 8-byte copy once an epoch, 1.4 s long, where it trains at 13.7 ms a step
// (bench/corpus/tv_transfer_learning_tutorial, H200, 2026-12-01). With fewer than two optimizer steps every forward
// opens a step.
struct TrainingForwards {
  std::vector<int64_t> openings;
  std::vector<Interval> evaluations;
};

TrainingForwards trainingForwards(const std::vector<Interval>& forwards, const std::vector<int64_t>& optimizer_ends) {
  TrainingForwards out;
  if (optimizer_ends.size() < 2) {
    for (const Interval& f : forwards) out.openings.push_back(f.start);
    return out;
  }
  std::vector<size_t> step(forwards.size());  // the optimizer step each forward precedes (size(): none)
  std::vector<int64_t> counts(optimizer_ends.size() + 1, 0);
  for (size_t i = 0; i < forwards.size(); ++i) {
    step[i] = static_cast<size_t>(std::lower_bound(optimizer_ends.begin(), optimizer_ends.end(), forwards[i].start) -
                                  optimizer_ends.begin());
    ++counts[step[i]];
  }
  std::vector<int64_t> per_step;
  for (size_t k = 0; k < optimizer_ends.size(); ++k) {
    if (counts[k] > 0) per_step.push_back(counts[k]);
  }
  const int64_t micro = std::max<int64_t>(1, summarize(per_step).median);
  std::vector<int64_t> left = counts;     // forwards of each optimizer step not yet passed
  size_t opened = optimizer_ends.size();  // the optimizer step whose forwards opened the last step
  bool evaluating = false;
  for (size_t i = 0; i < forwards.size(); ++i) {
    const size_t k = step[i];
    const bool training = k < optimizer_ends.size() && left[k]-- <= micro;
    if (training && k != opened) {
      out.openings.push_back(forwards[i].start);
      opened = k;
    } else if (!training && evaluating) {
      out.evaluations.back().end = std::max(out.evaluations.back().end, forwards[i].end);
    } else if (!training) {
      out.evaluations.push_back(forwards[i]);
    }
    evaluating = !training;
  }
  return out;
}

// An evaluation's own batches are its: the DataLoader call just before its first forward (a loader without
// persistent workers starts them there) and the one just after its last (it stops them), within the step before.
Interval withOwnBatches(Interval evaluation, const std::vector<Interval>& loader, int64_t step_start, int64_t next) {
  auto after = std::lower_bound(loader.begin(), loader.end(), evaluation.end,
                                [](const Interval& r, int64_t t) { return r.start < t; });
  if (after != loader.end() && after->end <= next) evaluation.end = after->end;
  auto before = std::lower_bound(loader.begin(), loader.end(), evaluation.start,
                                 [](const Interval& r, int64_t t) { return r.start < t; });
  if (before != loader.begin() && std::prev(before)->end <= evaluation.start &&
      std::prev(before)->start >= step_start) {
    evaluation.start = std::prev(before)->start;
  }
  return evaluation;
}

// A step with an evaluation after it ends where the evaluation begins; the evaluation, to its last forward's end
// (each with its own batches), is in no step and not between steps (Iteration::evaluation_end_ns).
void endBeforeEvaluations(const std::vector<Interval>& evaluations, const std::vector<Interval>& loader,
                          std::vector<Iteration>& steps) {
  auto e = evaluations.begin();
  for (size_t i = 0; i < steps.size(); ++i) {
    Iteration& step = steps[i];
    while (e != evaluations.end() && e->start < step.start_ns) ++e;
    const int64_t end = step.end_ns;
    const int64_t next = i + 1 < steps.size() ? steps[i + 1].start_ns : end;
    for (; e != evaluations.end() && e->start < end; ++e) {
      const Interval own = withOwnBatches(*e, loader, step.start_ns, next);
      step.end_ns = std::min(step.end_ns, own.start);
      step.evaluation_end_ns = std::max(step.evaluation_end_ns, own.end);
    }
  }
}

// How many of these sorted times fall in [start, end).
int32_t countWithin(const std::vector<int64_t>& sorted, int64_t start, int64_t end) {
  return static_cast<int32_t>(std::lower_bound(sorted.begin(), sorted.end(), end) -
                              std::lower_bound(sorted.begin(), sorted.end(), start));
}

// A forward with no backward after it is no micro-batch: an evaluation under no_grad each epoch made a full-batch
// GCN's steps two forwards, called gradient accumulation, and kept CUDA graphs out of its plan
// (pyg_gcn_arxiv_fullbatch, H200, 2026-11-30). The root's backward ranges are in the annotated steps only (the
// bridge's hooks go after them): where those steps have them, each step's micro-batches are their median count.
void countMicroBatches(const std::vector<int64_t>& backwards, std::vector<Iteration>& steps) {
  std::vector<int64_t> counts;
  for (const Iteration& step : steps) {
    if (const int32_t n = countWithin(backwards, step.start_ns, step.end_ns); n > 0) counts.push_back(n);
  }
  if (counts.empty()) return;  // inference, or no annotated step: the forwards stand
  std::sort(counts.begin(), counts.end());
  const auto micro = static_cast<int32_t>(counts[counts.size() / 2]);
  for (Iteration& step : steps) step.forwards = std::min(step.forwards, micro);
}

// PyTorch recorded with --torch: a step runs from one forward of a root module (a module range whose name
// has no '.') to the next, its backward and optimizer step in between, though no one range spans it. The
// last runs to the end of the last range of the default domain that starts in it on its thread: libraries'
// ranges (NCCL's communicator teardown, CUB's) run past the loop's end, to the program's exit.
void addModuleSteps(const TraceData& t, const LaunchesBySession& launches,
                    std::map<RangeKey, std::vector<Iteration>>& groups) {
  std::map<RangeKey, std::vector<Interval>> roots;  // each root module's forward ranges, in start order
  std::map<RangeKey, std::string> root_modules;     // the module each of those ranges names
  std::map<RangeKey, int32_t> launched;             // kernel launches inside them
  // Start times of each root module's backward ranges, by process and module (on autograd's threads, any of them);
  // sorted, as the ranges are.
  std::map<std::pair<int32_t, std::string>, std::vector<int64_t>> backwards;
  std::map<std::pair<int32_t, int64_t>, std::vector<Interval>> loader;  // DataLoader calls by process and thread
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    const std::string& name = t.text(t.nvtx.name[r]);
    if (t.nvtx.kind[r] == schema::NvtxKind::kRange && name == kDataLoaderRange) {
      loader[{t.nvtx.session[r], t.nvtx.thread_id[r]}].push_back({t.nvtx.start_ns[r], t.nvtx.end_ns[r]});
    }
    Phase pass;
    if (t.nvtx.kind[r] != schema::NvtxKind::kRange || !isModuleRange(name)) continue;
    const std::string module = moduleOfRange(name, pass);
    if (module.find('.') != std::string::npos) continue;
    if (pass == Phase::kBackward) backwards[{t.nvtx.session[r], module}].push_back(t.nvtx.start_ns[r]);
    if (pass != Phase::kForward) continue;
    const RangeKey key{t.nvtx.session[r], kNone, name + " to the next", t.nvtx.thread_id[r]};
    roots[key].push_back({t.nvtx.start_ns[r], t.nvtx.end_ns[r]});
    root_modules[key] = module;
    if (const auto own = launches.find(t.nvtx.session[r]); own != launches.end()) {
      launched[key] += countWithin(own->second, t.nvtx.start_ns[r], t.nvtx.end_ns[r]);
    }
  }
  const std::map<int32_t, std::vector<int64_t>> optimizer_ends = optimizerStepEnds(t);
  static const std::vector<int64_t> kNoOptimizerSteps;
  for (auto& [key, forwards] : roots) {
    // A module that never launches a kernel is no model: torchvision's transforms are modules too, called
    // per sample by a DataLoader on the training thread.
    if (launched[key] == 0) continue;
    const auto ends = optimizer_ends.find(std::get<0>(key));
    const TrainingForwards training =
        trainingForwards(forwards, ends == optimizer_ends.end() ? kNoOptimizerSteps : ends->second);
    const std::vector<int64_t>& starts = training.openings;
    if (starts.size() < 2) continue;
    std::vector<Iteration>& steps = groups[key];
    for (size_t i = 0; i + 1 < starts.size(); ++i) steps.push_back({starts[i], starts[i + 1]});
    int64_t end = starts.back();
    for (auto r = std::lower_bound(t.nvtx.start_ns.begin(), t.nvtx.start_ns.end(), starts.back());
         r != t.nvtx.start_ns.end(); ++r) {
      const size_t row = static_cast<size_t>(r - t.nvtx.start_ns.begin());
      if (t.nvtx.session[row] == std::get<0>(key) && t.nvtx.thread_id[row] == std::get<3>(key) &&
          t.nvtx.domain[row] == 0) {
        end = std::max(end, t.nvtx.end_ns[row]);
      }
    }
    steps.push_back({starts.back(), end});
    endBeforeEvaluations(training.evaluations, loader[{std::get<0>(key), std::get<3>(key)}], steps);
    std::vector<int64_t> forward_starts;
    for (const Interval& f : forwards) forward_starts.push_back(f.start);
    for (Iteration& step : steps) step.forwards = countWithin(forward_starts, step.start_ns, step.end_ns);
    countMicroBatches(backwards[{std::get<0>(key), root_modules[key]}], steps);
  }
}

// Of these groups of ranges, the repeating one with regular kernel counts after its first instances that
// covers the most of its own process's kernel launches (ties: the one with more instances; between processes,
// within 2 %: the first). Irregular ranges (compilation, data loading) are not iterations, nor is a range that holds
// under a third of its process's kernels (an annotation of a part). The instances `apply --record`'s check ran as
// the script wrote them launch other kernels than those around them and are left out of the regularity.
Iterations bestGroup(std::map<RangeKey, std::vector<Iteration>>& groups, const LaunchesBySession& launches,
                     const std::vector<BridgeMarks>& marks) {
  Iterations best;
  double best_covered = 0;
  static const std::vector<int64_t> kNoLaunches;
  for (auto& [key, ranges] : groups) {
    if (ranges.size() < 2) continue;
    const auto own = launches.find(std::get<0>(key));
    const std::vector<int64_t>& sorted_launch = own == launches.end() ? kNoLaunches : own->second;
    bool disjoint = true;
    for (size_t i = 1; i < ranges.size(); ++i) disjoint = disjoint && ranges[i].start_ns >= ranges[i - 1].end_ns;
    std::vector<double> counts = launchesPerRange(sorted_launch, ranges);
    double covered = 0;
    for (double c : counts) covered += c;
    const BridgeMarks& bridge = marksOf(marks, std::get<0>(key));
    for (size_t i = ranges.size(); i-- > 0;) {
      if (bridge.asWritten().holds(ranges[i].start_ns) || bridge.paused.holds(ranges[i].start_ns)) {
        counts.erase(counts.begin() + i);
      }
    }
    // The first instances may be warm-up (a compiler's first calls, autotuning): judge regularity on the
    // rest, keeping at least the last two thirds.
    counts.erase(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(std::max<size_t>(1, counts.size() / 3)));
    // The ranks of a job each have such a group, covering about as many of their launches: the first process's
    // (rank 0, as the launcher starts them) stays unless another's covers clearly more.
    const double tie = std::get<0>(key) != best.session ? 0.02 * best_covered : 0.0;
    const bool better =
        covered > best_covered + tie || (covered >= best_covered - tie && ranges.size() > best.list.size());
    const bool whole = covered * 3 >= static_cast<double>(sorted_launch.size());
    if (disjoint && covered > 0 && whole && variationOfMost(counts) <= kRegularity && better) {
      best = {IterationSource::kNvtx, std::get<2>(key), std::get<0>(key), std::move(ranges), {}};
      best_covered = covered;
    }
  }
  return best;
}

bool inSession(int32_t session, int32_t only) { return only == kNone || session == only; }

// The program's own NVTX ranges first; the steps the PyTorch bridge's module ranges imply only without them.
// Only the ranges and launches of process `only`, unless it is kNone.
Iterations fromNvtx(const TraceData& t, const std::vector<int64_t>& launch, int32_t only) {
  std::map<RangeKey, std::vector<Iteration>> groups;
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    const std::string& name = t.text(t.nvtx.name[r]);
    if (t.nvtx.kind[r] != schema::NvtxKind::kRange || isBridgeRange(name) ||
        isLibraryRange(name, t.text(t.nvtx.domain[r]))) {
      continue;
    }
    if (!inSession(t.nvtx.session[r], only)) continue;
    groups[{t.nvtx.session[r], t.nvtx.domain[r], withoutDigits(name), t.nvtx.thread_id[r]}].push_back(
        {t.nvtx.start_ns[r], t.nvtx.end_ns[r]});
  }
  LaunchesBySession launches;
  for (size_t k = 0; k < launch.size(); ++k) {
    if (inSession(t.kernels.session[k], only)) launches[t.kernels.session[k]].push_back(launch[k]);
  }
  for (auto& [session, times] : launches) std::sort(times.begin(), times.end());
  const std::vector<BridgeMarks> marks = bridgeMarks(t);
  Iterations own = bestGroup(groups, launches, marks);
  if (own.source == IterationSource::kNvtx) return own;
  std::map<RangeKey, std::vector<Iteration>> steps;
  addModuleSteps(t, launches, steps);
  std::erase_if(steps, [only](const auto& group) { return !inSession(std::get<0>(group.first), only); });
  return bestGroup(steps, launches, marks);
}

// Kernels of the busiest device (of process `only`, unless it is kNone), in start order.
std::vector<size_t> busiestDeviceKernels(const TraceData& t, int32_t only) {
  std::vector<int64_t> per_device(t.devices.size(), 0);
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    if (inSession(t.kernels.session[k], only)) ++per_device[t.kernels.device[k]];
  }
  const auto busiest = std::max_element(per_device.begin(), per_device.end()) - per_device.begin();
  std::vector<size_t> kernels;
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    if (t.kernels.device[k] == busiest && per_device[busiest] > 0) kernels.push_back(k);
  }
  return kernels;
}

// The kernels less those a compiler launched for itself inside its annotated compiles (XLA's autotuner timing
// candidates): a Flax classifier's 40 steps of 3.7 ms sat behind 45 s of them, and read as two steps of 3 s.
std::vector<size_t> withoutCompileWork(const TraceData& t, const std::vector<int64_t>& launch,
                                       std::vector<size_t> kernels) {
  std::map<int32_t, std::vector<Interval>> compiles;  // per process
  std::erase_if(kernels, [&](size_t k) {
    const int32_t session = t.kernels.session[k];
    auto it = compiles.find(session);
    if (it == compiles.end()) it = compiles.emplace(session, annotatedCompiles(t, session)).first;
    return insideAny(it->second, launch[k]);
  });
  return kernels;
}

// The stretches less a warm-up before the loop that ran part of the step (a kernel called a few times alone before
// the loop that runs it among others): those at the start that differ from the median stretch, at most a fifth.
std::vector<double> withoutLeadingWarmup(std::vector<double> gaps) {
  if (gaps.size() < 10) return gaps;
  std::vector<double> sorted = gaps;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const double median = sorted[sorted.size() / 2];
  size_t lead = 0;
  while (lead < gaps.size() / 5 && std::abs(gaps[lead] - median) > kRegularity * median) ++lead;
  gaps.erase(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(lead));
  return gaps;
}

// Iterations as the stretches between host moments (launches of a marker kernel, or syncs), kept when the
// kernels in them come in regular counts. boundaries are sorted host times.
// whole_graph: each boundary launches a graph recorded as a whole, one unit that holds many kernels.
Iterations fromBoundaries(const TraceData& t, const std::vector<int64_t>& launch, const std::vector<size_t>& kernels,
                          std::vector<int64_t> boundaries, IterationSource source, std::string marker,
                          bool whole_graph = false) {
  if (kernels.empty() || boundaries.size() < 2) return {};
  const int32_t session = t.kernels.session[kernels[0]];
  Iterations it{source, std::move(marker), session, {}, {}};
  boundaries.push_back(launch[kernels.back()] + 1);  // the last stretch runs to the last launch
  for (size_t b = 0; b + 1 < boundaries.size(); ++b) it.list.push_back({boundaries[b], boundaries[b + 1]});
  assignKernels(t, launch, session, it);
  std::erase_if(it.list, [](const Iteration& i) { return i.kernels == 0; });
  if (it.list.size() < kMinIterations) return {};
  // Before the first boundary the program was setting up: a stretch with under half the usual kernels.
  std::vector<int64_t> kernel_counts;
  for (const Iteration& i : it.list) kernel_counts.push_back(i.kernels);
  if (it.list.front().kernels * 2 < summarize(kernel_counts).median) it.list.erase(it.list.begin());
  // A warm-up that ran part of the step before the loop (withoutLeadingWarmup): no step of it.
  std::vector<double> all_counts;
  for (const Iteration& i : it.list) all_counts.push_back(static_cast<double>(i.kernels));
  const size_t warmup = all_counts.size() - withoutLeadingWarmup(all_counts).size();
  it.list.erase(it.list.begin(), it.list.begin() + static_cast<std::ptrdiff_t>(warmup));
  std::vector<double> counts;
  for (size_t i = 1; i < it.list.size(); ++i) counts.push_back(static_cast<double>(it.list[i].kernels));
  // The last stretch has no boundary of its own: it may be cut short by the end of recording, or run on
  // into whatever the program does after its loop (an evaluation, clean-up).
  if (counts.size() > 2) {
    const double before = counts[counts.size() - 2];
    if (std::abs(counts.back() - before) > kRegularity * before) {
      counts.pop_back();
      it.list.pop_back();
    }
  }
  // A run of one kernel repeated is not a loop of steps: an iteration holds more than one kernel. Where a copy
  // opens each stretch, the copy is the step's work too: a camera pipeline uploads each frame, runs one kernel
  // over it and reads it back (bench/corpus/cuda_pinned_staging_per_frame). Where the host synchronises after
  // each kernel, the host's work between is the step's too: a simulation's frame writes its inputs, runs one
  // kernel and reads the result (bench/corpus/cuda_managed_particles).
  const bool host_work_between = source == IterationSource::kCopyPattern || source == IterationSource::kHostSync;
  // Steps of a kernel or two vary most where a few of them also report (a stencil's two reductions every 100
  // steps: 3 kernels in 4 of 400 steps of one, bench/corpus/numba_host_arrays): those few are left out of the
  // judgement, and stay steps.
  if ((host_work_between ? variationOfMost(counts) : variation(counts)) > kRegularity) return {};
  if (!host_work_between && !whole_graph && summarize(kernel_counts).median < 2) return {};
  // Nor is a loop that holds under a third of the kernels the program's main one: a set-up loop (weights
  // filled layer by layer) before a loop with no kernel of its own to mark its steps.
  // (Of a graph recorded as a whole, the steps hold most of the GPU's time: fromGraphLaunches asked that.)
  int64_t held = 0;
  for (const Iteration& i : it.list) held += i.kernels;
  if (!whole_graph && held * 3 < static_cast<int64_t>(kernels.size())) return {};
  return it;
}

// A kernel that runs once per iteration: of the names seen at least three times and at most about once per
// three kernels (so a loop of two alternating kernels is not taken for two-kernel iterations; 10 % over, for a
// three-kernel step whose warm-up ran a shorter one: a CuPy frame of two copies and a kernel compiled anew,
// after five frames of the kernel alone, bench/corpus/cupy_kernel_source_per_step), those whose
// occurrences split the sequence evenly, the most evenly first (ties: the one seen more often, then the one
// seen first: the iteration's start; splits even within kEvenSplit are alike, and of those one whose stretches
// repeat one another comes first); the first whose stretches make a loop of steps. A set-up loop (arrays
// filled one by one before the main loop) splits its few kernels as evenly as any and holds too little of the
// run to be the loop: the next name is tried, up to kPatternTries of them (a run with no loop has many names).
constexpr size_t kPatternTries = 16;
// Splits of the kernel sequence whose stretch lengths vary less than this are alike in evenness.
constexpr double kEvenSplit = kRegularity / 2;
// A name's stretches repeat one another where this share of them launch one sequence of kernels.
constexpr double kSameStretches = 0.6;

// Whether most stretches between a name's positions in the sequence of kernel names (the first and last stretch
// left out) launch the same kernels in the same order.
bool stretchesRepeat(const std::vector<int32_t>& names, const std::vector<size_t>& where) {
  if (where.size() < 4) return false;
  std::unordered_map<uint64_t, size_t> seen;
  for (size_t i = 1; i + 2 < where.size(); ++i) {
    uint64_t h = 1469598103934665603ull;
    for (size_t p = where[i]; p < where[i + 1]; ++p) {
      h = (h ^ static_cast<uint64_t>(names[p])) * 1099511628211ull;
    }
    ++seen[h];
  }
  size_t most = 0;
  for (const auto& [hash, count] : seen) most = std::max(most, count);
  return static_cast<double>(most) >= kSameStretches * static_cast<double>(where.size() - 3);
}

Iterations fromKernelPattern(const TraceData& t, const std::vector<int64_t>& launch,
                             const std::vector<size_t>& kernels) {
  const size_t n = kernels.size();
  std::vector<int32_t> names(n);                               // the sequence's kernel names (ids)
  std::unordered_map<int32_t, std::vector<size_t>> positions;  // name id -> positions in the sequence
  for (size_t p = 0; p < n; ++p) {
    names[p] = t.configs[t.kernels.config[kernels[p]]].name.id;
    positions[names[p]].push_back(p);
  }
  struct Candidate {
    int32_t name;
    double variation;
    size_t count, first;
    bool repeats = false;  // most of its stretches launch the same kernels in the same order
  };
  std::vector<Candidate> candidates;
  for (const auto& [name, where] : positions) {
    if (where.size() < kMinIterations || 10 * where.size() * 3 > 11 * n) continue;
    // The first stretch may be a warm-up's, and is left out where two stretches or more are left to judge: one
    // stretch alone is even whatever its length (a name seen three times, once per call of a function run once
    // for warm-up and once timed, split a k-means's 63 iterations into two; bench/corpus/cupy_kmeans).
    std::vector<double> gaps;
    for (size_t i = where.size() > 3 ? 1 : 0; i + 1 < where.size(); ++i) {
      gaps.push_back(static_cast<double>(where[i + 1] - where[i]));
    }
    const double v = variation(withoutLeadingWarmup(gaps));
    if (v <= kRegularity) candidates.push_back({name, v, where.size(), where[0]});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.variation, b.count, a.first) < std::tie(b.variation, a.count, b.first);
  });
  if (candidates.size() > kPatternTries) candidates.resize(kPatternTries);
  // Of splits about as even, one into stretches that repeat one another comes first: a conjugate-gradient step
  // computes two dot products, and the reduction's kernel, twice a step, split it into halves as even as the
  // step's own (nine kernels each), but the halves alternate between two sequences.
  for (Candidate& c : candidates) c.repeats = stretchesRepeat(names, positions[c.name]);
  auto tier = [](const Candidate& c) { return c.variation <= kEvenSplit ? 0.0 : c.variation; };
  std::stable_sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
    return std::make_tuple(tier(a), !a.repeats) < std::make_tuple(tier(b), !b.repeats);
  });
  auto stretches = [&](const Candidate& c) {
    std::vector<int64_t> boundaries;
    for (size_t p : positions[c.name]) boundaries.push_back(launch[kernels[p]]);
    return fromBoundaries(t, launch, kernels, boundaries, IterationSource::kKernelPattern, t.text(c.name));
  };
  for (size_t i = 0; i < candidates.size(); ++i) {
    Iterations it = stretches(candidates[i]);
    if (it.source == IterationSource::kNotFound) continue;
    if (it.list.size() >= kFewIterations) return it;
    // A loop of few, perfectly even stretches can be an outer loop (epochs) around the loop the program times:
    // a kernel run once per epoch splits the run more evenly than the step's own first kernel, whose last
    // stretch in each epoch also holds the epoch's own kernels. Where another name splits the run nearly as
    // evenly into many more stretches, those are the steps.
    for (size_t j = i + 1; j < candidates.size(); ++j) {
      if (candidates[j].variation > kEvenSplit || candidates[j].count < kFinerLoop * candidates[i].count) continue;
      Iterations finer = stretches(candidates[j]);
      if (finer.source != IterationSource::kNotFound) return finer;
    }
    return it;
  }
  return {};
}

// A copy made once per iteration, where no kernel is: a loop that uploads a frame, filters it and reduces it
// launches two kernels a step, and no kernel once in three. The copies of one direction and size, each opening a
// stretch of regular kernel counts, open its iterations; of several such sizes, the one that finds the most.
Iterations fromCopyPattern(const TraceData& t, const std::vector<int64_t>& launch, const std::vector<size_t>& kernels) {
  if (kernels.empty()) return {};
  const int32_t session = t.kernels.session[kernels[0]], device = t.kernels.device[kernels[0]];
  std::map<std::pair<schema::CopyKind, int64_t>, std::vector<int64_t>> launches;  // (direction, bytes) -> times
  const std::vector<bool> compiling = callsInCompiles(t);
  const CopyTable& c = t.copies;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c.session[i] != session || c.device[i] != device) continue;
    const int32_t call = c.launch_call[i];
    if (call != kNone && compiling[static_cast<size_t>(call)]) continue;
    launches[{c.kind[i], c.bytes[i]}].push_back(call == kNone ? c.start_ns[i] : t.api_calls.start_ns[call]);
  }
  Iterations best;
  for (auto& [copy, times] : launches) {
    if (times.size() < kMinIterations) continue;
    std::sort(times.begin(), times.end());
    const std::string marker = std::string(directionOf(copy.first)) + " copy of " + formatBytes(copy.second);
    Iterations it = fromBoundaries(t, launch, kernels, times, IterationSource::kCopyPattern, marker);
    if (it.list.size() > best.list.size()) best = std::move(it);
  }
  return best;
}

// Steps replayed from CUDA graphs: where most of the busiest device's kernels come from graphs, each launch of the
// graph most of them come from opens a step. A kernel pattern misleads there: a graph's branches run side by side,
// so its kernels need not start in one order, and a set-up kernel seen three times looked more regular than any
// (a training step captured whole with torch.cuda.graph and replayed 520 times read as 2 steps).
// A graph recorded as a whole (`record --cuda-graph-trace graph`) is one unit a launch, whatever it holds: it
// counts by its share of the GPU's time instead (a jitted JAX step replayed as one graph a step, beside 7,607 small
// kernels outside it, held 56 % of the GPU's time in 103 units).
Iterations fromGraphLaunches(const TraceData& t, const std::vector<int64_t>& launch,
                             const std::vector<size_t>& kernels) {
  std::map<int64_t, size_t> per_graph;
  std::map<int64_t, int64_t> whole_ns;  // the GPU time of graphs recorded as a whole
  int64_t all_ns = 0;
  for (size_t k : kernels) {
    const int64_t ns = t.kernels.end_ns[k] - t.kernels.start_ns[k];
    all_ns += ns;
    if (t.kernels.graph_id[k] == kNone) continue;
    ++per_graph[t.kernels.graph_id[k]];
    if (isWholeGraphName(t.kernelName(k))) whole_ns[t.kernels.graph_id[k]] += ns;
  }
  int64_t graph = kNone;
  size_t most = 0;
  for (const auto& [id, count] : per_graph) {
    if (count > most) graph = id, most = count;
  }
  bool dominant = most > 0 && most * 2 >= kernels.size(), whole = false;
  for (const auto& [id, ns] : whole_ns) {
    if (ns * 2 >= all_ns) graph = id, dominant = whole = true;
  }
  if (!dominant) return {};
  std::vector<int64_t> boundaries;
  for (size_t k : kernels) {
    if (t.kernels.graph_id[k] == graph) boundaries.push_back(launch[k]);
  }
  std::sort(boundaries.begin(), boundaries.end());
  boundaries.erase(std::unique(boundaries.begin(), boundaries.end()), boundaries.end());
  return fromBoundaries(t, launch, kernels, std::move(boundaries), IterationSource::kGraphLaunch,
                        "CUDA graph " + std::to_string(graph), whole);
}

// The jitted function an XLA module range names: "XlaModule:#hlo_module=jit_train_step,program_id=7#" ->
// "jit_train_step"; "" for any other range.
std::string xlaModuleOf(std::string_view name) {
  constexpr std::string_view kPrefix = "XlaModule:#", kKey = "hlo_module=";
  if (!name.starts_with(kPrefix)) return "";
  const size_t at = name.find(kKey);
  if (at == std::string_view::npos) return "";
  const std::string_view rest = name.substr(at + kKey.size());
  return std::string(rest.substr(0, rest.find_first_of(",#")));
}

// JAX's steps: each execution of the jitted function whose executions launch the most of the kernels, as XLA
// annotates them (one program id per shape it was compiled for), outside XLA's compiles (its autotuner runs
// modules of its own). A kernel pattern misses them where the shapes change: each shape's executable names its
// kernels its own way (a Flax classifier padded to three lengths, H200, 2026-11-29).
Iterations fromXlaModules(const TraceData& t, const std::vector<int64_t>& launch, const std::vector<size_t>& kernels) {
  if (kernels.empty()) return {};
  const int32_t session = t.kernels.session[kernels[0]];
  const std::vector<Interval> compiles = annotatedCompiles(t, session);
  std::map<std::string, std::vector<Interval>> runs;  // jitted function -> its executions
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    if (t.nvtx.kind[r] != schema::NvtxKind::kRange || t.nvtx.session[r] != session) continue;
    std::string module = xlaModuleOf(t.text(t.nvtx.name[r]));
    if (!module.empty() && !insideAny(compiles, t.nvtx.start_ns[r]))
      runs[std::move(module)].push_back({t.nvtx.start_ns[r], t.nvtx.end_ns[r]});
  }
  std::vector<int64_t> launches;
  for (size_t k : kernels) launches.push_back(launch[k]);
  std::sort(launches.begin(), launches.end());
  const std::vector<Interval>* busiest = nullptr;
  std::string name;
  int64_t most = 0;
  for (auto& [module, ranges] : runs) {
    int64_t inside = 0;
    for (const Interval& r : ranges) inside += countWithin(launches, r.start, r.end);
    if (inside > most) most = inside, busiest = &ranges, name = module;
  }
  if (!busiest) return {};
  std::vector<int64_t> boundaries;
  for (const Interval& r : *busiest) boundaries.push_back(r.start);
  std::sort(boundaries.begin(), boundaries.end());
  return fromBoundaries(t, launch, kernels, std::move(boundaries), IterationSource::kXlaModule, name);
}

// The host synchronisations of the busiest device's process, as iteration ends.
Iterations fromHostSyncs(const TraceData& t, const std::vector<int64_t>& launch, const std::vector<size_t>& kernels) {
  if (kernels.empty()) return {};
  const int32_t session = t.kernels.session[kernels[0]];
  std::vector<int64_t> boundaries{t.startNs()};
  const std::vector<bool> compiling = callsInCompiles(t);
  for (size_t i = 0; i < t.api_calls.size(); ++i) {
    if (t.api_calls.session[i] == session && !compiling[i] &&
        t.text(t.api_calls.name[i]).find("ynchronize") != std::string::npos) {
      boundaries.push_back(t.api_calls.end_ns[i]);
    }
  }
  std::sort(boundaries.begin(), boundaries.end());
  return fromBoundaries(t, launch, kernels, boundaries, IterationSource::kHostSync, "synchronize");
}

// Where the PyTorch bridge removed its module hooks, the iterations after are hook-free. Under `apply --record`
// they count from the end of its timing check, where that comes later: the check's calls compile the model
// and run some as the script wrote it.
void markHookFree(const TraceData& t, Iterations& it) {
  const BridgeMarks marks = marksOf(bridgeMarks(t), it.session);
  it.as_written = marks.asWritten();
  it.paused = marks.paused;
  for (Iteration& i : it.list) {
    i.as_written = it.as_written.holds(i.start_ns);
    i.unrecorded = it.paused.holds(i.start_ns);
  }
  it.applied = marks.checked >= 0;
  it.hooks_removed_ns = marks.removed < 0 ? -1 : std::max(marks.removed, marks.checked);
  if (it.hooks_removed_ns < 0) return;
  for (Iteration& i : it.list) i.hook_free = i.start_ns >= it.hooks_removed_ns;
}

// The leading iterations of [first, end) much longer than those iterations' median, at most half of them.
void markLeadingOutliers(Iterations& it, size_t first, size_t end) {
  std::vector<int64_t> durations;
  for (size_t i = first; i < end; ++i) durations.push_back(it.list[i].durationNs());
  const int64_t median = summarize(durations).median;
  for (size_t i = first; i < first + (end - first) / 2; ++i) {
    if (static_cast<double>(it.list[i].durationNs()) <= kWarmupFactor * static_cast<double>(median)) break;
    it.list[i].warmup = true;
  }
}

// Warm-up is judged among the iterations recorded alike: where the bridge removed its hooks, the annotated
// ones (which hold the warm-up) against their own median, since the hooks slow every one of them, and the
// hook-free ones against theirs (under `apply --record` the hooks go at the model's first call, and its compile
// falls in the first hook-free iterations: 36 s of a 20 ms step). The steady duration is the hook-free
// iterations' where there are at least two: the program's own speed.
void markWarmup(Iterations& it) {
  const size_t annotated = static_cast<size_t>(
      std::find_if(it.list.begin(), it.list.end(), [](const Iteration& i) { return i.hook_free; }) - it.list.begin());
  markLeadingOutliers(it, 0, annotated);
  markLeadingOutliers(it, annotated, it.list.size());
  const bool timed_hook_free = it.list.size() - annotated >= 2;
  std::vector<int64_t> steady;
  for (const Iteration& i : it.list) {
    if (!i.warmup && !i.unrecorded && (i.hook_free || !timed_hook_free)) steady.push_back(i.durationNs());
  }
  it.steady_duration = summarize(steady);
}

// Iterations::repeating, over the steady iterations (not the check's calls as written): the sorted launch
// configurations of each one's kernels in its process, and whether half of them or more share one.
void markRepeating(const TraceData& t, Iterations& it) {
  const KernelTable& k = t.kernels;
  std::map<std::vector<int32_t>, int64_t> signatures;  // the sorted launch configurations of a step: how many steps
  int64_t steps = 0;
  for (const Iteration& i : it.list) {
    if (i.warmup || i.as_written || i.unrecorded) continue;
    std::vector<int32_t> configs;
    const auto first = std::lower_bound(k.start_ns.begin(), k.start_ns.end(), i.gpu_start_ns);
    for (auto j = static_cast<size_t>(first - k.start_ns.begin()); j < k.size() && k.start_ns[j] <= i.gpu_end_ns; ++j) {
      if (k.session[j] == it.session) configs.push_back(k.config[j]);
    }
    std::sort(configs.begin(), configs.end());
    ++signatures[configs];
    ++steps;
  }
  int64_t most = 0;
  for (const auto& [configs, count] : signatures) most = std::max(most, count);
  it.repeating = steps < 2 || 2 * most >= steps;
}

}  // namespace

int64_t Iterations::warmupCount() const {
  return std::count_if(list.begin(), list.end(), [](const Iteration& i) { return i.warmup; });
}

int32_t Iterations::steadyIterationAt(int64_t gpu_ns) const {
  auto it = std::upper_bound(list.begin(), list.end(), gpu_ns,
                             [](int64_t t, const Iteration& i) { return t < i.gpu_start_ns; });
  if (it == list.begin() || gpu_ns >= std::prev(it)->gpu_end_ns || std::prev(it)->warmup) return kNone;
  return static_cast<int32_t>(it - list.begin() - 1);
}

Iterations findIterations(const TraceData& trace, int32_t session) {
  if (trace.kernels.size() == 0) return {};
  const std::vector<int64_t> launch = launchTimes(trace);
  Iterations it = fromNvtx(trace, launch, session);
  if (it.source == IterationSource::kNvtx) {
    assignKernels(trace, launch, it.session, it);
  } else {
    // The busiest device's kernels (of `session`, where given), in start order, less a compiler's own: what the
    // searches below read.
    const std::vector<size_t> kernels = withoutCompileWork(trace, launch, busiestDeviceKernels(trace, session));
    it = fromGraphLaunches(trace, launch, kernels);
    if (it.source == IterationSource::kNotFound) it = fromKernelPattern(trace, launch, kernels);
    if (it.source == IterationSource::kNotFound) it = fromXlaModules(trace, launch, kernels);
    if (it.source == IterationSource::kNotFound) it = fromHostSyncs(trace, launch, kernels);
    if (it.source == IterationSource::kNotFound) it = fromCopyPattern(trace, launch, kernels);
  }
  if (it.source != IterationSource::kNotFound) {
    markHookFree(trace, it);
    markWarmup(it);
    markRepeating(trace, it);
  }
  return it;
}

namespace {

// The steady iterations marked in `take`.
StepWindows stepWindows(const std::vector<Iteration>& list, const std::vector<bool>& take) {
  StepWindows s;
  for (size_t i = 0; i < take.size(); ++i) {
    if (!take[i]) continue;
    const int64_t end = std::max(list[i].end_ns, list[i].gpu_end_ns);
    s.windows.push_back({list[i].start_ns, end});
    // Counted from the host's start, a BERT fine-tune's 12 timed steps after a pause held 12.9 steps of kernels:
    // 7 % more GPU busy time a step than its steps ran.
    int64_t gpu_start = list[i].start_ns;
    if (i > 0 && !take[i - 1] && list[i - 1].kernels > 0)
      gpu_start = std::clamp(list[i - 1].gpu_end_ns, gpu_start, end);
    s.gpu_windows.push_back({gpu_start, end});
    if (i + 1 < take.size() && take[i + 1]) {
      // The host's start to start, or the GPU's where longer: a host that runs ahead of its GPU (replays of a
      // CUDA graph queued faster than they run) issues steps faster than they are done.
      s.periods.push_back(
          std::max(list[i + 1].start_ns - list[i].start_ns, list[i + 1].gpu_start_ns - list[i].gpu_start_ns));
      s.spans.push_back({list[i].start_ns, list[i + 1].start_ns});
      if (const int64_t from = list[i].followedFrom(); list[i + 1].start_ns > from) {
        s.between.push_back({from, list[i + 1].start_ns});
      }
    }
  }
  return s;
}

// The steady iterations that `take` accepts. Without NVTX ranges the last iteration has no end of its own. Never
// those `apply --record`'s check ran as the script wrote them: they are gpuscope's, of neither run.
template <typename Take>
std::vector<bool> steadyMask(const Iterations& it, Take take) {
  const auto& list = it.list;
  const size_t usable = it.source == IterationSource::kNvtx || list.size() < 4 ? list.size() : list.size() - 1;
  std::vector<bool> mask(usable);
  for (size_t i = 0; i < usable; ++i)
    mask[i] = !list[i].warmup && !list[i].as_written && !list[i].unrecorded && take(i);
  return mask;
}

// The hook-free steady iterations less the first (in which the bridge removed its hooks and a compiled model
// may recompile).
std::vector<bool> hookFreeMask(const Iterations& it) {
  const auto& list = it.list;
  return steadyMask(
      it, [&](size_t i) { return list[i].hook_free && i > 0 && list[i - 1].hook_free && !list[i - 1].unrecorded; });
}

bool enough(const std::vector<bool>& mask) { return std::count(mask.begin(), mask.end(), true) >= 2; }

// The iterations timed: the hook-free ones where there are enough, else every steady one.
std::vector<bool> timedFrom(const Iterations& it, std::vector<bool> hook_free) {
  return enough(hook_free) ? hook_free : steadyMask(it, [](size_t) { return true; });
}

}  // namespace

std::vector<bool> timedIterations(const Iterations& it) { return timedFrom(it, hookFreeMask(it)); }

SteadySteps steadySteps(const Iterations& it) {
  SteadySteps s;
  const std::vector<bool> hook_free = hookFreeMask(it);
  s.hook_free = enough(hook_free);
  s.timed = stepWindows(it.list, timedFrom(it, hook_free));
  if (s.hook_free && !it.applied) {
    s.annotated = stepWindows(it.list, steadyMask(it, [&](size_t i) { return !it.list[i].hook_free; }));
  }
  s.module_ranges = !s.annotated.windows.empty() || !s.hook_free;
  if (s.annotated.windows.empty() || !s.hook_free) s.annotated = s.timed;
  return s;
}

int64_t stepOf(const Iterations& it, std::vector<int64_t> periods) {
  if (periods.empty()) return 0;
  if (it.repeating) return summarize(periods).median;
  return std::accumulate(periods.begin(), periods.end(), int64_t{0}) / static_cast<int64_t>(periods.size());
}

int64_t stepNs(const Iterations& it) { return stepOf(it, steadySteps(it).timed.periods); }

std::string_view stepStatistic(const Iterations& it) { return it.repeating ? "median" : "mean"; }

std::string_view toString(IterationSource source) {
  switch (source) {
    case IterationSource::kNvtx: return "nvtx";
    case IterationSource::kGraphLaunch: return "graph launch";
    case IterationSource::kKernelPattern: return "kernel pattern";
    case IterationSource::kHostSync: return "host sync";
    case IterationSource::kCopyPattern: return "copy pattern";
    case IterationSource::kXlaModule: return "xla module";
    case IterationSource::kNotFound: break;
  }
  return "none";
}

}  // namespace gpuscope::analysis
