// Everything the advisor's rules read, computed once per trace: the analyses of analyzer/, which device and
// which stretch of time matter (the busiest GPU, the steady iterations), what one step costs, and which
// framework the program uses, so that a fix is written in the program's own terms.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/collectives.h"
#include "analyzer/fusion_chains.h"
#include "analyzer/gpu_activity.h"
#include "analyzer/intervals.h"
#include "analyzer/iterations.h"
#include "analyzer/job.h"
#include "analyzer/kernel_classifier.h"
#include "analyzer/memory_categories.h"
#include "analyzer/memory_model.h"
#include "analyzer/memory_pools.h"
#include "analyzer/memory_timeline.h"
#include "analyzer/paused_steps.h"
#include "analyzer/phases.h"
#include "analyzer/stats.h"
#include "analyzer/timeline_analysis.h"
#include "analyzer/trace_data.h"

namespace gpuscope::advisor {

enum class Framework { kCuda, kPyTorch, kJax, kCuPy };
std::string_view toString(Framework framework);  // "CUDA", "PyTorch", "JAX", "CuPy"

// XLA's single-op kernels (wrapped_<op>): what JAX launches when it dispatches op by op.
inline bool xlaSingleOp(std::string_view kernel_name) { return kernel_name.starts_with("wrapped_"); }

// How a PyTorch program spreads its model over the ranks: no wrapper seen (no bridge, or not PyTorch), none
// (a model ran, unwrapped), DistributedDataParallel, or FSDP (FullyShardedDataParallel, FSDP2's fully_shard).
enum class DataParallel { kUnknown, kNone, kDdp, kFsdp };

// What one step costs and which stretches of the trace the rules judge by.
struct Step {
  int64_t time_ns =
      0;  // per iteration: analysis::stepOf the steady iterations' periods; without iterations, the GPU window
  int64_t count = 1;        // steady iterations (1 without iterations): totals over `windows` are divided by it
  int64_t timed_count = 1;  // likewise for `timed_windows`
  std::string basis;        // "median start-to-start time of 10 steady iterations (NVTX 'step')"
  bool from_iterations = false;
  int32_t forwards = 1;  // the model's forwards per step (median of the steady ones): more is gradient accumulation
  // Each steady iteration from its start to its GPU end (empty: all). Where the PyTorch bridge removed its
  // module hooks part-way (record --torch-steps), `windows` are the annotated steps, which module ranges and
  // phases are read from, and `timed_windows` the hook-free ones after, which the step's time, its idle time
  // and its host work are measured on; otherwise the two are the same.
  std::vector<analysis::Interval> windows;
  std::vector<analysis::Interval> timed_windows;
  std::vector<analysis::Interval> timed_gpu_windows;  // the GPU's view of them (analysis::StepWindows)
  std::vector<analysis::Interval> between;            // from each timed iteration's GPU end to the next one's start
  int64_t periods = 0;  // timed iterations followed by a timed one: a gap `between` after few of them is per period
};

// The GPU work of one phase (forward, backward, optimizer) over the steady steps.
struct PhaseWork {
  int64_t ranges = 0;                            // NVTX ranges of the phase inside the steps
  int64_t kernels = 0;                           // kernels launched inside them
  int64_t multi_tensor = 0;                      // of those, optimizer-class (multi-tensor) kernels
  int64_t span_ns = 0;                           // first kernel start to last kernel end, summed over the ranges
  int64_t kernel_ns = 0;                         // the kernels' own GPU time, summed
  int64_t first_start_ns = 0, first_end_ns = 0;  // the first range
};

// The host's own work per steady step: how long the step's process took to issue it, less the time it waited
// for the GPU (synchronize calls, synchronous copies). However far the fixes shrink the GPU's work, a step
// cannot run faster than its host issues it. Per-step figures, averaged over the steady steps.
struct HostWork {
  bool measured = false;                // the steps have host ranges: NVTX ranges, or the launches that open them
  int64_t step_ns = 0;                  // the step's host range
  int64_t model_ns = 0;                 // of which its forward and backward phases (without phases: the whole range)
  bool model_is_step = false;           // no phases: model_ns is the whole range
  int64_t optimizer_ns = 0;             // of which its optimizer phase
  int64_t model_launches = 0;           // kernels launched during model_ns
  int64_t blocks_forward_ns = 0;        // the repeated blocks' forward ranges (the PyTorch bridge's module ranges)
  int64_t blocks_forward_launches = 0;  // kernels launched in them
  int64_t forward_fp32_gemms = 0;       // fp32 and TF32 GEMMs and convolutions launched in the forward phase
  bool half_precision = false;          // the forward's GEMMs and convolutions run in bf16 or fp16 (autocast, .half())
  int64_t between_ns = 0;               // from one step's host range to the next one's (loading the next batch)
  int64_t loading_ns = 0;               // of step_ns, in the PyTorch bridge's DataLoader ranges (the next batch)
  int64_t recording_ns = 0;   // taken off step_ns: the collector's own cost per launch (kRecordingCostPerLaunchNs)
  int64_t allocation_ns = 0;  // of step_ns, inside device allocation and free calls (cudaMalloc, cudaFree, …)
  int64_t pinning_ns = 0;     // of step_ns, inside calls that pin or unpin host memory (cudaMallocHost, …)
  int64_t compile_ns = 0;     // beside step_ns and the figures above: compiling kernels (Context::compiles)
  // Of step_ns, the host's own work from its last wait for the GPU to the model's next forward (the next input,
  // the results' reading): where a step waits for its GPU, the work that nothing the GPU replays runs beside.
  // Measured on the hook-free steps' root forward ranges; 0 where they have none or no wait precedes them.
  int64_t before_model_ns = 0;
  // Of step_ns, stretches of kHostBusyGapNs or more with no CUDA call: the host computing on its own (NumPy,
  // copying into a staging buffer), which no CUDA graph takes away.
  int64_t away_ns = 0;
  // The model's parameter tensors (the PyTorch bridge's tensor roles) when DistributedDataParallel wraps it, else
  // 0: its compiled calls keep work per parameter (kDdpCompiledHostPerParameterNs).
  int64_t ddp_parameters = 0;
  // PyTorch: the compiled calls a step would make under torch.compile's CUDA graphs (kCompiledCallHostNs each): the
  // forward and, where the steps have a backward, the backward; none where no nn.Module ran, since the step is then
  // captured by hand (torch.cuda.graph), whose replay is one launch call.
  int64_t compiled_calls = 0;
  // PyTorch: the least host time a step's calls cost compiled in torch.compile's default mode (no graphs): each
  // forward of the model's root modules, and its backward where the steps have one, is a compiled call
  // (kCompiledDefaultForwardHostNs, kCompiledDefaultBackwardHostNs).
  int64_t compiled_calls_floor_ns = 0;
};

struct Context {
  const analysis::TraceData& trace;
  Framework framework = Framework::kCuda;
  std::vector<analysis::KernelKind> kinds;  // per kernel configuration
  analysis::Stats stats;
  analysis::Iterations iterations;
  Step step;
  int32_t device = analysis::kNone;          // the device the step runs on (the busiest), kNone with no GPU work
  int32_t session = analysis::kNone;         // its process (index into trace.sessions)
  analysis::DeviceActivity activity;         // of `device`: what ran when
  analysis::DeviceTimeline timeline;         // of `device`, within the timed step windows
  std::vector<analysis::PhaseRange> phases;  // forward/backward/optimizer NVTX ranges of `session`
  // Of `session`, sorted, computed once (a pass over every CUDA call of the trace): when its host stopped waiting
  // for the GPU (analysis::hostSyncEnds), for host_sync and the plan's count of synchronisations a forward.
  std::vector<int64_t> sync_ends;
  // Of `device`, computed once: the results the runtime's own thread copied to the host once the GPU had finished,
  // the program waiting for them (analysis::resultFetchWaits), for host_sync and the host's work.
  std::vector<analysis::Interval> result_fetches;
  // Of `session`, the whole run: kernels compiled at run time (analysis::runtimeCompiles), computed once for the
  // rules that read them (runtime_compilation, and input_pipeline, which leaves them out).
  std::vector<analysis::RuntimeCompile> compiles;
  // Of `session`: XLA's annotated compiles (analysis::annotatedCompiles). What its autotuner copies, allocates
  // and synchronises inside them is the compiler's, none of the program's steps.
  std::vector<analysis::Interval> compiler_work;
  // Of `session`, read once (each scans the process's marks, calls and kernels): what its paused steps measured
  // (analysis::pausedStepsCost), and what recording added to each kernel launch (analysis::recordingCostPerLaunch).
  std::optional<analysis::PausedStepsCost> paused_cost;
  int64_t recording_cost_per_launch_ns = 0;
  // No optimizer range in a step that has a backward (an update the script writes itself, not torch.optim):
  // its optimizer phases are the stretches from each backward's end to the next forward's start.
  bool optimizer_inferred = false;
  analysis::MemoryAnalysis memory;
  analysis::MemoryCategories categories;
  analysis::MemoryModel model;
  std::vector<analysis::PoolUsage> pools;
  std::vector<analysis::FusionPattern> chains;
  HostWork host;
  // The job's ranks, where the trace holds several (torchrun, mpirun, srun); `session` is one of them.
  analysis::JobView job;
  std::vector<analysis::CollectiveOp> collectives;  // NCCL's operations of every rank (analysis::collectiveOps)
  // JAX: XLA's allocator's reservation of half the GPU or more in one allocation, made up front (its
  // preallocation); the program's own use inside it is not in the trace. 0 when there is none.
  int64_t preallocated_bytes = 0;
  size_t preallocation = 0;  // its row in trace.memory, where preallocated_bytes > 0
  // JAX recorded with `record --jax`: the most XLA's allocator had in use on `device` (its memory_stats()'s
  // peak_bytes_in_use, trace.memory_usage) and the samples read; 0 when not recorded.
  int64_t xla_peak_in_use_bytes = 0;
  int64_t xla_samples = 0;

