#include "advisor/context.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "analyzer/duration_stats.h"
#include "analyzer/kernel_names.h"
#include "analyzer/tensor_replay.h"

namespace gpuscope::advisor {

using analysis::Interval;
using analysis::Iterations;
using analysis::TraceData;

std::string_view toString(Framework framework) {
  switch (framework) {
    case Framework::kCuda: return "CUDA";
    case Framework::kPyTorch: return "PyTorch";
    case Framework::kJax: return "JAX";
    case Framework::kCuPy: return "CuPy";
  }
  return "CUDA";
}

namespace {

// The framework whose kernels run most: PyTorch's ATen and Inductor's Triton kernels, XLA's fusions, CuPy's
// generated kernels. Libraries (cuBLAS, cuDNN) say nothing; a program with only those is plain CUDA.
Framework detectFramework(const TraceData& t) {
  int64_t votes[4] = {0, 0, 0, 0};
  for (const auto& config : t.configs) {
    const std::string& name = t.text(config.name.id);
    if (name.find("at::native::") != std::string::npos || name.rfind("triton_", 0) == 0) {
      ++votes[static_cast<int>(Framework::kPyTorch)];
    } else if (name.rfind("cupy_", 0) == 0) {
      ++votes[static_cast<int>(Framework::kCuPy)];
    } else if (name.find("_fusion") != std::string::npos || name.rfind("fusion_", 0) == 0 || xlaSingleOp(name)) {
      ++votes[static_cast<int>(Framework::kJax)];
    }
  }
  const auto best = std::max_element(std::begin(votes) + 1, std::end(votes));
  return *best > 0 ? static_cast<Framework>(best - std::begin(votes)) : Framework::kCuda;
}

// The busiest device of `session` where one is asked for, else of the iterations' process; without either, the
// busiest overall.
int32_t stepDevice(const TraceData& t, const analysis::Stats& stats, const Iterations& it, int32_t session) {
  int32_t best = analysis::kNone;
  int64_t best_busy = 0;
  if (session == analysis::kNone && it.source != analysis::IterationSource::kNotFound) session = it.session;
  for (const auto& d : stats.devices) {
    const bool of_session =
        session == analysis::kNone || t.devices[static_cast<size_t>(d.device)].session_id == t.sessions[session].id;
    if (of_session && d.busy_ns > best_busy) best = d.device, best_busy = d.busy_ns;
  }
  return best;
}

std::string iterationsBasis(const Iterations& it, int64_t steady) {
  std::string basis = std::string(analysis::stepStatistic(it)) + " start-to-start time of " + std::to_string(steady) +
                      " steady iterations (";
  switch (it.source) {
    case analysis::IterationSource::kNvtx: return basis + "NVTX range '" + it.marker + "')";
    case analysis::IterationSource::kGraphLaunch: return basis + "each a launch of " + it.marker + ")";
    case analysis::IterationSource::kKernelPattern:
      return basis + "each opened by kernel " + analysis::shortKernelName(it.marker) + ")";
    case analysis::IterationSource::kCopyPattern: return basis + "each opened by a " + it.marker + ")";
    case analysis::IterationSource::kXlaModule: return basis + "each an execution of XLA's " + it.marker + ")";
    default: return basis + "each ended by a host synchronisation)";
  }
}

// The model's forwards per steady iteration, the median: micro-batches where the steps are optimizer periods.
int32_t medianForwards(const Iterations& it) {
  std::vector<int64_t> forwards;
  for (const auto& iteration : it.list) {
    if (!iteration.warmup) forwards.push_back(iteration.forwards);
  }
  return static_cast<int32_t>(std::max<int64_t>(1, analysis::summarize(forwards).median));
}

Step measureStep(const Iterations& it, const analysis::Stats& stats, int32_t device) {
  Step step;
  analysis::SteadySteps steady = analysis::steadySteps(it);
  analysis::StepWindows& annotated = steady.annotated;
  analysis::StepWindows& timed = steady.timed;
  const bool hook_free = steady.hook_free;
  if (timed.windows.size() >= 2) {
    step.from_iterations = true;
    step.count = static_cast<int64_t>(annotated.windows.size());
    step.timed_count = static_cast<int64_t>(timed.windows.size());
    step.time_ns = analysis::stepOf(it, timed.periods);
    step.basis = iterationsBasis(it, step.timed_count);
    step.forwards = medianForwards(it);
    if (const auto passes = std::count_if(it.list.begin(), it.list.end(),
                                          [](const analysis::Iteration& i) { return i.evaluation_end_ns > 0; })) {
      step.basis += ", " + std::to_string(passes) + " passes of the model's forwards alone (an evaluation) left out";
    }
    if (step.forwards > 1) {
      step.basis += ", each " + std::to_string(step.forwards) + " forwards of the model (gradient accumulation)";
    }
    if (hook_free && it.applied) {
      step.basis +=
          ", after the check of gpuscope apply (the steps before it ran the model as written, compiling "
          "or checking)";
    } else if (hook_free && steady.module_ranges) {
      step.basis += ", after the PyTorch bridge removed its module hooks; module attribution from " +
                    std::to_string(step.count) + " annotated steps before";
    } else if (hook_free) {
      step.basis +=
          ", all after the PyTorch bridge removed its module hooks (at a compiled model's first call, or "
          "after annotated steps that were all warm-up): no steady step has module ranges to attribute "
          "kernels to modules";
    }
    step.windows = analysis::mergeIntervals(annotated.windows);
    step.timed_windows = analysis::mergeIntervals(timed.windows);
    step.timed_gpu_windows = analysis::mergeIntervals(timed.gpu_windows);
    step.between = std::move(timed.between);
    step.periods = static_cast<int64_t>(timed.periods.size());
    return step;
  }
  step = Step{};
  for (const auto& d : stats.devices) {
    if (d.device == device) step.time_ns = d.windowNs();
  }
  step.basis = "first to last GPU activity; no repeating iterations were found";
  return step;
}

}  // namespace

namespace {

// Whether a time falls inside one of the windows (sorted, disjoint); no windows: everything counts.
bool inWindows(const std::vector<Interval>& windows, int64_t t) {
  return windows.empty() || analysis::insideAny(windows, t);
}

}  // namespace

bool Context::inSteps(int64_t start_ns) const { return inWindows(step.windows, start_ns); }

bool Context::inSteps(size_t kernel) const {
  return trace.kernels.device[kernel] == device && inSteps(trace.kernels.start_ns[kernel]);
}

bool Context::inTimedSteps(size_t kernel) const {
  return trace.kernels.device[kernel] == device && inTimedSteps(trace.kernels.start_ns[kernel]);
}

// Per-step figures are totals over the steady windows divided by their count, and the step is the median
// period: where windows run longer than the median (a slow step among them), a figure can come out a little
// above the step. No part of a step is more than the step.
double Context::shareOfStep(int64_t per_step_ns) const {
  if (step.time_ns <= 0) return 0.0;
  return std::min(1.0, static_cast<double>(per_step_ns) / static_cast<double>(step.time_ns));
}

bool Context::inTimedSteps(int64_t start_ns) const { return inWindows(step.timed_windows, start_ns); }

std::vector<analysis::Interval> Context::compilesInTimedSteps() const {
  std::vector<analysis::Interval> stretches;
  for (const analysis::RuntimeCompile& compile : compiles) {
    if (inTimedSteps(compile.stretch.end)) stretches.push_back(compile.stretch);
  }
  return analysis::mergeIntervals(std::move(stretches));
}

bool Context::cudaDeviceMemoryEvent(size_t i) const {
  const analysis::MemoryTable& m = trace.memory;
  return m.session[i] == session && m.device[i] == device && m.kind[i] == schema::MemoryKind::kDevice && m.pool[i] == 0;
}

std::vector<Interval> Context::modelRanges() const {
  std::vector<Interval> ranges;
  for (const analysis::PhaseRange& r : phases) {
    if (r.phase == analysis::Phase::kForward || r.phase == analysis::Phase::kBackward)
      ranges.push_back({r.start, r.end});
  }
  return analysis::mergeIntervals(std::move(ranges));
}

double Context::modelAllocationShare() const {
  const std::vector<Interval> model_ranges = modelRanges();
  const analysis::MemoryTable& m = trace.memory;
  int64_t in_steps = 0, in_model = 0;
  for (size_t i = 0; i < m.size(); ++i) {
    if (!cudaDeviceMemoryEvent(i) || m.op[i] != schema::MemoryOp::kAllocation || !inSteps(m.time_ns[i])) continue;
    ++in_steps;
    if (analysis::insideAny(model_ranges, m.time_ns[i])) ++in_model;
  }
  return in_steps > 0 ? static_cast<double>(in_model) / static_cast<double>(in_steps) : 0.0;
}

int64_t Context::idleBetweenStepsNs() const {
  if (step.between.empty()) return 0;
  const int64_t gaps = analysis::totalLength(step.between);
  // Steps whose ranges run one into the next (the bridge's, forward to forward) leave a gap only where something
  // else ran between them (an evaluation, and the loader's start after it, once an epoch): per step, that counts
  // once over all the periods.
  const auto per = std::max(static_cast<int64_t>(step.between.size()), step.periods);
  return (gaps - analysis::overlapLength(activity.busy, step.between)) / per;
}

double Context::shareOfPeak(int64_t bytes) const {
  const int64_t peak = model.measured_peak_bytes;
  return peak > 0 ? static_cast<double>(bytes) / static_cast<double>(peak) : 0.0;
}

PhaseWork Context::phaseWork(analysis::Phase phase) const {
  std::vector<analysis::PhaseRange> ranges;
  bool first_of_phase = true;
  for (const auto& r : phases) {
    if (r.phase != phase) continue;
    // The first optimizer step creates the optimizer's state (a fill per parameter): no step like the others.
    const bool creates_state = first_of_phase && phase == analysis::Phase::kOptimizer;
    first_of_phase = false;
    if (!creates_state && inSteps(r.start)) ranges.push_back(r);
  }
  PhaseWork w;
  w.ranges = static_cast<int64_t>(ranges.size());
  if (ranges.empty()) return w;
  w.first_start_ns = ranges.front().start, w.first_end_ns = ranges.front().end;
  const auto& k = trace.kernels;
  std::vector<int64_t> first(ranges.size(), -1), last(ranges.size(), -1);
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.device[i] != device || k.launch_call[i] == analysis::kNone) continue;
    const int64_t launched = trace.api_calls.start_ns[static_cast<size_t>(k.launch_call[i])];
    auto it = std::upper_bound(ranges.begin(), ranges.end(), launched,
                               [](int64_t t, const analysis::PhaseRange& r) { return t < r.start; });
    if (it == ranges.begin() || launched >= std::prev(it)->end) continue;
    const auto r = static_cast<size_t>(std::prev(it) - ranges.begin());
    ++w.kernels;
    w.multi_tensor += kindOf(i).cls == analysis::KernelClass::kOptimizer;
    w.kernel_ns += k.end_ns[i] - k.start_ns[i];
    first[r] = first[r] < 0 ? k.start_ns[i] : std::min(first[r], k.start_ns[i]);
    last[r] = std::max(last[r], k.end_ns[i]);
  }
  for (size_t r = 0; r < ranges.size(); ++r) w.span_ns += first[r] < 0 ? 0 : last[r] - first[r];
  return w;
}

