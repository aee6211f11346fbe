#include "advisor/advice.h"

#include <algorithm>
#include <cmath>

#include "advisor/host_work.h"
#include "advisor/rule.h"
#include "analyzer/phases.h"
#include "analyzer/tensor_replay.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

namespace {

constexpr double kMostOfThePool = 0.95;  // no fix removes every kernel or every gap
// Kernels queued on a stream still start microseconds apart; replayed from a CUDA graph they start back to
// back. On the H100 loop traces (docs/benchmarks.md): 3.1-4.6 µs apart on average queued, 0.8-1.3 µs from
// graphs, so graphs take about 70 % of the queued gaps away.
constexpr double kGraphQueuedGapShare = 0.7;

bool hasFix(const std::vector<const Finding*>& findings, std::string_view kind, std::string_view setting = "") {
  return std::any_of(findings.begin(), findings.end(), [&](const Finding* f) {
    return std::any_of(f->fix.plan.begin(), f->fix.plan.end(), [&](const plan::Fix& x) {
      return x.kind == kind && (setting.empty() || x.text("setting") == setting);
    });
  });
}

// With PyTorch's tensors in the trace, the fixes that change what the tensors are replay together on their
// timeline: checkpointing the blocks, bf16 autocast of an fp32 model (activations half the size, plus the
// bf16 copies of the weights autocast caches), torch.compile (fused intermediates never reach memory). The
// other memory fixes act on other parts (optimizer state, growth): the largest counts. Without tensors, the
// largest memory gain comes off the peak.
int64_t predictPeak(const Context& c, const std::vector<const Finding*>& findings) {
  int64_t other = 0, largest = 0;
  for (const Finding* f : findings) {
    // With the allocator's own events the peak is what was in use; a pool's slack is reserved beside it, and
    // giving it back leaves that peak as it was (CuPy's pool: 9.8 GiB of slack beside a 1.0 GiB peak).
    if (c.memory.hasTensors() && f->id == "pool_fragmentation") continue;
    largest = std::max(largest, f->gain.memory_bytes);
    if (f->id != "activation_memory") other = std::max(other, f->gain.memory_bytes);
  }
  const bool torch = c.framework == Framework::kPyTorch;
  analysis::MemoryChanges what;
  what.checkpoint_blocks = hasFix(findings, "checkpoint");
  what.activation_scale = torch && hasFix(findings, "precision", "bf16_autocast") ? 0.5 : 1.0;
  what.drop_temporaries =
      torch && (hasFix(findings, "fusion") || hasFix(findings, "cuda_graphs") || hasFix(findings, "gemm_padding"));
  const std::optional<analysis::TensorReplay> replay = analysis::replayTensors(c.trace, c.memory, c.categories, what);
  if (!c.memory.hasTensors() || !replay || (what.checkpoint_blocks && replay->blocks == 0)) {
    return std::max<int64_t>(0, c.model.measured_peak_bytes - largest);
  }
  const int64_t weight_cache =
      what.activation_scale < 1.0
          ? c.categories.usage[static_cast<size_t>(analysis::MemoryCategory::kParameters)].at_device_peak_bytes / 2
          : 0;
  return std::max<int64_t>(0, replay->peak_bytes + weight_cache - other);
}

// The peak of the recording's first iteration where the plan is PyTorch's autocast or compile without
// checkpointing: under `gpuscope apply` the model's first call runs as the script wrote it (those fixes take over
// from its second call), so the program with the plan peaks no lower than that call did. Measured on H100,
// 2026-11-27: ViT-B/16 peaked at 3979 MiB under apply, in that call, against 2483 MiB predicted for its later
// steps. 0 where the first iteration is no warm-up (a recording that began mid-run).
int64_t firstCallAsWrittenPeak(const Context& c, const std::vector<const Finding*>& plan) {
  const bool from_second_call = hasFix(plan, "precision", "bf16_autocast") || hasFix(plan, "fusion") ||
                                hasFix(plan, "cuda_graphs") || hasFix(plan, "gemm_padding");
  if (c.framework != Framework::kPyTorch || !from_second_call || hasFix(plan, "checkpoint")) return 0;
  const analysis::DeviceMemory* d = c.memory.peakDevice();
  if (!d || c.iterations.list.empty() || !c.iterations.list.front().warmup) return 0;
  const analysis::Iteration& first = c.iterations.list.front();
  // Of a step of several micro-batches (gradient accumulation), the first alone: the compiled model runs the rest.
  int64_t end = first.end_ns;
  if (first.forwards > 1) {
    const auto second = std::find_if(c.phases.begin(), c.phases.end(), [&](const analysis::PhaseRange& r) {
      return r.phase == analysis::Phase::kForward && r.start > first.start_ns && r.start < first.end_ns;
    });
    if (second != c.phases.end()) end = second->start;
  }
  int64_t peak = 0;
  for (const analysis::MemoryPoint& p : d->timeline) {
    if (p.time_ns >= first.start_ns && p.time_ns < end) peak = std::max(peak, p.live_bytes);
  }
  return peak;
}

// What the fixes do to the host's work per step.
HostChanges hostChanges(const Context& c, const std::vector<const Finding*>& findings) {
  HostChanges h;
  h.graphs = hasFix(findings, "cuda_graphs");
  h.compiled = c.framework == Framework::kPyTorch &&
               (h.graphs || hasFix(findings, "fusion") || hasFix(findings, "gemm_padding"));
  if (hasFix(findings, "fusion")) {
    for (const analysis::FusionPattern* p : c.chainsApplyFuses()) h.launches_removed += p->launches_removed;
    // A count per step, rounded: chains cut at the steps' edges make the total a few launches short of whole steps.
    h.launches_removed = c.perStep(h.launches_removed + c.step.count / 2);
  }
  const bool channels_last = std::any_of(findings.begin(), findings.end(), [](const Finding* f) {
    return f->id == "convolution_layout" && !f->fix.plan.empty();
  });
  if (channels_last) h.launches_removed += c.perStep(static_cast<int64_t>(c.layoutTransforms().size()));
  h.checkpoint = hasFix(findings, "checkpoint");
  h.autocast = hasFix(findings, "precision", "bf16_autocast");
  h.fused_optimizer = hasFix(findings, "optimizer", "fused");
  for (const Finding* f : findings) {
    if (f->id == "input_pipeline") h.input_wait_removed_ns += f->gain.idle_ns;
    // CuPy's staging of its host arrays is the host's own work (a NumPy copy), gone with pinned arrays.
    if (f->id == "pageable_copies" && c.framework == Framework::kCuPy) h.input_wait_removed_ns += f->gain.idle_ns;
    if (f->id == "allocation_churn") h.allocate_once = true;
    if (f->id == "pinned_allocation") h.pin_once = true;
    if (f->id == "runtime_compilation") h.compile_once = true;
  }
  return h;
}

struct StepForecast {
  int64_t gpu_ns = 0;   // busy plus idle time after the fixes
  int64_t host_ns = 0;  // the host's work after the fixes (0: not measured)
};

// Whether the host waits for the GPU in every timed step outside the model's forward and backward (a
// synchronize, a copy to the host, `.item()` on its results): it then never runs a step ahead of the GPU. A wait
// inside the model is its own: compiled, the model breaks its graph there or traces it away. transformers' BERT
// reads its attention mask back in each eager forward; counted, that wait made a BERT fine-tune's plan 7.23 ms a
// step where `apply` ran it in 5.81 (bench/corpus/hf_bert_fp32_finetune, H200).
bool waitsEachStep(const Context& c) {
  const std::vector<analysis::Interval> model = c.modelRanges();
  int64_t waits = 0;
  for (int64_t end : c.sync_ends) waits += c.inTimedSteps(end) && !analysis::insideAny(model, end);
  return waits >= c.step.timed_count;
}

// The GPU time per step of the work CUDA graphs replay (the model's forward and backward, or the whole step
// without phase ranges), after the fixes left `busy_after` of the step's.
double replayedBusy(const Context& c, double busy, double busy_after) {
  if (c.host.model_is_step || busy <= 0) return busy_after;
  const int64_t model =
      c.phaseWork(analysis::Phase::kForward).kernel_ns + c.phaseWork(analysis::Phase::kBackward).kernel_ns;
  return busy_after * std::clamp(static_cast<double>(c.perStep(model)) / busy, 0.0, 1.0);
}

// Where the host waits for the GPU every step, a step replayed from CUDA graphs is no longer the longer of the
// host's work and the GPU's: the host's work from its wait to the model's call (the next input, the results'
// reading) and that call up to its graph's launch run beside none of the replayed work; the rest of the host's
// work (the later calls, the optimizer step launched behind them) is counted beside it. A torchvision ResNet-50
// classifying one picture at a time, reading each result, was forecast at 2.03 ms a picture from the GPU's side (its
// gaps between launches gone, the recording's share of them kept) and 0.74 from the host's; under `apply` it ran 1.39
// ms, its GPU busy 0.62 ms of each (bench/corpus/tv_classify_one_image_at_a_time, H200, 2026-12-03).
int64_t serialStep(const Context& c, const HostChanges& changes, int64_t host_ns, double replayed_busy) {
  const double host = static_cast<double>(host_ns), calls = static_cast<double>(graphCallsHost(c));
  const double optimizer = optimizerHostAfter(c, changes);
  // What the fixes leave of the host's work outside the calls and the optimizer bounds the work before the call
  // (a DataLoader's workers take the next batch's preparation off it).
  const double outside = std::max(0.0, host - calls - optimizer);
  // The first call's host time comes before its graph's launch too: a torchvision ResNet-18 and MobileNetV3-Small,
  // replayed at batch 1 with each result read, took 0.49 and 0.60 ms a call against 0.14 + 0.32 and 0.32 + 0.34 ms
  // of host and GPU time (H200, 2026-12-03, tests/bench/torch_graph_call_cost.py --sync-each).
  // (A DDP model's work per parameter is its backward's, behind the launch.)
  const double first_call = static_cast<double>(graphCallHost(c));
  const double before =
      std::min(static_cast<double>(c.host.before_model_ns), outside) + std::min(host - outside, first_call);
  return std::llround(before + std::max(host - before, replayed_busy));
}

// In a job, the most host work of its own (its code between CUDA calls: a sleep, I/O, Python) that another rank
// does beyond this one: the plan's fixes go to every rank alike and leave it, and the job's step waits for that
// rank. A rank that slept 20 ms a step kept its job 48 ms a step after a compile that left the rank analysed at
// 36 ms of host work (docs/multi-rank.md).
int64_t otherRanksOwnWork(const Context& c) {
  const analysis::RankStep* self = c.ownRank();
  if (!self || !c.job.hostWorkMeasured()) return 0;
  int64_t most = 0;
  for (const analysis::RankStep& r : c.job.ranks) most = std::max(most, r.away_ns - self->away_ns);
  return most;
}

// In a job, what this rank waits alone inside its collectives per step for the other ranks that the changes take
// away: none of it is GPU work of its own. Waiting for another rank's own extra work (a sleep, its metrics) goes
// whole: the host's forecast carries that work (otherRanksOwnWork). The rest is the ranks' pace, their hosts
// issuing the same calls one behind the other, and the fixes, made on every rank alike, shorten it as much as
// they shorten this host's work. What the other ranks' extra GPU work explains stays. Counted in both forecasts,
// a rank 20 ms late made a plan's forecast 43.1 ms a step where it ran at 30.9 (bench/corpus/ddp_gpt2_late_rank,
// 2 x H100, 2026-11-28); kept whole, a host-bound XLM-R job's rank 0, which waited 32.1 ms a step for rank 1 (the
// same CUDA calls, its host behind), was forecast at 42.1 ms a step under CUDA graphs by its communication
// kernels' spinning, where it ran at 26.8 (bench/corpus/ddp_xlmr_classify, 2 x H200, 2026-11-29).
int64_t waitTakenAway(const Context& c, const HostChanges& changes) {
  const analysis::RankStep* self = c.ownRank();
  if (!self) return 0;
  const auto gpuWork = [](const analysis::RankStep& r) { return r.compute_ns + r.comm_overlapped_ns + r.copy_ns; };
  int64_t more = 0;
  for (const analysis::RankStep& r : c.job.ranks) more = std::max(more, gpuWork(r) - gpuWork(*self));
  // Waiting beside its own compute costs the step nothing: only the communication alone is the step's.
  const int64_t alone = std::max<int64_t>(0, std::min(self->wait_ns, self->comm_alone_ns) - more);
  const int64_t own_work = std::min(alone, otherRanksOwnWork(c));
  const int64_t today = hostStepAfter(c, HostChanges{});
  if (today <= 0) return own_work;
  const double shorter =
      1.0 - std::clamp(static_cast<double>(hostStepAfter(c, changes)) / static_cast<double>(today), 0.0, 1.0);
  return own_work + std::llround(shorter * static_cast<double>(alone - own_work));
}

// The host's work after the changes, never more than today's step would allow: the host's work is averaged
// over the steady steps and the step is their median period, so where a few slow steps make the average
// longer than the step, the forecast is scaled down by as much (with no change, it is the step itself). In a job
// the other ranks' own extra work is added.
int64_t hostAfter(const Context& c, const HostChanges& changes) {
  const int64_t others = otherRanksOwnWork(c);
  const int64_t after = hostStepAfter(c, changes) + others;
  const int64_t today = hostStepAfter(c, HostChanges{}) + others;
  if (today <= c.step.time_ns || today <= 0) return after;
  return std::llround(static_cast<double>(after) * static_cast<double>(c.step.time_ns) / static_cast<double>(today));
}

// The step is GPU busy time plus GPU idle time, and each fix wins from one or both: kernel time (fusion,
// precision, padding) or idle time (CUDA graphs, input workers, fewer synchronisations). Within a pool the
// gains add up, since the fixes act on different kernels or gaps, but never to more than the pool holds.
// CUDA graphs also shorten the gaps between kernels that were queued. Time a fix costs (recomputation) runs
// kernels as the other fixes leave them, so it shrinks with them. The host's work after the fixes is
// forecast beside it: the step takes the longer of the two. In a job, the wait for the other ranks that the fixes
// take away comes off (waitTakenAway); another rank's own work is in the host's forecast.
StepForecast forecast(const Context& c, const std::vector<const Finding*>& findings) {
  const HostChanges changes = hostChanges(c, findings);
  const double waiting = static_cast<double>(waitTakenAway(c, changes));  // inside the collectives' busy time
  const double step = std::max(0.0, static_cast<double>(c.step.time_ns) - waiting);
  const double busy = std::clamp(static_cast<double>(c.perTimedStep(c.timeline.busy_ns)) - waiting, 0.0, step);
  double busy_saved = 0, idle_saved = 0, extra = 0;
  // The gaps between a chain's kernels are launch-bound gaps: with CUDA graphs they are counted there.
  const bool graphs = changes.graphs;
  for (const Finding* f : findings) {
    if (f->gain.host_side) continue;  // the host's work: forecast on its own
    if (!(graphs && f->id == "fusable_chains")) idle_saved += static_cast<double>(f->gain.idle_ns);
    busy_saved += static_cast<double>(f->gain.time_ns - f->gain.idle_ns);
    extra += static_cast<double>(f->gain.extra_time_ns);
  }
  // The recording's own cost in the gaps between launches goes with the launches, and so do the launch gaps
  // where graphs come for another reason than them (the host setting the pace after the other fixes): a BERT
  // fine-tune's 0.62 ms a step, too few for a finding of their own, were kept in its forecast (7.21 ms a step;
  // `apply` ran it in 5.81: bench/corpus/hf_bert_fp32_finetune, H200).
  if (graphs) idle_saved += static_cast<double>(c.perTimedStep(c.timeline.idle.recording_ns));
  const bool launch_finding =
      std::any_of(findings.begin(), findings.end(), [](const Finding* f) { return f->id == "launch_bound"; });
  if (graphs && !launch_finding) idle_saved += static_cast<double>(c.launchGaps());
  if (graphs) idle_saved += kGraphQueuedGapShare * static_cast<double>(c.perTimedStep(c.timeline.idle.queued_ns));
  // PyTorch's CUDA graphs hold the model's tensors in a pool of their own, allocated once: the GPU's idle while the
  // host allocated them, and freed them again, goes with the graphs. A ResNet-18 that emptied PyTorch's cache every
  // step ran 4.7 ms a step with graphs against 17.9-26.5 as written (bench/corpus/pt_empty_cache_every_step, H200,
  // 2026-11-28).
  if (graphs && c.framework == Framework::kPyTorch && !changes.allocate_once) {  // by hand, it is all counted
    idle_saved += c.modelAllocationShare() * static_cast<double>(c.perTimedStep(c.timeline.idle.allocating_ns));
  }
  busy_saved = std::min(busy_saved, kMostOfThePool * busy);
  idle_saved = std::min(idle_saved, kMostOfThePool * (step - busy));
  const double busy_left = busy > 0 ? (busy - busy_saved) / busy : 1.0;
  int64_t host = hostAfter(c, changes);
  if (graphs && host > 0 && waitsEachStep(c))
    host = serialStep(c, changes, host, replayedBusy(c, busy, busy - busy_saved + extra * busy_left));
  return {std::llround(step - busy_saved - idle_saved + extra * busy_left), host};
}

}  // namespace

