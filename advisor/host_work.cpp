#include "advisor/host_work.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <set>

#include "analyzer/timeline_analysis.h"

namespace gpuscope::advisor {

namespace {

using analysis::Interval;

// optimizer.step() with fused=True against the per-parameter loop, host time, on an H100
// (tests/bench/torch_host_costs.py): 3.7-4.2× less under `record --torch`, 5.6-8.6× less plain; the low end.
constexpr double kFusedOptimizerHostDivisor = 4.0;
// Eager non-reentrant checkpointing of every block (the recomputed forward plus the saved-tensor hooks) added
// 1.4-4.6× the blocks' forward host time to the host's work per step in six recorded H100 runs of the naive
// GPT, GPT-2 and ResNet-50 (docs/benchmarks.md): the median.
constexpr double kEagerRecomputeHostFactor = 3.2;

// The length of [start, end) less the host's waits for the GPU inside it.
int64_t ownWork(const std::vector<Interval>& waits, int64_t start, int64_t end) {
  return std::max<int64_t>(0, end - start - analysis::overlapLength(waits, start, end));
}

// Adds each steady step's host range, and the stretch between consecutive ones, less the waits: of the timed
// steps, or of the annotated ones.
void measureSteps(const Context& c, const std::vector<Interval>& waits, bool timed, HostWork& h) {
  int64_t steps = 0, pairs = 0;
  const analysis::Iteration* previous = nullptr;
  for (const analysis::Iteration& it : c.iterations.list) {
    if (it.warmup || !(timed ? c.inTimedSteps(it.start_ns) : c.inSteps(it.start_ns))) {
      previous = nullptr;
      continue;
    }
    h.step_ns += ownWork(waits, it.start_ns, it.end_ns);
    ++steps;
    // An evaluation after a step (forwards alone) is neither the step's work nor its wait for the next one.
    const int64_t from = previous ? std::max(previous->end_ns, previous->evaluation_end_ns) : 0;
    if (previous && it.start_ns >= from) {
      h.between_ns += ownWork(waits, from, it.start_ns);
      ++pairs;
    }
    previous = &it;
  }
  h.measured = steps > 0;
  h.step_ns /= std::max<int64_t>(1, steps);
  h.between_ns /= std::max<int64_t>(1, pairs);
}

// The timed steps' stretches of kHostBusyGapNs or more in which the step's process made no CUDA call, summed.
int64_t awayWork(const Context& c) {
  const std::vector<Interval> calls = analysis::cudaCalls(c.trace, c.session);
  int64_t total = 0;
  for (const analysis::Iteration& it : c.iterations.list) {
    if (it.warmup || !c.inTimedSteps(it.start_ns)) continue;
    total += analysis::totalLength(analysis::awayStretches(calls, it.start_ns, it.end_ns));
  }
  return total;
}

// The host's own work in the PyTorch bridge's DataLoader ranges that start in the timed steps, summed.
int64_t loadingWork(const Context& c, const std::vector<Interval>& waits) {
  int64_t total = 0;
  for (const Interval& r : c.dataLoaderRanges()) {
    if (c.inTimedSteps(r.start)) total += ownWork(waits, r.start, r.end);
  }
  return total;
}

// The host's own work from its first wait for the GPU after the model's work (its forward and backward ranges) to
// the next root forward range of the timed steps, less the optimizer's, summed: a wait inside the model's work (a
// data-dependent operation) leaves the work after it beside the GPU's. The optimizer's step is left to the host's
// forecast of it (fused, it costs a quarter).
int64_t workBeforeModel(const Context& c, const std::vector<Interval>& waits) {
  std::vector<Interval> optimizer;
  for (const analysis::PhaseRange& r : c.phases) {
    if (r.phase == analysis::Phase::kOptimizer) optimizer.push_back({r.start, r.end});
  }
  std::vector<Interval> not_own = waits;
  not_own.insert(not_own.end(), optimizer.begin(), optimizer.end());
  not_own = analysis::mergeIntervals(std::move(not_own));
  int64_t total = 0, model_end = -1;
  for (const analysis::PhaseRange& r : c.phases) {
    if (!c.inTimedSteps(r.start)) continue;
    if (r.phase == analysis::Phase::kForward && model_end >= 0 && r.start > model_end) {
      const auto wait = std::lower_bound(c.sync_ends.begin(), c.sync_ends.end(), model_end);
      if (wait != c.sync_ends.end() && *wait < r.start) total += ownWork(not_own, *wait, r.start);
    }
    if (r.phase == analysis::Phase::kForward || r.phase == analysis::Phase::kBackward)
      model_end = std::max(model_end, r.end);
  }
  return total;
}

// The forward phase's ranges inside the steady steps.
std::vector<Interval> forwardRanges(const Context& c) {
  std::vector<Interval> out;
  for (const analysis::PhaseRange& r : c.phases) {
    if (r.phase == analysis::Phase::kForward && c.inSteps(r.start)) out.push_back({r.start, r.end});
  }
  return analysis::mergeIntervals(std::move(out));
}

// The collector's own cost per launch is in every recorded launch call: the program alone issues its step that
// much faster (Context::recording_cost_per_launch_ns).
void takeOffRecordingCost(const Context& c, HostWork& h) {
  const int64_t per_launch = c.recording_cost_per_launch_ns;
  if (per_launch == 0) return;
  h.recording_ns = std::min(h.step_ns, per_launch * c.perTimedStep(c.timeline.kernels));
  if (h.step_ns > 0) {  // its share of the launches before the model's call
    h.before_model_ns -= std::llround(static_cast<double>(h.before_model_ns) * static_cast<double>(h.recording_ns) /
                                      static_cast<double>(h.step_ns));
  }
  h.step_ns -= h.recording_ns;
  h.model_ns = std::max<int64_t>(0, h.model_ns - per_launch * h.model_launches);
  h.blocks_forward_ns = std::max<int64_t>(0, h.blocks_forward_ns - per_launch * h.blocks_forward_launches);
}

// The host's own work in the phase ranges: of the annotated steps, the forward and backward (model), the
// forward alone and the optimizer; of the hook-free timed steps, the root's forward ranges.
struct PhaseHostWork {
  int64_t model = 0, forward = 0, optimizer = 0;
  int64_t timed_forward = 0, timed_forward_ranges = 0;
};

PhaseHostWork hostInPhases(const Context& c, const std::vector<Interval>& waits) {
  PhaseHostWork p;
  for (const analysis::PhaseRange& r : c.phases) {
    const int64_t work = ownWork(waits, r.start, r.end);
    if (c.inSteps(r.start)) {
      if (r.phase == analysis::Phase::kOptimizer) p.optimizer += work;
      if (r.phase == analysis::Phase::kForward || r.phase == analysis::Phase::kBackward) p.model += work;
      if (r.phase == analysis::Phase::kForward) p.forward += work;
    } else if (r.phase == analysis::Phase::kForward && c.inTimedSteps(r.start)) {
      p.timed_forward += work;
      ++p.timed_forward_ranges;
    }
  }
  return p;
}

// What the bridge's module hooks cost the model's phases per step, of `whole` (the annotated steps' host work
// less the hook-free ones'). Where the hook-free steps keep the root's forward range, it is the forward's own
// work in the annotated steps less in those: the hooks' cost lies in the forward (the backward's own work was the
// same in both kinds of step, within their noise, on H100 recordings of BERT and ResNet-50 alone and of GPT-2 and
// BERT under DDP), and the rest of the difference lies outside the model's ranges (it made a transformers Trainer
// job's work between the phases look 10 ms longer than it is). Otherwise all of `whole`.
int64_t hooksInModel(const Context& c, const PhaseHostWork& p, int64_t whole) {
  if (p.timed_forward_ranges == 0) return whole;
  return std::clamp<int64_t>(c.perStep(p.forward) - c.perTimedStep(p.timed_forward), 0, whole);
}

// The parameter tensors the PyTorch bridge named in this process: their distinct addresses.
int64_t parameterTensors(const Context& c) {
  const analysis::TensorRoleTable& roles = c.trace.roles;
  std::set<int64_t> addresses;
  for (size_t i = 0; i < roles.size(); ++i) {
    if (roles.session[i] == c.session && roles.role[i] == schema::TensorRole::kParameter)
      addresses.insert(roles.address[i]);
  }
  return static_cast<int64_t>(addresses.size());
}

// A training step's forward and backward are two compiled calls, an inference step's forward one (a step with phase
// ranges and no backward among them; without phase ranges it may be either, and counts two); a step written as a
// plain function is captured by hand. A scorer of 19 kernels a request (bench/corpus/triton_fused_mlp_infer, H200,
// 2026-11-30) was forecast at 1.73 ms a request under CUDA graphs against 0.38 today; captured by hand it ran 0.06.
// That is one replay of the model a step: where a model runs more forwards a step, its CUDA graphs are captured by
// hand (cudaGraphsFix), not by torch.compile.
int64_t compiledCalls(const Context& c) {
  if (c.framework != Framework::kPyTorch || !c.modelRan()) return 0;
  const bool backward = std::any_of(c.phases.begin(), c.phases.end(), [](const analysis::PhaseRange& p) {
    return p.phase == analysis::Phase::kBackward;
  });
  return backward || c.phases.empty() ? kCompiledCallsPerStep : 1;
}

}  // namespace

HostWork measureHostWork(const Context& c) {
  HostWork h;
  if (!c.step.from_iterations || c.session == analysis::kNone) return h;
  std::vector<Interval> waits = analysis::hostWaitCalls(c.trace, c.session);
  waits.insert(waits.end(), c.result_fetches.begin(), c.result_fetches.end());
  // Kernels compiled at run time are left out of the figures below like waits, and counted once, as the timed
  // steps' compile_ns: the annotated steps compile more often than the timed ones (a DistilBERT fine-tune's
  // first steps compiled for each new length, and its forward and backward phases came to 82.5 ms of host work
  // against a 64.1 ms step).
  for (const analysis::RuntimeCompile& compile : c.compiles) waits.push_back(compile.stretch);
  waits = analysis::mergeIntervals(std::move(waits));
  measureSteps(c, waits, true, h);
  if (!h.measured) return h;
  // The allocator's synchronisations are waits, which the host's own work already leaves out.
  h.allocation_ns = c.perTimedStep(analysis::overlapLength(
      analysis::subtract(analysis::deviceAllocationCalls(c.trace, c.session), waits), c.step.timed_windows));
  h.pinning_ns = c.perTimedStep(analysis::overlapLength(
      analysis::subtract(analysis::hostPinningCalls(c.trace, c.session), waits), c.step.timed_windows));
  // The phases' host work comes from the annotated steps, which the bridge's module hooks slowed: where the
  // timed steps are hook-free, their hooks' cost is taken off the model's phases, where the hooks ran.
  HostWork annotated;
  measureSteps(c, waits, false, annotated);
  const PhaseHostWork phases = hostInPhases(c, waits);
  const int64_t hooks = hooksInModel(c, phases, std::max<int64_t>(0, annotated.step_ns - h.step_ns));
  h.loading_ns = c.perTimedStep(loadingWork(c, waits));
  h.compile_ns = c.perTimedStep(analysis::overlapLength(c.compilesInTimedSteps(), c.step.timed_windows));
  h.away_ns = std::clamp<int64_t>(c.perTimedStep(awayWork(c)) - h.compile_ns, 0, h.step_ns);
  h.before_model_ns = std::min(c.perTimedStep(workBeforeModel(c, waits)), h.step_ns);
  const int64_t model = phases.model, optimizer = phases.optimizer;
  // The blocks' forward host time, inside the model's, is scaled by as much.
  double unhooked = 1.0;
  if (model > 0) {
    h.model_ns = std::max<int64_t>(0, c.perStep(model) - hooks);
    unhooked = static_cast<double>(h.model_ns) / static_cast<double>(c.perStep(model));
    h.optimizer_ns = c.perStep(optimizer);
    h.model_launches =
        c.perStep(c.phaseWork(analysis::Phase::kForward).kernels + c.phaseWork(analysis::Phase::kBackward).kernels);
  } else {  // no phases: the whole step is the model's
    h.model_is_step = true;
    h.model_ns = h.step_ns;
    h.model_launches = c.perTimedStep(c.timeline.kernels);
  }
  const std::vector<Interval> blocks = c.blockForwardRanges();
  for (const Interval& b : blocks) h.blocks_forward_ns += ownWork(waits, b.start, b.end);
  h.blocks_forward_ns = std::llround(unhooked * static_cast<double>(c.perStep(h.blocks_forward_ns)));
  h.blocks_forward_launches = c.perStep(static_cast<int64_t>(c.kernelsLaunchedIn(blocks).size()));
  const std::vector<size_t> forward = c.kernelsLaunchedIn(forwardRanges(c));
  // Autocast casts each fp32 weight to bf16 once per forward, TF32 convolutions' too: compiled with autocast, the
  // ResNet-50 launched one cast kernel per convolution (H100, 2026-11-27, after `apply`).
  const auto gemm_in = [&](size_t k, std::initializer_list<analysis::Precision> precisions) {
    const analysis::KernelKind& kind = c.kindOf(k);
    return (kind.cls == analysis::KernelClass::kGemm || kind.cls == analysis::KernelClass::kConvolution) &&
           std::find(precisions.begin(), precisions.end(), kind.precision) != precisions.end();
  };
  h.forward_fp32_gemms = c.perStep(std::count_if(forward.begin(), forward.end(), [&](size_t k) {
    return c.kindOf(k).onCudaCores() || gemm_in(k, {analysis::Precision::kTf32});
  }));
  h.half_precision = std::any_of(forward.begin(), forward.end(), [&](size_t k) {
    return gemm_in(k, {analysis::Precision::kBf16, analysis::Precision::kFp16});
  });
  if (c.dataParallel() == DataParallel::kDdp) h.ddp_parameters = parameterTensors(c);
  h.compiled_calls = compiledCalls(c);
  // Compiled without graphs, every forward of a root module is a call (a decoder run once per position: each), and
  // so is its backward. A GRU seq2seq whose decoder runs 30 times a step ran 46.3-48.2 ms a step with its two
  // modules compiled against 24.2-30.2 as written (bench/corpus/pt_gru_seq2seq_teacher_forcing, H200, 2026-12-02).
  if (h.compiled_calls > 0) {
    const int64_t call = kCompiledDefaultForwardHostNs + (h.compiled_calls > 1 ? kCompiledDefaultBackwardHostNs : 0);
    h.compiled_calls_floor_ns = std::max<int64_t>(1, c.rootForwardsPerStep()) * call;
  }
  takeOffRecordingCost(c, h);
  return h;
}

namespace {

// The forward and backward's launches after the changes.
int64_t modelLaunchesAfter(const HostWork& h, const HostChanges& what) {
  int64_t left = std::max<int64_t>(0, h.model_launches - what.launches_removed);
  if (what.checkpoint && what.compiled) left += h.blocks_forward_launches;
  if (what.autocast) left += h.forward_fp32_gemms;
  return left;
}

}  // namespace

// Every launch of the forward and backward costs the host what it did before, so their host time scales with
// their launches: fusion removes some, a recomputation inside the compiled graph and autocast's weight casts
// add some. Compiled launches cost no less than kCompiledLaunchHostNs each: a transformers Llama whose eager
// launches took 18 us of host time each took 33 us per compiled launch (recorded, bf16 autocast, H200).
int64_t hostStepAfter(const Context& c, const HostChanges& what) {
  const HostWork& h = c.host;
  if (!h.measured) return 0;
  const int64_t rest = std::max<int64_t>(0, h.step_ns - h.model_ns - h.optimizer_ns);
  double model = static_cast<double>(h.model_ns);
  // Without phases the model's range is the whole step, and CUDA graphs replace all of it but what stays.
  const bool replaced = what.graphs && h.model_is_step;
  if (what.graphs) {
    // The host's own computing stays; so do its allocation calls outside PyTorch (a graph replays kernels and
    // copies, not cudaMalloc), unless the fixes allocate once. PyTorch's graphs allocate from their own pool.
    int64_t stays = h.model_is_step ? std::min(h.away_ns, h.model_ns) : 0;
    if (replaced && c.framework != Framework::kPyTorch && !what.allocate_once) stays += h.allocation_ns;
    if (replaced && !what.pin_once) stays += h.pinning_ns;  // nor does it pin host memory
    model = static_cast<double>(stays);
    model += static_cast<double>(graphCallsHost(c));
  } else {
    // Compiled without graphs, a DDP model's calls keep their work per parameter: three torchrun jobs' steps
    // stayed where they were eager (docs/multi-rank.md), so its fewer launches are not counted.
    const bool ddp_compiled = what.compiled && h.ddp_parameters > 0;
    if (h.model_launches > 0 && !ddp_compiled) {
      const int64_t launches = modelLaunchesAfter(h, what);
      model *= static_cast<double>(launches) / static_cast<double>(h.model_launches);
      if (what.compiled) {
        const bool half = h.half_precision || what.autocast;
        const int64_t per_launch = half ? kCompiledHalfLaunchHostNs : kCompiledLaunchHostNs;
        model = std::max(
            {model, static_cast<double>(launches * per_launch), static_cast<double>(h.compiled_calls_floor_ns)});
      }
    }
    if (what.checkpoint && !what.compiled)
      model += kEagerRecomputeHostFactor * static_cast<double>(h.blocks_forward_ns);
  }
  const double optimizer = optimizerHostAfter(c, what);
  const int64_t between = std::max<int64_t>(0, h.between_ns - what.input_wait_removed_ns);
  // Workers take the loading inside the steps off the main thread too: it waits for a batch already made. Where
  // no DataLoader range marks it, it is the host's stretches with no CUDA call (reading, staging a copy into
  // pinned memory), as far as the gain not already taken between the steps goes.
  int64_t loading = 0;
  if (what.input_wait_removed_ns > 0) {
    const int64_t inside = std::max<int64_t>(0, what.input_wait_removed_ns - (h.between_ns - between));
    loading = h.loading_ns > 0 ? std::min(rest, h.loading_ns) : std::min(h.away_ns, inside);
  }
  const int64_t allocating = what.allocate_once && !replaced ? h.allocation_ns : 0;  // still in the host's work
  const int64_t pinning = what.pin_once && !replaced ? h.pinning_ns : 0;
  const int64_t compiling = what.compile_once ? 0 : h.compile_ns;
  return std::max<int64_t>(
      0, std::llround(model + optimizer) + rest - loading + between - allocating - pinning + compiling);
}

double optimizerHostAfter(const Context& c, const HostChanges& what) {
  return static_cast<double>(c.host.optimizer_ns) / (what.fused_optimizer ? kFusedOptimizerHostDivisor : 1);
}

int64_t graphCallHost(const Context& c) {
  if (c.framework != Framework::kPyTorch || c.host.compiled_calls == 0) return 0;
  // One compiled call a step is an inference step's forward (compiledCalls).
  return c.host.compiled_calls == 1 ? kCompiledInferenceCallHostNs : kCompiledCallHostNs;
}

int64_t graphCallsHost(const Context& c) {
  if (c.framework != Framework::kPyTorch) return 0;
  return c.host.compiled_calls * graphCallHost(c) + c.host.ddp_parameters * kDdpCompiledHostPerParameterNs;
}

int64_t gpuSlack(const Context& c) {
  const int64_t host = hostStepAfter(c, HostChanges{});
  return host > 0 ? std::max<int64_t>(0, c.step.time_ns - host) : c.step.time_ns;
}

}  // namespace gpuscope::advisor