namespace {

// "….h.3 (forward)": the forward range of a repeated block, the outermost item of a ModuleList or Sequential
// (the same blocks the tensor replay checkpoints).
bool isBlockForward(std::string_view name) {
  if (!analysis::isModuleRange(name)) return false;
  analysis::Phase phase;
  const std::string module = analysis::moduleOfRange(name, phase);
  return phase == analysis::Phase::kForward && analysis::blockOf(module) == module;
}

}  // namespace

std::vector<Interval> Context::dataLoaderRanges() const {
  std::vector<Interval> ranges;
  const auto& n = trace.nvtx;
  for (size_t r = 0; r < n.size(); ++r) {
    if (n.kind[r] == schema::NvtxKind::kRange && n.session[r] == session &&
        trace.text(n.name[r]) == analysis::kDataLoaderRange) {
      ranges.push_back({n.start_ns[r], n.end_ns[r]});
    }
  }
  return analysis::mergeIntervals(std::move(ranges));
}

std::vector<Interval> Context::blockForwardRanges() const {
  std::vector<Interval> blocks;  // NVTX rows are sorted by start
  const auto& n = trace.nvtx;
  for (size_t r = 0; r < n.size(); ++r) {
    if (n.kind[r] != schema::NvtxKind::kRange || n.session[r] != session || !inSteps(n.start_ns[r])) continue;
    if (!blocks.empty() && n.start_ns[r] < blocks.back().end) continue;
    if (isBlockForward(trace.text(n.name[r]))) blocks.push_back({n.start_ns[r], n.end_ns[r]});
  }
  return blocks;
}