plan::Outcome predictOutcome(const Context& c, const std::vector<const Finding*>& findings) {
  const StepForecast f = forecast(c, findings);
  plan::Outcome p;
  p.step_time_ns = std::max(f.gpu_ns, f.host_ns);
  p.peak_memory_bytes = predictPeak(c, findings);
  return p;
}

namespace {

// Where the other fixes would leave the step waiting for its host, the launch-bound rule looks ahead.
// For the time goal it looks past the fixes of that plan only: a checkpointing that costs time (and adds GPU work)
// is not in it, and counting it hid a BERT fine-tune's host-bound step after bf16 and fusion. Its fix, CUDA graphs,
// replays one step's launches: where the steps differ it stays silent and says why in `notes`.
std::optional<Finding> foreseeHostBound(const Context& c, std::vector<const Finding*> findings, Goal goal,
                                        std::vector<std::string>& notes) {
  if (goal == Goal::kTime) std::erase_if(findings, [](const Finding* f) { return f->gain.extra_time_ns > 0; });
  if (c.framework == Framework::kJax || !c.host.measured || hasFix(findings, "cuda_graphs")) return std::nullopt;
  if (!c.stepsRepeat()) {
    notes.push_back(
        "the steady steps do not launch the same kernels with the same grids from one step to the next (shapes "
        "that change, or data-dependent branches): the plan foresees no CUDA graphs after its other fixes, since "
        "a graph replays one step's launches");
    return std::nullopt;
  }
  const StepForecast f = forecast(c, findings);
  HostChanges graphs = hostChanges(c, findings);
  graphs.graphs = true;
  graphs.compiled = c.framework == Framework::kPyTorch;
  return hostBoundAfterFixes(c, f.gpu_ns, f.host_ns, hostAfter(c, graphs));
}

std::string predictionBasis() {
  return "the measured step split into GPU busy and idle time; each fix's estimated gain taken from the kernel time "
         "or the idle time it acts on, gains in one pool added (at most 95 % of it), plus the time a fix costs scaled "
         "to the kernels' time after the other fixes; peak memory: PyTorch's tensors replayed with checkpointing, "
         "bf16 activations and compiled intermediates as the fixes change them (else the peak less the largest "
         "memory gain); with CUDA graphs the launches' gaps go whole (the recording's share of them too); the step is "
         "no shorter than the host's work after the fixes: " +
         std::string(kHostFloorBasis) +
         "; where the host waits for the GPU every step, under CUDA graphs its work from that wait to the model's "
         "call, and that call's own host time, run beside none of the replayed GPU work and are added to it";
}

// The PyTorch bridge changes a model's forward (compiles it, checkpoints its blocks, runs it under autocast):
// these fixes need an nn.Module, the others (TF32, a fused optimizer, allocator and loader settings) do not.
bool needsModel(const plan::Fix& fix) {
  return fix.kind == "fusion" || fix.kind == "cuda_graphs" || fix.kind == "gemm_padding" || fix.kind == "checkpoint" ||
         (fix.kind == "precision" && fix.text("setting") == "bf16_autocast");
}

// The fixes the bridge makes with torch.compile.
bool compiled(const plan::Fix& fix) {
  return fix.kind == "fusion" || fix.kind == "cuda_graphs" || fix.kind == "gemm_padding";
}

// What of the program decides which fixes `gpuscope apply` can make to it.
struct ApplyScope {
  Framework framework = Framework::kCuda;
  bool model = false;          // an nn.Module ran (or no bridge to say)
  bool sharded = false;        // FSDP shards the model
  bool kept_outputs = false;   // an inference loop keeps its model's outputs (keptModelOutputs)
  bool shapes_change = false;  // the steps' shapes change: kernels compiled in the steps, steps that differ
  int64_t forward_syncs = 0;   // the model's forward waits for the GPU this many times a call (syncsPerForward)
};

// From this many host synchronisations in each forward, gpuscope leaves the compile to the user. A transformers
// BERT synchronises once a forward (its attention mask's check, which its code skips when compiled) and compiled
// 4x faster; an early-exit MLP that synchronised 6 times (bench/corpus/trap_data_dependent) and the SyncBatchNorm
// DeepLabV3 (183) both ran slower compiled, and had their compile rolled back under `gpuscope apply`.
constexpr int64_t kForwardSyncsNoCompile = 4;

// Whether a PyTorch program that runs its model without a backward keeps the model's outputs from call to call:
// the device memory that grows over the run (memory_leak's allocations never freed) is mostly made inside the
// model's forward ranges. Graph replays write each call's outputs over the last ones, so the bridge rolls CUDA
// graphs back on such a program (apply.py, _kept): a segmentation eval that kept every batch's logits had them
// aliased under graphs, 38.7 GiB of them in 23.6 (bench/corpus/pt_eval_keeps_outputs, H200, 2026-11-28).
bool keptModelOutputs(const Context& c) {
  if (c.framework != Framework::kPyTorch || !c.memory.leak.growing) return false;
  std::vector<analysis::PhaseRange> forwards;
  for (const analysis::PhaseRange& p : c.phases) {
    if (p.phase == analysis::Phase::kBackward) return false;  // training: its outputs feed the backward
    if (p.phase == analysis::Phase::kForward) forwards.push_back(p);
  }
  int64_t inside = 0, all = 0;
  for (int32_t i : c.memory.leak.suspects) {
    const analysis::Allocation& a = c.memory.allocations[static_cast<size_t>(i)];
    all += a.bytes;
    const bool in_forward = std::any_of(forwards.begin(), forwards.end(), [&](const analysis::PhaseRange& p) {
      return p.start <= a.alloc_ns && a.alloc_ns < p.end;
    });
    if (in_forward) inside += a.bytes;
  }
  return all > 0 && inside * 2 > all;
}

// How many times the model's forward waits for the GPU, at the median of its annotated forwards: data-dependent
// operations (.item(), nonzero, indexing by a boolean mask) read the device back. torch.compile breaks its graph at
// each, and CUDA graphs capture only the pieces between, run one by one with the host waiting at each: a DDP
// DeepLabV3 whose SyncBatchNorm layers synchronised 193 times a forward ran 150-160 ms a step compiled
// (mode 'reduce-overhead') against 100-115 as written (2 x H200, 2026-11-30).
int64_t syncsPerForward(const Context& c) {
  const std::vector<int64_t>& syncs = c.sync_ends;  // sorted
  std::vector<int64_t> counts;
  for (const analysis::PhaseRange& p : c.phases) {
    if (p.phase != analysis::Phase::kForward) continue;
    counts.push_back(std::lower_bound(syncs.begin(), syncs.end(), p.end) -
                     std::lower_bound(syncs.begin(), syncs.end(), p.start));
  }
  if (counts.empty()) return 0;
  std::nth_element(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(counts.size() / 2), counts.end());
  return counts[counts.size() / 2];
}

// Whether gpuscope applies the fix as it stands: the PyTorch bridge applies every kind but attention written
// out (the model's code must change; cuDNN's attention switched off is a setting), optimizer settings other than fused
// (another optimizer), CUDA graphs under gradient accumulation, where the program keeps its model's outputs or
// hands a model back what it returned,
// torch.compile of a model FSDP shards and, where no nn.Module ran, those made to a model's forward; the runtime for
// CUDA C++ programs applies fusion and checkpointing; JAX and CuPy programs get neither.
bool appliedByGpuscope(const plan::Fix& fix, const ApplyScope& scope) {
  // XLA's allocator variables: `gpuscope apply` sets them before a JAX program starts (gpuscope_jax/apply.py).
  if (fix.kind == "allocator" && fix.text("variable").starts_with("XLA_")) return scope.framework == Framework::kJax;
  if (scope.framework == Framework::kJax || scope.framework == Framework::kCuPy) return false;  // no runtime
  if (scope.framework != Framework::kPyTorch) return fix.kind == "fusion" || fix.kind == "checkpoint";
  if ((fix.kind == "attention" && fix.text("setting") != "no_cudnn_sdp") || (needsModel(fix) && !scope.model) ||
      ((scope.sharded || scope.shapes_change || scope.forward_syncs >= kForwardSyncsNoCompile) && compiled(fix))) {
    return false;
  }
  if (fix.kind == "cuda_graphs" && (fix.param("forwards_per_step") || fix.param("state_carried") || scope.kept_outputs))
    return false;
  return fix.kind != "optimizer" || fix.text("setting") == "fused";
}

// Why a finding's fixes are left to the user: the first reason of appliedByGpuscope that holds for them.
std::string byHandReason(const std::vector<plan::Fix>& fixes, const ApplyScope& scope) {
  auto any = [&](auto predicate) { return std::any_of(fixes.begin(), fixes.end(), predicate); };
  if (!scope.model && any(needsModel)) {
    return "by hand: no nn.Module ran (the step is a plain function), and gpuscope apply changes a model's forward; "
           "torch.compile the step function yourself";
  }
  if (scope.sharded && any(compiled)) {
    return "by hand: gpuscope apply does not compile a model FSDP shards (torch.compile recompiled it block by block "
           "and ran slower); compile each sharded block yourself";
  }
  if (scope.shapes_change && any(compiled)) {
    return "by hand: the steps' shapes change from one step to the next (kernels are compiled inside them), and "
           "gpuscope apply runs its compiled forward only for the shapes it compiled; give the steps a few fixed "
           "shapes first, or torch.compile(model, dynamic=True) yourself";
  }
  if (scope.forward_syncs >= kForwardSyncsNoCompile && any(compiled)) {
    return "by hand: the model's forward waits for the GPU " + std::to_string(scope.forward_syncs) +
           " times a call (data-dependent operations: .item(), nonzero, indexing by a boolean mask, SyncBatchNorm's "
           "statistics), where torch.compile breaks its graph and CUDA graphs capture only the pieces between, so "
           "gpuscope apply does not compile it; take those synchronisations out of the forward first";
  }
  if (scope.kept_outputs && any([](const plan::Fix& f) { return f.kind == "cuda_graphs"; })) {
    return "by hand: the program keeps its model's outputs from call to call (the memory that grows is made in the "
           "model's forward), and each CUDA graph replay writes over the last call's outputs; clone what you keep "
           "(or move it to the host) before using graphs";
  }
  return "by hand: gpuscope apply cannot make this change (the fix above shows how)";
}

int64_t netTimeGain(const Finding& f) { return f.gain.time_ns - f.gain.extra_time_ns; }

// Whether a fix serves the goal on its own estimate: a time plan never takes a fix that costs time or wins
// none (recomputation, a memory-only setting), a memory plan one that saves no memory.
bool servesGoal(const Finding& f, Goal goal) {
  switch (goal) {
    case Goal::kTime: return netTimeGain(f) > 0;
    case Goal::kMemory: return f.gain.memory_bytes > 0;
    case Goal::kBoth: return netTimeGain(f) > 0 || f.gain.memory_bytes > 0;
  }
  return false;
}

// Whether a predicted outcome is worse than today for the goal: a slower step (time, both) or a larger
// peak (memory, both).
bool worseForGoal(const plan::Outcome& predicted, const plan::Outcome& measured, Goal goal) {
  const bool slower = predicted.step_time_ns > measured.step_time_ns;
  const bool larger = predicted.peak_memory_bytes > measured.peak_memory_bytes && measured.peak_memory_bytes > 0;
  return goal == Goal::kTime ? slower : goal == Goal::kMemory ? larger : slower || larger;
}

// The least a plan must win, of the step (time) or the peak (memory), to be applied: a plan that wins less is
// within what two runs of one program differ by (1-3 % GPU-bound; far more host-bound, docs/advisor-evaluation.md),
// so `apply`'s check cannot tell it from noise, and its compile costs the program's warm-up. pt_leak_kept_graph's
// plan (2.39 -> 2.30 ms a step) was rolled back as slower by its check, fix by fix too (H200, 2026-11-28).
constexpr double kMinPlanGain = 0.05;

bool worthApplying(const plan::Outcome& predicted, const plan::Outcome& measured, Goal goal) {
  auto won = [](int64_t after, int64_t before) {
    return before > 0 && static_cast<double>(before - after) >= kMinPlanGain * static_cast<double>(before);
  };
  const bool faster = won(predicted.step_time_ns, measured.step_time_ns);
  const bool smaller = won(predicted.peak_memory_bytes, measured.peak_memory_bytes);
  return goal == Goal::kTime ? faster : goal == Goal::kMemory ? smaller : faster || smaller;
}

// The findings whose fixes go into the plan: those gpuscope applies without a code change that serve the goal
// on their own estimate; then, while the plan as a whole is predicted worse than today (the host's work
// after the fixes can exceed the step), the one that wins least is left out. Sets each finding's plan_status.
// Today is the step as the program runs unrecorded where the bridge timed it: the forecast's host work leaves the
// recording's cost out, and a GRU seq2seq recorded at 48.2 ms a step (39.1 unrecorded, 24.2-30.2 plain) had its
// compile forecast at 40.9, a gain against the recorded step, where it ran 46.3-48.2 (bench/corpus/
// pt_gru_seq2seq_teacher_forcing, H200, 2026-12-02).
std::vector<const Finding*> choosePlan(const Context& c, std::vector<Finding>& findings, Goal goal,
                                       plan::Outcome measured) {
  measured.step_time_ns = c.unrecordedStep();
  std::vector<Finding*> chosen;
  ApplyScope scope;
  scope.framework = c.framework;
  scope.model = c.framework != Framework::kPyTorch || c.modelRan();
  // torch.compile of a GPT-2 sharded by FSDP2 recompiled for each block and ran slower under `gpuscope apply`
  // (2 x H100, 2026-11-26: rolled back, 87.4 ms a step plain against 123.0 under apply).
  scope.sharded = c.dataParallel() == DataParallel::kFsdp;
  scope.kept_outputs = keptModelOutputs(c);
  scope.forward_syncs = c.framework == Framework::kPyTorch ? syncsPerForward(c) : 0;
  // A DistilBERT fine-tune padded to each batch's longest review: cuDNN compiled for each new length, and the
  // plan's compile, run only for the shapes it had compiled, was rolled back as slower under `apply`
  // (bench/corpus/hf_distilbert_dynamic_padding, H200, 2026-11-29).
  scope.shapes_change =
      c.framework == Framework::kPyTorch && !c.stepsRepeat() &&
      std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.id == "runtime_compilation"; });
  for (Finding& f : findings) {
    auto applied = [&](const plan::Fix& fix) { return appliedByGpuscope(fix, scope); };
    if (f.fix.plan.empty() || !std::any_of(f.fix.plan.begin(), f.fix.plan.end(), applied)) {
      f.plan_status = byHandReason(f.fix.plan, scope);
    } else if (!servesGoal(f, goal)) {
      f.plan_status = goal == Goal::kMemory ? "left out of the memory plan: it saves no memory"
                      : f.gain.extra_time_ns > 0
                          ? "left out of the time plan: it costs time (gpuscope advise --goal memory plans it)"
                          : "left out of the time plan: it wins no time";
    } else {
      f.plan_status = "in the plan";
      chosen.push_back(&f);
    }
  }
  auto pointers = [&] { return std::vector<const Finding*>(chosen.begin(), chosen.end()); };
  // Predicted once for each set of fixes tried (its peak may replay every tensor of the run).
  plan::Outcome predicted = chosen.empty() ? plan::Outcome{} : predictOutcome(c, pointers());
  while (!chosen.empty() && worseForGoal(predicted, measured, goal)) {
    auto least = std::min_element(chosen.begin(), chosen.end(), [&](const Finding* x, const Finding* y) {
      return goal == Goal::kMemory ? x->gain.memory_bytes < y->gain.memory_bytes : netTimeGain(*x) < netTimeGain(*y);
    });
    (*least)->plan_status =
        "left out of the " + std::string(toString(goal)) +
        " plan: with it the plan is predicted worse than today (the host's work after the fixes" +
        (measured.step_time_ns < c.step.time_ns
             ? ", against the step unrecorded: " + analysis::formatDuration(measured.step_time_ns) +
                   " a step, the recorded step scaled as the PyTorch bridge's steps ran with the recording paused)"
             : ")");
    chosen.erase(least);
    if (!chosen.empty()) predicted = predictOutcome(c, pointers());
  }
  if (!chosen.empty() && !worthApplying(predicted, measured, goal)) {
    for (Finding* f : chosen) {
      f->plan_status = "left out of the " + std::string(toString(goal)) +
                       " plan: the plan as a whole would win under " + analysis::formatShare(kMinPlanGain) +
                       ", less than two runs of a program differ by, and its check could not tell it from that";
    }
    chosen.clear();
  }
  return pointers();
}