  explicit Context(const analysis::TraceData& t) : trace(t) {}
  const analysis::KernelKind& kindOf(size_t kernel) const { return kinds[trace.kernels.config[kernel]]; }
  // Whether a kernel of `device` starts inside the step windows.
  bool inSteps(size_t kernel) const;
  bool inSteps(int64_t start_ns) const;
  bool inTimedSteps(int64_t start_ns) const;
  bool byCompiler(int64_t ns) const { return analysis::insideAny(compiler_work, ns); }
  // Whether host time `ns` is the program's own, in its timed steps: inside them and not a compiler's work.
  bool programsInTimedSteps(int64_t ns) const { return inTimedSteps(ns) && !byCompiler(ns); }
  // The host's stretches of `compiles` that end in the timed steps, merged: what a fix that compiles once saves.
  std::vector<analysis::Interval> compilesInTimedSteps() const;
  // Whether a kernel of `device` starts inside the timed step windows.
  bool inTimedSteps(size_t kernel) const;
  // A total over the step windows as a per-step figure.
  int64_t perStep(int64_t total_ns) const { return step.count > 0 ? total_ns / step.count : total_ns; }
  // A total over the timed step windows (the timeline's figures) as a per-step figure.
  int64_t perTimedStep(int64_t total) const { return step.timed_count > 0 ? total / step.timed_count : total; }
  // The step as the program runs unrecorded, where the PyTorch bridge timed steps with the recording paused, else
  // the recorded step: what a fix must beat to win anything.
  int64_t unrecordedStep() const;
  // The GPU's idle per timed step waiting for launches, at most what the step leaves beside its kernels at the
  // program's own pace (unrecordedStep): the launch-bound gaps the recorded steps show beyond that are the
  // recording's. What CUDA graphs take away.
  int64_t launchGaps() const;
  double shareOfStep(int64_t per_step_ns) const;
  // GPU idle time from one steady step's GPU end to the next step's start, per gap (0 without steps).
  int64_t idleBetweenStepsNs() const;
  double shareOfPeak(int64_t bytes) const;  // of the measured peak device memory, 0..1
  // Whether row i of trace.memory is CUDA's own allocation or release of device memory (not a stream-ordered
  // pool's, not pinned host memory) in this process, on `device`.
  bool cudaDeviceMemoryEvent(size_t i) const;
  // Of the device allocations (from CUDA, not a pool's) made in the annotated steps, the share made inside the
  // model's forward and backward ranges: 0 without them.
  double modelAllocationShare() const;
  PhaseWork phaseWork(analysis::Phase phase) const;
  // GPU time of the kernels launched inside the steady steps' forward passes of the model's repeated blocks:
  // the PyTorch bridge's outermost module ranges that name an item of a ModuleList or Sequential
  // ("GPT2LMHeadModel.transformer.h.3", "ResNet.layer2.1"). 0 when the trace has no such ranges.
  int64_t blockForwardKernelNs() const;
  // The outermost forward ranges of those blocks inside the steady steps, in start order.
  std::vector<analysis::Interval> blockForwardRanges() const;
  // The model's forward and backward phase ranges, merged: disjoint, sorted.
  std::vector<analysis::Interval> modelRanges() const;
  // The PyTorch bridge's DataLoader ranges (analysis::kDataLoaderRange) of `session`, merged: disjoint, sorted.
  std::vector<analysis::Interval> dataLoaderRanges() const;
  // Kernels of `device` whose launch call starts inside one of the ranges (disjoint, sorted), in order.
  std::vector<size_t> kernelsLaunchedIn(const std::vector<analysis::Interval>& ranges) const;
  // The fusable chains worth fusing by hand or with the runtime: not those holding a kernel a compiler
  // already made (Triton, XLA: what is left unfused is its choice), nor those replayed from a CUDA graph, nor
  // the optimizer's own (a fused optimizer is their fix); none in a step alreadyFused. Largest saving first.
  std::vector<const analysis::FusionPattern*> chainsToFuse() const;
  // Those of chainsToFuse that `gpuscope apply` fuses. For a PyTorch model it compiles the model's forward (and
  // with it the backward): chains the script runs around the model (its loss, metrics, the batch's preparation)
  // stay as they are. Without the model's forward and backward ranges, every one.
  std::vector<const analysis::FusionPattern*> chainsApplyFuses() const;
  // The root module (by the PyTorch bridge's module ranges) that runs the most forwards per timed step, and how
  // many: a GAN's discriminator runs three where its generator, whose forward opens the step, runs one.
  struct RootForwards {
    std::string module;
    int64_t per_step = 0;
  };
  RootForwards mostForwardsOfARoot() const;
  // The forwards per timed step of every root module together (0 where the trace has no module ranges there): each
  // is a compiled call once `gpuscope apply` compiles the roots, and each has its backward in a training step.
  int64_t rootForwardsPerStep() const;
  // The first root module the PyTorch bridge saw handed state its previous call returned (kStateCarriedMark), or
  // "" where none was.
  std::string rootHandedItsState() const;
  // The kernels inside the steps that are cuDNN's layout transforms around convolutions it runs in NHWC on NCHW
  // tensors (KernelKind::layout_transform).
  std::vector<size_t> layoutTransforms() const;
  // Whether half the steps' kernels or more are a compiler's or replayed from CUDA graphs.
  bool alreadyFused() const;
  // Whether most steady steps launch the very same kernels with the same grids (analysis::Iterations::repeating):
  // CUDA graphs, recorded for one step's launches, do not fit steps that do not. True without iterations.
  bool stepsRepeat() const;
  // Whether the PyTorch bridge saw a model (module ranges in the step's process); assumed without the bridge.
  bool modelRan() const;
  // From the PyTorch bridge's outermost module ranges: the root's class names the wrapper.
  DataParallel dataParallel() const;
  // In a multi-rank job, the job view's row of the rank analysed (`session`); null in a single process.
  const analysis::RankStep* ownRank() const;
  // The memory of the GPU whose peak the memory analysis describes; 0 when the trace does not say.
  int64_t peakDeviceCapacity() const;
};

// The context of the process that ran the most GPU work of the steps, or of process `session` (index into
// trace.sessions: a job's rank, `advise --rank`).
Context buildContext(const analysis::TraceData& trace, int32_t session = analysis::kNone);
// The HostWork of a context whose step, phases and timeline are set (host_work.cpp).
HostWork measureHostWork(const Context& context);

}  // namespace gpuscope::advisor