std::vector<size_t> Context::kernelsLaunchedIn(const std::vector<Interval>& ranges) const {
  std::vector<size_t> out;
  const auto& k = trace.kernels;
  for (size_t i = 0; i < k.size() && !ranges.empty(); ++i) {
    if (k.device[i] != device || k.launch_call[i] == analysis::kNone) continue;
    const int64_t launched = trace.api_calls.start_ns[static_cast<size_t>(k.launch_call[i])];
    const Interval* r = analysis::lastStartingBy(ranges, launched);
    if (r && launched < r->end) out.push_back(i);
  }
  return out;
}

int64_t Context::blockForwardKernelNs() const {
  int64_t total = 0;
  const auto& k = trace.kernels;
  for (size_t i : kernelsLaunchedIn(blockForwardRanges())) {
    if (inSteps(k.start_ns[i])) total += k.end_ns[i] - k.start_ns[i];
  }
  return total;
}

namespace {

bool compilerMade(std::string_view name) {
  return name.rfind("triton_", 0) == 0 || name.find("_fusion") != std::string_view::npos ||
         name.rfind("fusion", 0) == 0 || xlaSingleOp(name);
}

// A kernel a PyTorch program launched itself, compiled at run time with no C++ signature in its name (the author's
// Triton kernels, an extern "C" kernel from a loaded module): PyTorch's own and its libraries' kernels carry their
// parameter lists. Neither torch.compile nor gpuscope's runtime fuses across such a kernel, and the author who
// wrote one has fused by hand (an MLP of the author's bias + GELU Triton kernels after each GEMM drew a wrong
// fusion finding, triton_fused_mlp_infer, H200, 2026-11-30).
bool hasAuthorsOwnKernel(const analysis::FusionPattern& p) {
  for (size_t i = 0; i < p.kernels.size() && i < p.classes.size(); ++i) {
    if (analysis::KernelKind{.cls = p.classes[i]}.fusable() && p.kernels[i].find('(') == std::string::npos) return true;
  }
  return false;
}

// A convolution and the elementwise kernels after it. PyTorch's fix, torch.compile, calls cuDNN's convolution as
// a kernel of its own and fuses nothing into it (its pointwise kernels still run after it); cuDNN's fused epilogue
// (gpuscope's runtime, XLA) is what folds them.
bool convolutionEpilogue(const analysis::FusionPattern& p) {
  return p.kind == analysis::FusionKind::kGemmEpilogue && !p.classes.empty() &&
         p.classes.front() == analysis::KernelClass::kConvolution;
}

}  // namespace