// For the time goal, a fix that trades time for memory and frees under 1 % of the GPU's memory lets no larger
// batch or model fit: a note, not a finding. (A ResNet-18 whose activations were two thirds of a 646 MiB peak drew
// a "high" checkpointing finding that would have freed 199 MiB of an 80 GiB H100.) Unknown capacity: kept.
bool smallMemoryTrade(const Context& c, const Finding& f) {
  if (f.id != "activation_memory" && f.id != "optimizer_memory") return false;
  return f.gain.memory_bytes * 100 < c.peakDeviceCapacity();
}

// The GPU idle for much of the step while its host was away from CUDA (gaps of 1 ms or more before a late
// launch: Python, CPU work), with no rule that names why: said, not guessed at. A 2-rank GPT-2 over padded
// batches of a new length every step (2 x H100) idled its GPUs most of a 268 ms step that way, and no finding
// spoke of it.
std::optional<std::string> unexplainedHostNote(const Context& c, const std::vector<Finding>& findings) {
  int64_t idle = c.perTimedStep(c.timeline.idle.host_busy_ns);
  for (const Finding& f : findings) {
    if (f.id == "input_pipeline" || f.id == "launch_bound" || f.id == "host_bound_after_fixes" || f.id == "host_sync") {
      return std::nullopt;
    }
    // Compiling is host work a rule names: what is left beside it may still be unexplained.
    if (f.id == "runtime_compilation") idle -= f.gain.idle_ns;
  }
  if (!c.step.from_iterations || c.step.time_ns <= 0 || c.shareOfStep(idle) < 0.25) return std::nullopt;
  return "the GPU idles " + analysis::formatDuration(idle) + " " + perStepWords(c) + " (" +
         analysis::formatShare(c.shareOfStep(idle)) +
         " of the step) while its host works for 1 ms or more at a time without a CUDA call; no rule here names "
         "the cause (the program's own Python or CPU work inside the step): profile the host over a few steps "
         "(py-spy record --native) to see where it goes";
}