int64_t Context::peakDeviceCapacity() const {
  const analysis::DeviceMemory* top = memory.peakDevice();
  if (!top || top->device < 0 || static_cast<size_t>(top->device) >= trace.devices.size()) return 0;
  return trace.devices[static_cast<size_t>(top->device)].global_memory_bytes;
}

// Whether the PyTorch bridge saw a model: module ranges in the step's process. A trace with the bridge's
// allocator events but no module range comes from a program whose step is a plain function over tensors;
// without the bridge there is no telling, and a model is assumed.
bool Context::modelRan() const {
  if (trace.allocator.size() == 0) return true;
  const auto& nvtx = trace.nvtx;
  for (size_t r = 0; r < nvtx.size(); ++r) {
    if (nvtx.session[r] == session && analysis::isModuleRange(trace.text(nvtx.name[r]))) return true;
  }
  return false;
}

const analysis::RankStep* Context::ownRank() const {
  const auto r = std::find_if(job.ranks.begin(), job.ranks.end(),
                              [&](const analysis::RankStep& x) { return x.session == session; });
  return r == job.ranks.end() ? nullptr : &*r;
}

// DDP's root module is DistributedDataParallel, FSDP1's FullyShardedDataParallel, FSDP2's FSDP<model class>.
DataParallel Context::dataParallel() const {
  if (framework != Framework::kPyTorch) return DataParallel::kUnknown;
  bool any_module = false;
  for (size_t r = 0; r < trace.nvtx.size(); ++r) {
    const std::string& name = trace.text(trace.nvtx.name[r]);
    if (trace.nvtx.session[r] != session || !analysis::isModuleRange(name)) continue;
    any_module = true;
    if (name.starts_with("DistributedDataParallel")) return DataParallel::kDdp;
    if (name.starts_with("FullyShardedDataParallel") || name.starts_with("FSDP")) return DataParallel::kFsdp;
  }
  return any_module ? DataParallel::kNone : DataParallel::kUnknown;
}