// Fixes that only shorten kernels (bf16 or TF32 GEMMs, padded GEMMs, channels-last convolutions) win nothing
// where, with the other findings' fixes, the step waits for its host. Such a finding wins under this share of
// its own estimate in the forecast with every fix, and without it: not a finding for the time goal, a note. A
// ResNet-18 fine-tuned at batch 4 drew an fp32 finding for 0.52 ms of its 12.3 ms step, while its host's work
// after CUDA graphs (4.4 ms a step) was far above its GPU's (2.8 ms); and the plan's autocast, in force, made
// its evaluation calls slower (bench/corpus/tv_transfer_learning_tutorial, H200, 2026-12-01).
constexpr double kHostBoundKernelFixShare = 0.25;

void setAsideHostBoundKernelFixes(const Context& c, std::vector<Finding>& findings, std::vector<std::string>& notes) {
  std::vector<const Finding*> every;
  for (const Finding& f : findings) every.push_back(&f);
  const StepForecast with = forecast(c, every);
  std::vector<const Finding*> set_aside;
  for (const Finding* f : every) {
    if (f->id != "fp32_gemm" && f->id != "gemm_alignment" && f->id != "convolution_layout") continue;
    std::vector<const Finding*> others = every;
    std::erase(others, f);
    const StepForecast without = forecast(c, others);
    const int64_t won = std::max(without.gpu_ns, without.host_ns) - std::max(with.gpu_ns, with.host_ns);
    if (static_cast<double>(won) >= kHostBoundKernelFixShare * static_cast<double>(f->gain.time_ns)) continue;
    const std::string waits = analysis::formatDuration(with.host_ns) + " of host work " + perStepWords(c) +
                              " against " + analysis::formatDuration(with.gpu_ns) + " on the GPU";
    const std::string wins = won > 0 ? analysis::formatDuration(won) : std::string("nothing");
    notes.push_back(f->title +
                    ": not a finding for the time goal, as with the other findings' fixes the step waits "
                    "for its host (" +
                    waits + "): it would win " + wins + " of the " + analysis::formatDuration(f->gain.time_ns) +
                    " it saves on the GPU");
    set_aside.push_back(f);
  }
  std::erase_if(findings,
                [&](const Finding& f) { return std::find(set_aside.begin(), set_aside.end(), &f) != set_aside.end(); });
}

// Where analysis::recordingCostPerLaunch took its figure from.
std::string recordingCostBasis(const Context& c) {
  const std::optional<int64_t> machine = analysis::measuredRecordingCost(c.trace);
  const std::string machine_basis = machine ? "measured after the program on this machine: an empty kernel launched "
                                              "plain and recorded (gpuscope-calibrate)"
                                            : "an H100 host's figure (tests/bench/launch_cost.cu): this trace holds no "
                                              "measure of its own";
  // The process's own figure is taken where it is more than the machine's (analysis::recordingCostPerLaunch).
  const std::optional<analysis::PausedStepsCost>& own = c.paused_cost;
  if (!own || own->per_launch_ns < machine.value_or(analysis::kRecordingCostPerLaunchNs)) return machine_basis;
  return "measured in this process, at least: " + std::to_string(own->steps) + " steps ran " +
         analysis::formatDuration(own->recorded_step_ns) + " a step recorded and " +
         analysis::formatDuration(own->paused_step_ns) +
         " with the recording paused (gpuscope's PyTorch bridge; CUPTI costs something even paused)";
}

// Where the bridge paused the recording, and how fast the program's own steps ran there, by the bridge's clock in
// the process: its pace with the recording's cost gone, beside the recorded step the figures are taken from.
std::string pausedNote(const Context& c, const analysis::Interval& paused) {
  std::string note = "gpuscope's PyTorch bridge paused the recording for " + analysis::formatDuration(paused.length()) +
                     " of this run, to time steps unrecorded: their kernels are not in the trace, and those steps are "
                     "left out of the step";
  const std::optional<analysis::PausedStepsCost>& own = c.paused_cost;
  if (!own) {
    // Said, not guessed at: a Llama trained with gradient accumulation ran 116.6 ms a step recorded and 69.4 plain,
    // where the machine's figure took 7.3 ms a step off (bench/corpus/hf_llama_grad_accum_eval, H200, 2026-12-01).
    const std::optional<analysis::PausedSteps> steps = analysis::pausedSteps(c.trace, c.session);
    return note + "; it has no figures of the steps it timed (" +
           (steps && steps->steps == 0
                ? std::string("the program ended before as many recorded steps were timed after the pause as before")
                : std::string("the pause did not take, or no kernels were launched before it")) +
           "), so what recording cost this process is not measured: only the machine's figure per launch is taken "
           "off, which a PyTorch process can exceed several times, and the step and its idle time may be too long";
  }
  note += "; by the bridge's clock, " + std::to_string(own->steps) + " steps ran " +
          analysis::formatDuration(own->paused_step_ns) + " a step paused and " +
          analysis::formatDuration(own->recorded_step_ns) + " recorded around them";
  if (own->drifted) {
    note += " (the recorded steps before and after the pause differ by more than " +
            analysis::formatShare(analysis::kRecordedStepsAgree - 1.0) +
            ": the program's own pace changed meanwhile, so no recording cost is read from them)";
  }
  return note;
}