// A step whose kernels are mostly a compiler's (Inductor's triton_*, XLA's fusions) or replayed from CUDA graphs
// was fused and captured by its author's choice: the eager rest beside it (a loss, gradient clipping, the batch's
// indexing) is not a fusion finding. A compiled GPT-2 and a reduce-overhead MLP drew wrong ones so.
bool Context::alreadyFused() const {
  int64_t all = 0, fused = 0;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    if (!inSteps(i)) continue;
    ++all;
    fused += trace.kernels.graph_id[i] != analysis::kNone || compilerMade(trace.kernelName(i));
  }
  return all > 0 && 2 * fused >= all;
}

bool Context::stepsRepeat() const { return iterations.repeating; }

namespace {

// Whether a kernel's launch call began inside a phase range of one of `kinds`; false where its launch was not
// recorded.
bool launchedInPhase(const Context& c, size_t kernel, std::initializer_list<analysis::Phase> kinds) {
  const int32_t call = c.trace.kernels.launch_call[kernel];
  if (call == analysis::kNone) return false;
  const int64_t t = c.trace.api_calls.start_ns[static_cast<size_t>(call)];
  return std::any_of(c.phases.begin(), c.phases.end(), [&](const analysis::PhaseRange& r) {
    return std::find(kinds.begin(), kinds.end(), r.phase) != kinds.end() && r.start <= t && t < r.end;
  });
}

}  // namespace

std::vector<const analysis::FusionPattern*> Context::chainsToFuse() const {
  std::vector<const analysis::FusionPattern*> out;
  if (alreadyFused()) return out;
  for (const auto& p : chains) {
    if (std::any_of(p.kernels.begin(), p.kernels.end(), compilerMade)) continue;
    if (convolutionEpilogue(p) && framework == Framework::kPyTorch) continue;
    if (framework == Framework::kPyTorch && hasAuthorsOwnKernel(p)) continue;
    if (!p.first_occurrence.empty() && trace.kernels.graph_id[p.first_occurrence.front()] != analysis::kNone) continue;
    if (!p.first_occurrence.empty() &&
        launchedInPhase(*this, p.first_occurrence.front(), {analysis::Phase::kOptimizer}))
      continue;
    out.push_back(&p);
  }
  return out;
}

std::vector<const analysis::FusionPattern*> Context::chainsApplyFuses() const {
  using analysis::Phase;
  std::vector<const analysis::FusionPattern*> fused = chainsToFuse();
  const bool model_ranges = std::any_of(phases.begin(), phases.end(), [](const analysis::PhaseRange& r) {
    return r.phase == Phase::kForward || r.phase == Phase::kBackward;
  });
  if (framework != Framework::kPyTorch || !model_ranges) return fused;
  std::erase_if(fused, [&](const analysis::FusionPattern* p) {
    if (p->first_occurrence.empty()) return false;
    const size_t first = p->first_occurrence.front();
    return trace.kernels.launch_call[first] != analysis::kNone &&
           !launchedInPhase(*this, first, {Phase::kForward, Phase::kBackward});
  });
  return fused;
}