std::vector<std::string> notesOn(const Context& c) {
  std::vector<std::string> notes;
  if (c.device == analysis::kNone) notes.push_back("the trace holds no GPU work: nothing to advise on");
  if (!c.step.from_iterations && c.device != analysis::kNone) {
    notes.push_back(
        "no repeating iterations were found: figures are for the whole run (mark each step with an "
        "NVTX range named 'step' to get per-step advice)");
  }
  if (!c.categories.phases_found && !c.memory.allocations.empty()) {
    notes.push_back(
        "no forward/backward/optimizer NVTX ranges: memory is not split into activations, gradients "
        "and optimizer state, so activation_memory and optimizer_memory did not run; the allocator's rules (leaks, "
        "fragmentation, preallocation, churn, out-of-memory risk) read the allocations themselves");
  }
  if (const int64_t idle = c.perTimedStep(c.timeline.idle.recording_ns); idle > 0 || c.host.recording_ns > 0) {
    notes.push_back("recording added about " + analysis::formatDuration(c.recording_cost_per_launch_ns) +
                    " of host time to each kernel launch (" + recordingCostBasis(c) +
                    "); the figures below are corrected for it: " + analysis::formatDuration(idle) +
                    " of launch-bound idle and " + analysis::formatDuration(c.host.recording_ns) + " of host work " +
                    perStepWords(c) + " taken off");
  }
  if (const analysis::Interval& w = c.iterations.as_written; w.end > w.start) {
    notes.push_back("gpuscope apply's timing check ran the model as the script wrote it for " +
                    analysis::formatDuration(w.end - w.start) +
                    " of this run (its own calls, neither the program as written nor as applied): left out of the "
                    "steps and the peak");
  }
  if (const analysis::Interval& p = c.iterations.paused; p.end > p.start) notes.push_back(pausedNote(c, p));
  if (std::optional<std::string> graphs = betweenGraphsNote(c)) notes.push_back(std::move(*graphs));
  if (std::optional<std::string> whole = wholeGraphsNote(c)) notes.push_back(std::move(*whole));
  if (std::optional<std::string> nodes = nodeLevelGraphsNote(c)) notes.push_back(std::move(*nodes));
  if (std::optional<std::string> host = slowerHostNote(c)) notes.push_back(std::move(*host));
  for (const std::string& w : c.stats.warnings) notes.push_back("trace: " + w);
  return notes;
}

// With the allocator's own events (PyTorch's, CuPy's) the peak counts what was in use; the pool held more.
std::string memoryBasis(const Context& c) {
  if (c.preallocated_bytes > 0) {
    const std::string reserved = "reserved from CUDA, of which XLA's allocator took " +
                                 analysis::formatBytes(c.preallocated_bytes) + " up front; in use";
    if (c.xla_peak_in_use_bytes == 0) return reserved + ": unknown (XLA hands its memory out itself)";
    return reserved + " at its peak: " + analysis::formatBytes(c.xla_peak_in_use_bytes) + " (XLA's memory_stats())";
  }
  const analysis::DeviceMemory* top = c.memory.peakDevice();
  if (!c.memory.hasTensors() || !top) return "peak device memory";
  const bool cupy = c.framework == Framework::kCuPy;  // its bridge's events: the memory pool's blocks
  const std::string what = cupy ? "peak of CuPy's arrays" : "peak of PyTorch's tensors";
  const std::string pool = cupy ? "the memory pool" : "the caching allocator";
  if (top->cuda_peak_bytes == 0) return what + " (what " + pool + " reserved is not in the trace)";
  return what + " (" + pool + " reserved " + analysis::formatBytes(top->cuda_peak_bytes) + " from CUDA)";
}

// A run that failed shows what happened, not what a fix would win: its steps may have stopped short, its kernels
// may be a crash's, and `apply` of a plan from it would be tried on a program that does not run.
void withholdPredictions(Advice& a) {
  a.predicted = a.measured;
  a.plan_predicted = a.measured;
  a.plan_fixes = 0;
  a.prediction_basis = "none: the recorded run failed (" + a.run_failed + ")";
  for (Finding& f : a.findings) f.plan_status = "in no plan: the recorded run failed";
}

}  // namespace