namespace {

// The forwards of each root module (a module range with no parent's name before its own) in the timed steps.
std::map<std::string, int64_t> rootForwardCounts(const Context& c) {
  std::map<std::string, int64_t> counts;
  const analysis::NvtxTable& n = c.trace.nvtx;
  for (size_t r = 0; r < n.size(); ++r) {
    if (n.session[r] != c.session || n.kind[r] != schema::NvtxKind::kRange || !c.inTimedSteps(n.start_ns[r])) continue;
    const std::string& name = c.trace.text(n.name[r]);
    if (!analysis::isModuleRange(name)) continue;
    analysis::Phase phase;
    const std::string module = analysis::moduleOfRange(name, phase);
    if (phase == analysis::Phase::kForward && module.find('.') == std::string::npos) ++counts[module];
  }
  return counts;
}

int64_t perTimedStepRounded(const Context& c, int64_t count) {
  return c.step.timed_count > 0 ? (count + c.step.timed_count / 2) / c.step.timed_count : count;
}

}  // namespace

// The bridge's steps are its root's forward calls, which need not be the advisor's (a DCGAN's discriminator runs
// three a step: 5.6 ms a call recorded against a 9.5 ms step), so the step is scaled by how much shorter the
// bridge's paused calls ran than its recorded ones, never lengthened.
int64_t Context::unrecordedStep() const {
  if (!paused_cost || paused_cost->paused_step_ns <= 0 || paused_cost->recorded_step_ns <= 0) return step.time_ns;
  const double shorter = std::min(
      1.0, static_cast<double>(paused_cost->paused_step_ns) / static_cast<double>(paused_cost->recorded_step_ns));
  return std::llround(shorter * static_cast<double>(step.time_ns));
}

// The kernels run as long unrecorded, so the GPU idles no more than the unrecorded step leaves beside them: a
// torchvision EfficientNet-B0 showed 12.0 ms of launch gaps a step where its GPU was busy 30-33 ms of steps that
// ran 37.5-40.4 ms paused, 33.5-39.6 plain (bench/corpus/tv_efficientnet_b0_train_fp32, H200, 2026-12-02); bounded,
// 10.6 ms. Where the bridge did not time them, no bound.
int64_t Context::launchGaps() const {
  const int64_t recorded = perTimedStep(timeline.idle.launch_bound_ns);
  if (unrecordedStep() >= step.time_ns) return recorded;
  return std::min(recorded, std::max<int64_t>(0, unrecordedStep() - perTimedStep(timeline.busy_ns)));
}

Context::RootForwards Context::mostForwardsOfARoot() const {
  RootForwards most;
  for (const auto& [module, count] : rootForwardCounts(*this)) {
    const int64_t per_step = perTimedStepRounded(*this, count);
    if (per_step > most.per_step) most = {module, per_step};
  }
  return most;
}

int64_t Context::rootForwardsPerStep() const {
  int64_t forwards = 0;
  for (const auto& [module, count] : rootForwardCounts(*this)) forwards += count;
  return perTimedStepRounded(*this, forwards);
}

std::string Context::rootHandedItsState() const {
  const analysis::NvtxTable& n = trace.nvtx;
  for (size_t r = 0; r < n.size(); ++r) {
    if (n.session[r] != session || n.kind[r] != schema::NvtxKind::kMark) continue;
    const std::string& name = trace.text(n.name[r]);
    if (name.starts_with(analysis::kStateCarriedMark)) return name.substr(analysis::kStateCarriedMark.size());
  }
  return "";
}

std::vector<size_t> Context::layoutTransforms() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    if (inSteps(i) && kindOf(i).layout_transform) out.push_back(i);
  }
  return out;
}