Advice advise(const Context& c, Goal goal) {
  Advice a;
  a.goal = goal;
  a.trace = c.trace.path;
  a.framework = std::string(toString(c.framework));
  if (c.device != analysis::kNone) a.device = c.trace.deviceLabel(c.device);
  a.step_basis = c.step.basis;
  a.per_step = c.step.from_iterations;
  a.measured = {c.step.time_ns, c.model.measured_peak_bytes};
  a.memory_basis = memoryBasis(c);
  std::vector<std::string> set_aside;  // what the goal set aside, and why the look-ahead stayed silent
  for (const Rule& rule : allRules()) {
    if (c.device == analysis::kNone) break;
    if (!rule.check) continue;  // fired by the forecast below
    std::optional<Finding> f = rule.check(c);
    if (f && goal == Goal::kTime && smallMemoryTrade(c, *f)) {
      set_aside.push_back(f->title +
                          ": not a finding for the time goal, as it frees under 1 % of the GPU's memory "
                          "(--goal memory reports it)");
    } else if (f) {
      a.findings.push_back(std::move(*f));
    }
  }
  if (c.device != analysis::kNone) {
    std::vector<const Finding*> every;
    for (const Finding& f : a.findings) every.push_back(&f);
    if (std::optional<Finding> f = foreseeHostBound(c, every, goal, set_aside)) a.findings.push_back(std::move(*f));
  }
  if (goal == Goal::kTime) setAsideHostBoundKernelFixes(c, a.findings, set_aside);
  std::stable_sort(a.findings.begin(), a.findings.end(),
                   [](const Finding& x, const Finding& y) { return x.weight() > y.weight(); });
  std::vector<const Finding*> every;
  for (const Finding& f : a.findings) every.push_back(&f);
  a.predicted = predictOutcome(c, every);
  a.prediction_basis = predictionBasis();
  const std::vector<const Finding*> chosen = choosePlan(c, a.findings, goal, a.measured);
  a.plan_fixes = static_cast<int>(chosen.size());
  a.plan_predicted = chosen == every ? a.predicted : predictOutcome(c, chosen);  // the replay is not cheap
  if (chosen.empty()) a.plan_predicted = a.measured;
  a.notes = notesOn(c);
  if (const int64_t first = firstCallAsWrittenPeak(c, chosen); first > a.plan_predicted.peak_memory_bytes) {
    a.notes.push_back(
        "the plan's peak is the model's first call: gpuscope apply runs it as the script wrote it (its "
        "fixes take over from the second), and in this recording the model's first call peaked at " +
        analysis::formatBytes(first) + ", against " + analysis::formatBytes(a.plan_predicted.peak_memory_bytes) +
        " predicted for the steps after it");
    a.plan_predicted.peak_memory_bytes = first;
  }
  if (std::optional<std::string> host = unexplainedHostNote(c, a.findings)) a.notes.push_back(std::move(*host));
  a.notes.insert(a.notes.end(), set_aside.begin(), set_aside.end());
  if (a.run_failed = analysis::programFailure(c.trace); !a.run_failed.empty()) withholdPredictions(a);
  a.job = c.job;
  for (const analysis::RankStep& r : c.job.ranks) a.rank_devices.push_back(c.trace.deviceLabel(r.device));
  a.plots = plotData(c);
  return a;
}

const Finding* Advice::find(std::string_view id) const {
  const auto it = std::find_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.id == id; });
  return it == findings.end() ? nullptr : &*it;
}

plan::Plan makePlan(const Advice& advice) {
  plan::Plan p;
  p.trace = advice.trace;
  p.step_basis = advice.step_basis;
  p.measured = advice.measured;
  p.predicted = advice.plan_predicted;
  p.prediction_basis = advice.prediction_basis + "; only the fixes of the " + std::string(toString(advice.goal)) +
                       " plan count: those gpuscope applies without a code change that serve its goal";
  for (const Finding& f : advice.findings) {
    if (f.plan_status != "in the plan") continue;
    for (const plan::Fix& fix : f.fix.plan) {  // a fix two findings share (the loader's workers) goes in once
      const bool there =
          std::any_of(p.fixes.begin(), p.fixes.end(), [&](const plan::Fix& x) { return x.id == fix.id; });
      if (!there) p.fixes.push_back(fix);
    }
  }
  return p;
}

std::string_view toString(Goal goal) {
  switch (goal) {
    case Goal::kTime: return "time";
    case Goal::kMemory: return "memory";
    case Goal::kBoth: return "both";
  }
  return "time";
}

bool parseGoal(std::string_view text, Goal& out) {
  for (Goal g : {Goal::kTime, Goal::kMemory, Goal::kBoth}) {
    if (text == toString(g)) {
      out = g;
      return true;
    }
  }
  return false;
}

}  // namespace gpuscope::advisor