namespace {

// A training step with no optimizer range of its own updates its weights in code the script wrote (a hand-written
// AdamW, a per-parameter loop): between the end of each backward and the next forward, which is where a
// torch.optim optimizer's range would be. Phases as phaseRanges gives them, sorted by start.
void inferOptimizerPhases(Context& c) {
  using analysis::Phase;
  auto& ranges = c.phases;
  if (std::any_of(ranges.begin(), ranges.end(), [](const auto& r) { return r.phase == Phase::kOptimizer; })) return;
  std::vector<analysis::PhaseRange> updates;
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].phase != Phase::kBackward) continue;
    auto next = std::find_if(ranges.begin() + static_cast<std::ptrdiff_t>(i) + 1, ranges.end(),
                             [&](const auto& r) { return r.phase == Phase::kForward && r.start >= ranges[i].end; });
    if (next != ranges.end()) updates.push_back({ranges[i].end, next->start, Phase::kOptimizer});
  }
  if (updates.empty()) return;
  ranges.insert(ranges.end(), updates.begin(), updates.end());
  std::stable_sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  c.optimizer_inferred = true;
}

// In a JAX process, the largest allocation of half the GPU or more is XLA's preallocation.
void findPreallocation(Context& c) {
  if (c.framework != Framework::kJax || c.device == analysis::kNone) return;
  const auto& m = c.trace.memory;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.device[i] != c.device || m.op[i] != schema::MemoryOp::kAllocation || m.kind[i] != schema::MemoryKind::kDevice)
      continue;
    if (analysis::reservesHalfTheGpu(c.trace, c.device, m.bytes[i]) && m.bytes[i] > c.preallocated_bytes) {
      c.preallocated_bytes = m.bytes[i];
      c.preallocation = i;
    }
  }
}

}  // namespace

Context buildContext(const TraceData& trace, int32_t session) {
  Context c(trace);
  c.framework = detectFramework(trace);
  c.kinds = analysis::classifyConfigs(trace);
  c.stats = analysis::computeStats(trace);
  c.iterations = analysis::findIterations(trace, session);
  c.device = stepDevice(trace, c.stats, c.iterations, session);
  c.step = measureStep(c.iterations, c.stats, c.device);
  if (c.device != analysis::kNone) {
    for (size_t i = 0; i < trace.sessions.size(); ++i) {
      if (trace.sessions[i].id == trace.devices[static_cast<size_t>(c.device)].session_id) {
        c.session = static_cast<int32_t>(i);
      }
    }
    const std::vector<analysis::DeviceActivity> activity = analysis::deviceActivity(trace);
    c.activity = activity[static_cast<size_t>(c.device)];
    c.timeline = analysis::analyzeTimeline(trace, c.step.timed_gpu_windows, activity)[static_cast<size_t>(c.device)];
    c.result_fetches = analysis::resultFetchWaits(trace, c.device, c.activity.busy);
    c.compiles = analysis::runtimeCompiles(trace, c.session);
    c.compiler_work = analysis::annotatedCompiles(trace, c.session);
    c.paused_cost = analysis::pausedStepsCost(trace, c.session);
    c.recording_cost_per_launch_ns = analysis::recordingCostPerLaunch(trace, c.session, c.paused_cost);
  }
  c.phases = analysis::phaseRanges(trace, c.session);
  if (c.session != analysis::kNone) c.sync_ends = analysis::hostSyncEnds(trace)[static_cast<size_t>(c.session)];
  inferOptimizerPhases(c);
  c.memory = analysis::analyzeMemory(trace, c.iterations);
  c.categories = analysis::categorizeMemory(trace, c.iterations, c.memory);
  c.model = analysis::fitMemoryModel(c.memory, c.categories, c.iterations);
  c.pools = analysis::analyzePools(trace);
  c.chains = analysis::findFusableChains(trace, c.iterations, c.device, c.step.windows);
  c.host = measureHostWork(c);
  c.job = analysis::analyzeJob(trace, c.kinds, c.memory);
  c.collectives = analysis::collectiveOps(trace);
  findPreallocation(c);
  if (c.device != analysis::kNone) {  // what XLA said it had in use, where the JAX bridge read it
    const analysis::AllocatorUsage xla = analysis::allocatorUsage(trace, c.device);
    c.xla_peak_in_use_bytes = xla.peak_bytes, c.xla_samples = xla.readings;
  }
  return c;
}

}  // namespace gpuscope::advisor
