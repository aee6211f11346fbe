// Where the step's time goes when the GPU is not computing: waiting for launches, for the host to
// synchronise, for the next batch, for pageable copies.
#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "advisor/host_work.h"
#include "advisor/rule.h"
#include "analyzer/duration_stats.h"
#include "analyzer/memory_timeline.h"
#include "analyzer/timeline_analysis.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatBytes;
using analysis::formatCount;
using analysis::formatDuration;
using analysis::formatShare;
using analysis::Interval;

// Share of the step's kernels that were launched from CUDA graphs.
double graphShare(const Context& c) {
  int64_t all = 0, graphed = 0;
  for (size_t i = 0; i < c.trace.kernels.size(); ++i) {
    if (!c.inSteps(i)) continue;
    ++all;
    graphed += c.trace.kernels.graph_id[i] != analysis::kNone;
  }
  return all ? static_cast<double>(graphed) / static_cast<double>(all) : 0.0;
}

// A step that already replays CUDA graphs has no launches left to save: the GPU idles because of the host's own
// work between replays (Python, JAX's or PyTorch's dispatch, the launches outside the graphs), which no fix that
// gpuscope knows takes away. Seen on jitted JAX steps and torch.compile(mode="reduce-overhead") models, where a
// launch-bound finding was a wrong one: the report says what the idle is instead.
std::optional<std::string> betweenGraphsNote(const Context& c) {
  const int64_t idle = c.perTimedStep(c.timeline.idle.launch_bound_ns);
  const double graphed = graphShare(c);
  if (c.shareOfStep(idle) < 0.10 || graphed < 0.5) return std::nullopt;
  return "the step already runs from CUDA graphs (" + formatShare(graphed) + " of its kernels), yet the GPU idles " +
         formatDuration(idle) + " " + perStepWords(c) + " (" + formatShare(c.shareOfStep(idle)) +
         " of the step) waiting for the host: its own work between replays sets the pace; not reported as "
         "launch-bound, as there are no launches left to save (more steps per replay, or less host work per step, "
         "would help)";
}

// Graphs recorded as a whole (`record --cuda-graph-trace graph`) hide their kernels: the rules that read kernels
// (their precision, their chains, their names) see none inside, and the report says so rather than let silence
// pass for a clean bill.
// The graphs recorded as a whole: the loader makes one kernel configuration per graph (analyzer/trace_data.h).
int64_t wholeGraphs(const Context& c) {
  return std::count_if(c.kinds.begin(), c.kinds.end(), [](const analysis::KernelKind& k) { return k.whole_graph; });
}

std::optional<std::string> wholeGraphsNote(const Context& c) {
  const int64_t count = wholeGraphs(c);
  if (count == 0) return std::nullopt;
  int64_t launches = 0, busy_ns = 0, all_ns = 0;
  for (size_t i = 0; i < c.trace.kernels.size(); ++i) {
    const int64_t ns = c.trace.kernels.end_ns[i] - c.trace.kernels.start_ns[i];
    all_ns += ns;
    if (!c.kindOf(i).whole_graph) continue;
    ++launches;
    busy_ns += ns;
  }
  return formatCount(launches) + " launches of " + formatCount(count) + (count == 1 ? " CUDA graph" : " CUDA graphs") +
         " were recorded as a whole (`record --cuda-graph-trace graph`), " +
         formatShare(all_ns ? static_cast<double>(busy_ns) / static_cast<double>(all_ns) : 0.0) +
         " of the GPU's kernel time: the kernels inside them are not in the trace, so the rules that read kernels "
         "(fp32_gemm, gemm_alignment, fusable_chains, unfused_attention, unfused_optimizer, convolution_layout) did "
         "not look inside them (`--cuda-graph-trace node` records each kernel)";
}

// Recorded node by node, a step replayed from CUDA graphs pays CUPTI's cost for every kernel of every replay: the
// timings read from it are the recording's as much as the program's (a JAX GRU ran 8.0 ms a step plain, 10.5
// recorded node by node, 8.3 with each launch recorded whole: docs/benchmarks.md). Said where most of the step's
// kernels come from graphs and gpuscope's collector recorded them one by one.
std::optional<std::string> nodeLevelGraphsNote(const Context& c) {
  if (c.session == analysis::kNone || !analysis::recordedByCollector(c.trace.sessions[c.session])) return std::nullopt;
  const double graphed = graphShare(c);
  if (graphed < 0.5 || wholeGraphs(c) > 0) return std::nullopt;
  return formatShare(graphed) +
         " of the step's kernels were replayed from CUDA graphs and recorded node by node, which "
         "slows such programs more than it slows others (a JAX GRU: 8.0 ms a step plain, 10.5 recorded so, 8.3 with "
         "each launch recorded whole; docs/benchmarks.md): for timings nearer the program's own, record with "
         "`--cuda-graph-trace graph` (the kernels inside the graphs are then not seen)";
}

namespace {

std::optional<Finding> launchBound(const Context& c);
std::optional<Finding> hostSync(const Context& c);
std::optional<Finding> inputPipeline(const Context& c);
std::optional<Finding> pageableCopies(const Context& c);
std::optional<Finding> serialCopies(const Context& c);
std::optional<Finding> exposedCommunication(const Context& c);

constexpr Rule kRules[] = {
    {.id = "launch_bound",
     .title = "The GPU waits for kernel launches",
     .reads = "timeline: idle gaps of the steady steps and their causes; launch-call and kernel durations",
     .fires_when = "the GPU idles waiting for the host to launch work for 10 % of the step or more",
     .why = "Each launch costs the host microseconds; kernels that run shorter than that finish before the next one "
            "arrives, and the GPU waits for the host in between.",
     .fix = "Capture the step in a CUDA graph and replay it, so one launch replaces hundreds.",
     .snippets = {"model = torch.compile(model, mode=\"reduce-overhead\")  # CUDA graphs for the step",
                  "step = jax.jit(step)  # one XLA executable per step",
                  "graph = stream.begin_capture(); step(); graph = stream.end_capture(); graph.launch(stream)",
                  "cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal); step(s); cudaStreamEndCapture(s, &g);\n"
                  "cudaGraphInstantiate(&exec, g, 0);  // then cudaGraphLaunch(exec, s) every step"},
     .verify = "Record again and compare with `gpuscope diff`: the kernels carry a graph id and the launch-bound idle "
               "time (`gpuscope stats --report timeline`) is near zero.",
     .check = launchBound},
    {.id = "host_sync",
     .title = "The host stops the GPU to synchronise mid-step",
     .reads =
         "timeline: idle after host synchronisations inside the steady steps; synchronize calls and synchronous copies",
     .fires_when = "the GPU idles after host synchronisations for 3 % of the step or more, with a synchronisation in "
                   "at least every other step (ten in a run with no steps)",
     .why = "A synchronisation empties the GPU's queue: until the host launches again the GPU has nothing to do.",
     .fix = "Keep results on the GPU and read them back rarely: no .item(), .cpu() or print of a tensor in the step; "
            "copy to pinned memory with non_blocking=True when the host needs a value.",
     .snippets = {"losses.append(loss.detach())  # not loss.item(): read them every N steps\n"
                  "if step % 100 == 0: print(torch.stack(losses).mean().item()); losses.clear()",
                  "# let JAX dispatch run ahead: avoid float(x), x.block_until_ready() and np.asarray(x) in the step",
                  "",
                  "// drop cudaDeviceSynchronize() from the loop; order work with streams and events "
                  "(cudaStreamWaitEvent)"},
     .verify = "Record again: `gpuscope stats --report timeline` shows the idle time after host syncs near zero.",
     .check = hostSync},
    {.id = "input_pipeline",
     .title = "The GPU waits for the next batch between steps",
     .reads = "iterations: GPU activity and CUDA calls between one steady step and the next; inside the steps, the "
              "GPU activity in the PyTorch bridge's DataLoader ranges",
     .fires_when = "the GPU idles between steps, or inside them while the DataLoader hands out the next batch (or, in "
                   "steps no NVTX range marks, while the host works outside CUDA for 1 ms or more at a time), for "
                   "10 % of the iteration or more; where the loader's calls at a pass's start and end took 10x the "
                   "others, for keeping its workers",
     .why = "Preparing a batch on the training loop's own thread serialises it with the GPU's work: neither runs while "
            "the other does.",
     .fix = "Prepare batches in background workers, in pinned memory, ahead of the step that needs them.",
     .snippets = {"loader = torch.utils.data.DataLoader(dataset, batch_size=..., num_workers=8, pin_memory=True,\n"
                  "                                     persistent_workers=True, prefetch_factor=2)\n"
                  "x = x.cuda(non_blocking=True)",
                  "# prefetch: load batch i+1 on a thread (or tf.data / grain with prefetch) while step i runs", "",
                  "// load batch i+1 on a host thread into pinned memory and cudaMemcpyAsync it on a copy stream "
                  "while step i runs"},
     .verify = "Record again: the time between one step's GPU end and the next step's start shrinks to the host's "
               "launch latency, and the iteration time falls by about the gap.",
     .check = inputPipeline},
    {.id = "pageable_copies",
     .title = "Copies from pageable host memory",
     .reads = "copies inside the steady steps and their host memory kind; for CuPy, the host's stretch before each "
              "pinned host-to-device copy (its staging of a NumPy array)",
     .fires_when = "copying the same bytes from pinned memory would save 2 % of the step or more (CuPy: the GPU idles "
                   "2 % of the step or more while the host stages)",
     .why = "The driver copies pageable memory through a pinned staging buffer in chunks, synchronously: the copy is "
            "slower and cannot overlap the host's or the GPU's other work.",
     .fix = "Allocate the host buffers pinned and copy asynchronously.",
     .snippets = {"loader = DataLoader(..., pin_memory=True)\nx = x.pin_memory().cuda(non_blocking=True)",
                  "# jax.device_put from a pinned (page-locked) host array, or keep the data on the device",
                  "host = cupyx.empty_pinned(shape, dtype); dev.set(host, stream=stream)",
                  "cudaMallocHost(&host, bytes);  // instead of malloc/new\n"
                  "cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, stream);"},
     .verify = "Record again: `gpuscope stats --report transfers` shows the copies as pinned, at higher bandwidth.",
     .check = pageableCopies},
    {.id = "serial_copies",
     .title = "Copies do not overlap compute",
     .reads = "timeline: copy time and its overlap with kernels inside the steady steps",
     .fires_when = "copies take 10 % of the step or more, under a quarter of their time overlapped by kernels, "
                   "and overlapping them would save 3 % or more",
     .why = "A copy queued on the same stream as the kernels waits for them, and they for it: the copy engines and "
            "the SMs take turns instead of working at once.",
     .fix = "Copy on a stream of its own, from pinned memory, a chunk ahead of the kernels that need it.",
     .snippets = {"copy_stream = torch.cuda.Stream()\n"
                  "with torch.cuda.stream(copy_stream):\n    next_x = next_cpu.cuda(non_blocking=True)\n"
                  "torch.cuda.current_stream().wait_stream(copy_stream)  # before using next_x",
                  "# jax.device_put the next batch before the current step finishes (dispatch is asynchronous)",
                  "with cupy.cuda.Stream(non_blocking=True) as copy_stream:\n    next_x.set(next_host)",
                  "cudaMemcpyAsync(d_next, h_next, bytes, cudaMemcpyHostToDevice, copy_stream);\n"
                  "cudaEventRecord(copied, copy_stream); cudaStreamWaitEvent(compute_stream, copied);"},
     .verify = "Record again: `gpuscope stats --report timeline` shows most copy time overlapped by kernels.",
     .check = serialCopies},
    {.id = "exposed_communication",
     .title = "Collective communication does not overlap compute",
     .reads = "communication-class kernels against the other kernels inside the steady steps",
     .fires_when = "communication kernels (NCCL) run with no compute beside them for 5 % of the step or more",
     .why = "While a collective runs alone the SMs wait for the network or NVLink: data-parallel training "
            "hides gradient all-reduces behind the backward pass of the layers still to go.",
     .fix = "Start each collective as soon as its data is ready, so that it runs under the remaining compute.",
     .snippets =
         {"model = DDP(model, bucket_cap_mb=25, gradient_as_bucket_view=True)  # smaller buckets start sooner\n"
          "# FSDP: FullyShardedDataParallel(model, forward_prefetch=True, "
          "backward_prefetch=BackwardPrefetch.BACKWARD_PRE)",
          "# shard with jax.jit and let XLA schedule collectives: --xla_gpu_enable_latency_hiding_scheduler=true", "",
          "// issue ncclAllReduce on a communication stream per bucket, as soon as its gradients are done, and "
          "wait on an event only where the result is needed"},
     .verify = "Record again: `gpuscope stats --report kernel_classes` shows the same communication time, and the "
               "step is shorter by the time it used to run alone.",
     .check = exposedCommunication},
    // A forecast, not a measurement: today the GPU keeps up with the host. It has its own id because a program
    // that is not launch-bound must not be told it is (a fp32 model the forecast sees host-bound once bf16
    // shrinks its GEMMs was scored a wrong launch_bound finding). advice.cpp's forecast fires it: no check here.
    {.id = "host_bound_after_fixes",
     .title = "After the other fixes the host will set the pace",
     .reads = "the host's work per steady step (its step range less its waits for the GPU, the forward and "
              "backward's launches) and the GPU's time, both as the plan's other fixes would leave them",
     .fires_when = "no launch-bound finding was measured, but after every other fix of the goal's plan the host's "
                   "work per step would exceed the GPU's and CUDA graphs would take 10 % or more of it away; not "
                   "where the steady steps launch different kernels or grids from one step to the next",
     .why = "A step cannot run faster than the host issues it. Today the GPU's own work hides the host's; with that "
            "work shrunk, every kernel is over before the host has issued the next.",
     .fix = "Capture the step in a CUDA graph and replay it, so one launch replaces hundreds.",
     .snippets = {"model = torch.compile(model, mode=\"reduce-overhead\")  # CUDA graphs for the step", "",
                  "graph = stream.begin_capture(); step(); graph = stream.end_capture(); graph.launch(stream)",
                  "cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal); step(s); cudaStreamEndCapture(s, &g);\n"
                  "cudaGraphInstantiate(&exec, g, 0);  // then cudaGraphLaunch(exec, s) every step"},
     .verify = "Apply the other fixes, then record again: the launch-bound idle time (`gpuscope stats --report "
               "timeline`) is what CUDA graphs now take away.",
     .check = nullptr},
};

// The plan entry both launch-bound findings carry: the whole step captured in CUDA graphs. A PyTorch step of
// several forwards (gradient accumulation) says how many: torch.compile's CUDA graphs fail there, a replay
// overwriting what an earlier micro-batch's backward still reads (pytorch/pytorch#169545; a DDP GPT-2 with 8
// micro-batches per step failed so under `gpuscope apply` on 2 x H100), so gpuscope leaves that fix to the user.
// A model of a step of one forward may still run several, each with its backward, where two models train in turn:
// a DCGAN's discriminator runs three forwards an iteration (on the real batch, on the fake one, and for the
// generator's loss), and under `gpuscope apply` its CUDA graphs overwrote an output the generator's backward still
// read ("accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run"; H200, 2026-12-01).
// A model handed back what its previous call returned (the word-level LSTM example feeds its hidden state, detached,
// into the next call) loses it at a replay: `gpuscope apply` rolled such graphs back at run time (H200,
// 2026-12-02), and the plan had counted their gain.
plan::Fix cudaGraphsFix(const Context& c, Finding& f) {
  plan::Fix fix{"cuda_graphs-1", "cuda_graphs", f.id, {{"scope", std::string("step")}}};
  if (c.framework != Framework::kPyTorch) return fix;
  if (const std::string root = c.rootHandedItsState(); !root.empty()) {
    fix.params.push_back({"state_carried", root});
    f.fix.summary += " " + root +
                     "'s forward is handed what its previous call returned (a recurrent state or a cache), which a "
                     "replay of torch.compile's CUDA graphs overwrites: capture the step by hand with that state "
                     "copied into the graph's own buffers; `gpuscope apply` leaves this fix out.";
    return fix;
  }
  const Context::RootForwards most = c.mostForwardsOfARoot();
  if (c.step.forwards <= 1 && most.per_step <= 1) return fix;
  fix.params.push_back({"forwards_per_step", std::max<int64_t>(c.step.forwards, most.per_step)});
  if (c.step.forwards > 1) {
    f.fix.summary += " The model runs " + std::to_string(c.step.forwards) +
                     " forwards per optimizer step (gradient accumulation), where torch.compile's CUDA graphs fail "
                     "(pytorch/pytorch#169545): take fewer, larger micro-batches, or capture the forward and "
                     "backward by hand; `gpuscope apply` leaves this fix out.";
  } else {
    f.fix.summary += " " + most.module + " runs " + std::to_string(most.per_step) +
                     " forwards per step, each with a backward of its own (models trained in turn), where a "
                     "replay of torch.compile's CUDA graphs overwrites outputs a later backward still reads: capture "
                     "the forward and backward by hand; `gpuscope apply` leaves this fix out.";
  }
  return fix;
}

// The one-op executable an XLA thunk's NVTX range belongs to, where JAX ran that op on its own: an op called
// outside jit (and each of jnp's functions) runs as a one-op executable named after it,
// "Thunk:#name=jit(add)/add,hlo_op=wrapped_add,...#" ("jit(add)"), where a jitted function's ops sit under its name
// and their own scopes ("jit(apply_model)/jvp(ResNet)/..."). Empty for those.
std::string_view opRunOnItsOwn(std::string_view thunk) {
  constexpr std::string_view kPrefix = "Thunk:#name=";
  if (!thunk.starts_with("Thunk:#name=jit(")) return {};
  const size_t close = thunk.find(")/", kPrefix.size());
  if (close == std::string_view::npos) return {};
  const std::string_view path = thunk.substr(close + 2, thunk.find(',', close) - close - 2);
  if (path.empty() || path.find_first_of("/(") != std::string_view::npos) return {};
  return thunk.substr(kPrefix.size(), close + 1 - kPrefix.size());
}

// A JAX step's launch gaps, and those before ops dispatched one by one: single-op kernels, or kernels of one-op
// executables run at least 4 times a step (`ops`: their names and kernels per step).
struct OpByOp {
  int64_t gaps_ns = 0, alone_ns = 0;
  std::map<std::string, int64_t> ops;
};

OpByOp opByOp(const Context& c) {
  const auto& k = c.trace.kernels;
  const auto& api = c.trace.api_calls;
  std::vector<int32_t> thunk(k.size(), analysis::kNone);  // the NVTX thunk range around each kernel's launch
  std::map<int32_t, int64_t> runs;                        // kernels launched under each thunk name
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.session[i] != c.session || !c.inTimedSteps(k.start_ns[i]) || k.launch_call[i] == analysis::kNone) continue;
    const auto call = static_cast<size_t>(k.launch_call[i]);
    thunk[i] = analysis::innermostRange(c.trace, c.session, api.thread_id[call], api.start_ns[call]);
    if (thunk[i] != analysis::kNone) ++runs[c.trace.nvtx.name[static_cast<size_t>(thunk[i])]];
  }
  OpByOp out;
  std::set<int32_t> alone_thunks;  // the thunk names of ops run on their own, 4 times a step or more
  for (const auto& [name, count] : runs) {
    const std::string_view op = opRunOnItsOwn(c.trace.text(name));
    if (op.empty() || count < 4 * c.step.timed_count) continue;
    alone_thunks.insert(name);
    out.ops[std::string(op)] += c.perTimedStep(count);
  }
  int64_t last_end = -1;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.session[i] != c.session || !c.inTimedSteps(k.start_ns[i])) continue;
    const int64_t gap = last_end < 0 ? 0 : k.start_ns[i] - last_end;
    last_end = std::max(last_end, k.end_ns[i]);
    if (gap <= 0 || gap >= analysis::kHostBusyGapNs) continue;
    out.gaps_ns += gap;
    const bool alone =
        xlaSingleOp(c.trace.kernelName(i)) ||
        (thunk[i] != analysis::kNone && alone_thunks.contains(c.trace.nvtx.name[static_cast<size_t>(thunk[i])]));
    if (alone) out.alone_ns += gap;
  }
  return out;
}

// Whether a JAX program's steps run jitted already: most of the launch gaps inside them come before XLA's fusions
// and library calls, not before ops dispatched one by one. Counted by kernels, a Flax ResNet whose optax update was
// not jitted looked jitted: its jitted gradients' 400 kernels a step outnumbered the update's, while 79 % of the
// GPU's launch gaps came before the update's ops (bench/corpus/jax_flax_resnet_cifar, H200, 2026-12-03).
bool jittedAlready(const OpByOp& ops) { return ops.gaps_ns > 0 && ops.alone_ns * 2 < ops.gaps_ns; }

// The ops run one by one, most kernels a step first, as evidence: what is left outside jax.jit.
std::string opsRunOnTheirOwn(const Context& c, const OpByOp& ops) {
  std::vector<std::pair<std::string, int64_t>> by_count(ops.ops.begin(), ops.ops.end());
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string list;
  for (size_t i = 0; i < by_count.size() && i < 4; ++i)
    list += (i ? ", " : "") + by_count[i].first + " " + std::to_string(by_count[i].second) + "×";
  return "ops run one by one, each as an executable of its own, " + perStepWords(c) + ": " + list +
         (by_count.size() > 4 ? " and " + std::to_string(by_count.size() - 4) + " more" : std::string()) +
         " (the code that calls them runs outside jax.jit)";
}

// A jitted JAX step is one XLA executable already, whose kernels XLA launches one by one: its command buffers
// (CUDA graphs) take over more of them with a lower minimum graph size, or a larger batch gives each more work.
void jittedJaxFix(Fix& fix) {
  fix.summary =
      "The step is jitted already (its kernels are XLA's fusions), and XLA launches them one by one: let XLA replay "
      "more of them as CUDA graphs, or give each kernel more work (a larger batch, several steps in one jitted "
      "lax.scan).";
  fix.snippet = "XLA_FLAGS=--xla_gpu_graph_min_graph_size=1 python train.py  # XLA's command buffers for short runs";
  fix.snippet_language = "shell";
}

std::optional<Finding> launchBound(const Context& c) {
  const auto& tl = c.timeline;
  const int64_t recorded = c.perTimedStep(tl.idle.launch_bound_ns);
  const int64_t idle = c.launchGaps();  // the rest of `recorded` is the recording's
  if (c.shareOfStep(idle) < 0.10 || graphShare(c) >= 0.5) return std::nullopt;  // graphs: betweenGraphsNote
  Finding f = startFinding(c, kRules[0]);
  f.title = "The GPU waits for kernel launches: " + formatDuration(idle) + " idle " + perStepWords(c);
  f.summary = "The host cannot launch kernels as fast as the GPU runs them, so the GPU idles between kernels.";
  f.evidence.push_back({"GPU idle waiting for launches: " + formatDuration(idle) + " " + perStepWords(c) + " (" +
                            formatShare(c.shareOfStep(idle)) + " of the step)",
                        {stepRef(c)}});
  f.evidence.push_back({perStepCount(tl.kernels, c.step.timed_count) + " kernels " + perStepWords(c) + ", " +
                            perStepCount(tl.short_kernels, c.step.timed_count) + " of them shorter than the " +
                            formatDuration(tl.launch_call_ns) + " a launch call takes on the host",
                        {}});
  f.evidence.push_back({"median time from launch call to kernel start on an idle GPU: " +
                            formatDuration(tl.launch_latency_on_idle_gpu.median),
                        {}});
  if (idle < recorded) {
    f.evidence.push_back({"the recorded steps show " + formatDuration(recorded) +
                              " of it; at the program's own pace (" + formatDuration(c.unrecordedStep()) +
                              " a step, as the PyTorch bridge's steps ran with the recording paused) the GPU idles "
                              "at most " +
                              formatDuration(idle) + " beside its kernels, and the rest is the recording's",
                          {}});
  }
  // The host's time in torch.compile's graph replays (kCompiledCallHostNs a call) is the host's forecast's, where
  // the step takes the longer of the two; taken off here as well, it left a GPU-bound plan 1.72 ms a step too slow:
  // tv_loader_main_thread forecast 9.92 ms, measured 8.42 under apply (H100, 2026-11-28), 8.20 without it.
  f.gain = timeGain(c, idle,
                    "the launch-bound idle time measured inside the steady steps; a CUDA graph launches the whole "
                    "step with one call, so that idle time goes while the kernels themselves run as before (the "
                    "host's own time per replay is in the forecast of its work)");
  f.gain.idle_ns = f.gain.time_ns;
  if (c.framework == Framework::kJax) {
    const OpByOp ops = opByOp(c);
    if (jittedAlready(ops))
      jittedJaxFix(f.fix);
    else if (!ops.ops.empty()) {
      f.evidence.push_back({opsRunOnTheirOwn(c, ops), {}});
      f.fix.summary =
          "Put the whole step under jax.jit, the update too, so that XLA fuses its ops and launches them "
          "from one executable.";
    }
  }
  f.fix.plan.push_back(cudaGraphsFix(c, f));
  setSeverity(f);
  return f;
}

}  // namespace

// Fires where the GPU kept up with the host before, but the other fixes shrink the GPU's work below the host's.
std::optional<Finding> hostBoundAfterFixes(const Context& c, int64_t gpu_after_ns, int64_t host_after_ns,
                                           int64_t host_with_graphs_ns) {
  const int64_t gain = host_after_ns - std::max(gpu_after_ns, host_with_graphs_ns);
  if (host_after_ns <= 0 || gain < host_after_ns / 10 || graphShare(c) >= 0.5) return std::nullopt;
  Finding f = startFinding(c, kRules[6]);
  f.title = "After the other fixes the host sets the pace: " + formatDuration(host_after_ns) + " of host work " +
            perStepWords(c) + " against " + formatDuration(gpu_after_ns) + " of GPU work";
  f.summary =
      "The GPU keeps up with the host now, but once the other fixes shrink its work the step waits for the host "
      "to issue it: Python, autograd and one launch call per kernel.";
  f.why =
      "A step cannot run faster than the host issues it. Today the GPU's own work hides the host's; with that "
      "work shrunk, every kernel is over before the host has issued the next.";
  const HostWork& h = c.host;
  const std::string split = h.model_is_step ? formatDuration(h.away_ns) +
                                                  " in stretches of 1 ms or more with no CUDA call (the host's own "
                                                  "computing, which graphs do not take away), "
                                            : formatDuration(h.model_ns) + " forward and backward issuing " +
                                                  formatCount(h.model_launches) + " kernels, ";
  f.evidence.push_back({"host work " + perStepWords(c) + ": " + formatDuration(h.step_ns) +
                            " inside the step (its range less the host's waits for the GPU), of which " + split +
                            "and " + formatDuration(h.between_ns) + " between steps",
                        {stepRef(c)}});
  f.evidence.push_back({"predicted after the other fixes: " + formatDuration(gpu_after_ns) + " of GPU time and " +
                            formatDuration(host_after_ns) + " of host work " + perStepWords(c),
                        {}});
  f.gain = timeGain(c, gain,
                    "the host's work after the other fixes less what stays with CUDA graphs (" +
                        formatDuration(host_with_graphs_ns) + "), down to the GPU's predicted time; " +
                        std::string(kHostFloorBasis));
  f.gain.host_side = true;
  f.fix.plan.push_back(cudaGraphsFix(c, f));
  setSeverity(f);
  return f;
}

namespace {

// Host waits (synchronize calls, synchronous copies, copies into pageable memory) that returned inside the step
// windows.
int64_t syncsInSteps(const Context& c) {
  int64_t n = 0;
  for (int64_t end : c.sync_ends) n += c.inSteps(end);
  return n;
}

// The share of the steady steps in which the host waits for the GPU at least once (a synchronising call, or a
// result fetched once the GPU was done).
double shareOfStepsThatWait(const Context& c) {
  std::vector<int64_t> waits;
  for (int64_t end : c.sync_ends) waits.push_back(end);
  for (const Interval& fetch : c.result_fetches) waits.push_back(fetch.end);
  std::sort(waits.begin(), waits.end());
  int64_t steps = 0, waiting = 0;
  for (const analysis::Iteration& it : c.iterations.list) {
    if (it.warmup || !c.inSteps(it.start_ns)) continue;
    ++steps;
    const auto wait = std::lower_bound(waits.begin(), waits.end(), it.start_ns);
    waiting += wait != waits.end() && *wait < it.end_ns;
  }
  return steps ? static_cast<double>(waiting) / static_cast<double>(steps) : 0.0;
}

// A habit of the step, not a phase boundary: a synchronisation in at least every other step, or, where no steps
// were found, ten in the run. The idle after the one sync that ends a warm-up or starts a timer is no step's
// problem (a compiled model timed after torch.cuda.synchronize() showed 5 % "after sync" with no sync in any step),
// nor are the reads that end an epoch, however many (a Flax ResNet's jax.device_get of its 20 steps' losses and
// accuracies once an epoch: 40 results in one step of 20, bench/corpus/jax_flax_resnet_cifar, H200, 2026-12-03).
bool syncsEveryStep(const Context& c, int64_t syncs) {
  return c.step.from_iterations ? shareOfStepsThatWait(c) >= 0.5 : syncs >= 10;
}

// CuPy copies a NumPy (pageable) array to the GPU through a pinned staging buffer of its own: the host first
// copies the array into it (NumPy's copy, no CUDA call), then queues an asynchronous copy from it, which CUPTI
// records as pinned. Each 64 MiB cp.asarray issued its copy after 11-13 ms of host time with no CUDA call, about
// 5.5 GB/s (bench/corpus/cupy_pageable_h2d, H100, 2026-11-28). One thread's copy of B bytes takes at least B at
// this rate, so a stretch that long right before a pinned host-to-device copy of 1 MiB or more is its staging.
constexpr double kHostCopyBytesPerNs = 25.0;

struct StagedCopies {
  int64_t count = 0, bytes = 0, staging_ns = 0, idle_ns = 0;
  std::vector<Interval> stretches;  // the host's staging, each ending at its copy's call
};

// CuPy's staged host-to-device copies inside the steps, with the host's stretch of its own work before each.
StagedCopies stagedCopies(const Context& c) {
  StagedCopies s;
  if (c.framework != Framework::kCuPy) return s;
  const auto& k = c.trace.copies;
  const std::vector<Interval> calls = analysis::cudaCalls(c.trace, c.session);
  for (size_t i = 0; i < k.size(); ++i) {
    const bool candidate = k.kind[i] == schema::CopyKind::kHostToDevice &&
                           k.src_kind[i] == schema::MemoryKind::kPinned && k.bytes[i] >= (int64_t{1} << 20);
    if (!candidate || k.device[i] != c.device || !c.inSteps(k.start_ns[i]) || k.launch_call[i] == analysis::kNone) {
      continue;
    }
    const int64_t call = c.trace.api_calls.start_ns[static_cast<size_t>(k.launch_call[i])];
    // The merged calls: the copy's call must open one, right after a stretch with no CUDA call.
    auto at =
        std::lower_bound(calls.begin(), calls.end(), call, [](const Interval& x, int64_t t) { return x.start < t; });
    if (at == calls.end() || at->start != call || at == calls.begin()) continue;
    const Interval stretch{std::prev(at)->end, call};
    const int64_t least = std::max<int64_t>(
        analysis::kHostBusyGapNs, static_cast<int64_t>(static_cast<double>(k.bytes[i]) / kHostCopyBytesPerNs));
    if (stretch.end - stretch.start < least) continue;
    ++s.count;
    s.bytes += k.bytes[i];
    s.staging_ns += stretch.end - stretch.start;
    s.idle_ns += stretch.end - stretch.start - analysis::overlapLength(c.activity.busy, stretch.start, stretch.end);
    s.stretches.push_back(stretch);
  }
  return s;
}

// Where in the model the host waited: the syncs inside the bridge's module ranges of the annotated steps, so that
// the user knows which layers to look at (an early exit's check, SyncBatchNorm reading its statistics back).
void syncPlaces(const Context& c, Finding& f) {
  const int64_t until = c.iterations.hooks_removed_ns;
  const std::vector<std::pair<std::string, int64_t>> places =
      analysis::syncsByModule(c.trace, c.session, c.sync_ends, until);
  const auto forwards = std::count_if(c.phases.begin(), c.phases.end(), [&](const analysis::PhaseRange& p) {
    return p.phase == analysis::Phase::kForward && (until < 0 || p.start < until);
  });
  if (places.empty() || forwards == 0) return;
  int64_t total = 0;
  for (const auto& place : places) total += place.second;
  std::string most;
  for (size_t i = 0; i < std::min<size_t>(3, places.size()); ++i) {
    most += (i ? ", " : "") + places[i].first + " (" + formatCount(places[i].second) + ")";
  }
  f.evidence.push_back({"inside the model, over " + formatCount(forwards) +
                            " annotated forwards and their backwards: " + formatCount(total) +
                            " of the synchronisations, in " + formatCount(places.size()) +
                            (places.size() == 1 ? " module" : " modules") + ", most in " + most,
                        {}});
}

std::optional<Finding> hostSync(const Context& c) {
  // The host's staging of CuPy arrays after a synchronisation is pageable_copies' idle, not the sync's.
  const int64_t staging = c.perStep(stagedCopies(c).idle_ns);
  const int64_t idle = std::max<int64_t>(0, c.perTimedStep(c.timeline.idle.after_sync_ns) - staging);
  if (c.shareOfStep(idle) < 0.03) return std::nullopt;
  const int64_t fetches = c.timeline.idle.results_fetched;
  const int64_t syncs = syncsInSteps(c) + fetches;
  if (!syncsEveryStep(c, syncs)) return std::nullopt;
  Finding f = startFinding(c, kRules[1]);
  f.title = "The host synchronises mid-step: " + formatDuration(idle) + " GPU idle " + perStepWords(c);
  f.summary = "The host waits for the GPU to finish, then the GPU waits for the host to launch again.";
  f.evidence.push_back({"GPU idle after host synchronisations: " + formatDuration(idle) + " " + perStepWords(c) + " (" +
                            formatShare(c.shareOfStep(idle)) + ")",
                        {stepRef(c)}});
  const std::string count = perStepCount(c, syncs);
  f.evidence.push_back({count + (count == "1" ? " synchronisation " : " synchronisations ") + perStepWords(c), {}});
  if (fetches > 0) {
    const std::string fetched = perStepCount(c, fetches);
    f.evidence.push_back({"of them, " + fetched + (fetched == "1" ? " result" : " results") + " " + perStepWords(c) +
                              " copied to the host by the runtime's own thread once the GPU had finished, the "
                              "program waiting for the value before it issued more work (float(x), np.asarray(x), "
                              "jax.device_get)",
                          {}});
  }
  syncPlaces(c, f);
  f.gain = timeGain(c, idle, "the idle time measured after each synchronisation inside the steady steps");
  f.gain.idle_ns = f.gain.time_ns;
  setSeverity(f);
  return f;
}

// Host time inside the process's CUDA API calls that falls in the gaps (disjoint, sorted).
int64_t apiTimeIn(const Context& c, const std::vector<Interval>& gaps) {
  int64_t total = 0;
  const auto& a = c.trace.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.session[i] == c.session) total += analysis::overlapLength(gaps, a.start_ns[i], a.end_ns[i]);
  }
  return total;
}

struct LoaderWait {
  int64_t idle_ns = 0, host_ns = 0;  // per timed step
  Interval first;
};

// The PyTorch bridge's DataLoader ranges inside the timed steps: how long the host spent in them, and how long of
// that the GPU idled. A step that runs from one forward to the next holds its batch's loading, so the gap
// between steps does not show it.
LoaderWait loaderWait(const Context& c, const std::vector<Interval>& loader_ranges) {
  const std::vector<Interval> loading = analysis::intersect(loader_ranges, c.step.timed_windows);
  LoaderWait wait;
  if (loading.empty()) return wait;
  wait.first = loading.front();
  const int64_t total = analysis::totalLength(loading);
  wait.host_ns = c.perTimedStep(total);
  wait.idle_ns = c.perTimedStep(total - analysis::overlapLength(c.activity.busy, loading));
  return wait;
}

// A DataLoader without persistent workers stops its worker processes at the end of each pass over its data and
// starts new ones at the next, and the batches there take many times the others: in PyTorch's transfer-learning
// tutorial (4 workers, 61 steps an epoch) 11 of 306 batches took 11-75 ms each where the median took 1.0 ms,
// 2.5 ms a step over the run (bench/corpus/tv_transfer_learning_tutorial, H200, 2026-12-01).
constexpr double kLoaderRestartFactor = 10.0;
constexpr int64_t kLoaderRestartNs = 1'000'000;

struct LoaderRestarts {
  int64_t count = 0, total_ns = 0, median_ns = 0;
  std::vector<Interval> ranges;  // the restarts' calls, in time order
  Interval longest;
};

// The bridge's DataLoader ranges that begin in the timed steps or between them and took kLoaderRestartFactor times
// their median or more (and 1 ms or more): the passes' starts and ends.
LoaderRestarts loaderRestarts(const Context& c, const std::vector<Interval>& loader_ranges) {
  std::vector<Interval> steady = c.step.timed_windows;
  steady.insert(steady.end(), c.step.between.begin(), c.step.between.end());
  steady = analysis::mergeIntervals(std::move(steady));
  std::vector<Interval> batches;
  for (const Interval& r : loader_ranges) {
    if (analysis::insideAny(steady, r.start)) batches.push_back(r);
  }
  LoaderRestarts restarts;
  std::vector<int64_t> lengths;
  for (const Interval& b : batches) lengths.push_back(b.length());
  restarts.median_ns = analysis::summarize(lengths).median;
  for (const Interval& b : batches) {
    if (b.length() < kLoaderRestartNs ||
        static_cast<double>(b.length()) < kLoaderRestartFactor * static_cast<double>(restarts.median_ns)) {
      continue;
    }
    ++restarts.count;
    restarts.total_ns += b.length();
    restarts.ranges.push_back(b);
    if (b.length() > restarts.longest.length()) restarts.longest = b;
  }
  return restarts;
}

// The start times of the process's launch calls of the GPU work (kernels: a CUDA graph's launch for the kernels
// it replays; copies) that `keep` keeps, by index, sorted.
template <typename Keep>
std::vector<int64_t> launchCallStarts(const Context& c, const analysis::GpuWorkColumns& work, Keep keep) {
  std::vector<int64_t> starts;
  for (size_t i = 0; i < work.size(); ++i) {
    if (work.session[i] != c.session || work.launch_call[i] == analysis::kNone || !keep(i)) continue;
    starts.push_back(c.trace.api_calls.start_ns[static_cast<size_t>(work.launch_call[i])]);
  }
  std::sort(starts.begin(), starts.end());
  return starts;
}

// Whether a stretch of host work ending at `end` made a batch: the next GPU work the host issues after it is a
// copy from the host, before any kernel. A jitted JAX step fed from NumPy spent 2.3 ms a step outside CUDA after
// its batch's copy had been issued, in XLA's own dispatch of the step, which ended at the step's CUDA graph
// launch (bench/corpus/jax_transformer_lm, H200, 2026-11-28): no batch is made there.
bool endsInCopyFromHost(const std::vector<int64_t>& kernel_calls, const std::vector<int64_t>& copy_calls, int64_t end) {
  const auto copy = std::lower_bound(copy_calls.begin(), copy_calls.end(), end);
  if (copy == copy_calls.end()) return false;
  const auto kernel = std::lower_bound(kernel_calls.begin(), kernel_calls.end(), end);
  return kernel == kernel_calls.end() || *copy <= *kernel;
}

// Steps found from their kernels or syncs run from one step's first launch to the next one's, so the host's work
// between them (a batch made with NumPy) falls inside a step, where the GPU idles through stretches of 1 ms or more
// in which the host made no CUDA call, and the batch's copy follows. With NVTX steps that work is between them, in
// the gap between steps. The median step's longest such stretch: a habit of every step, not a few hiccups (a
// jitted JAX step fed on the device had 1 ms gaps in a few of its steps, and none in the median one).
int64_t hostAwayInSteps(const Context& c, const std::vector<Interval>& loader_ranges) {
  if (c.iterations.source == analysis::IterationSource::kNvtx || c.step.timed_windows.empty()) return 0;
  const std::vector<Interval> calls = analysis::cudaCalls(c.trace, c.session);
  const std::vector<int64_t> kernel_calls = launchCallStarts(c, c.trace.kernels, [](size_t) { return true; });
  const std::vector<int64_t> copy_calls = launchCallStarts(
      c, c.trace.copies, [&](size_t i) { return c.trace.copies.kind[i] == schema::CopyKind::kHostToDevice; });
  // The GPU's busy time, the bridge's DataLoader ranges (their idle is loaderWait's, counted once) and CuPy's
  // staging of its host arrays (pageable_copies').
  std::vector<Interval> accounted = c.activity.busy;
  accounted.insert(accounted.end(), loader_ranges.begin(), loader_ranges.end());
  const std::vector<Interval> staging = stagedCopies(c).stretches;
  accounted.insert(accounted.end(), staging.begin(), staging.end());
  // A library compiling a kernel (runtime_compilation's) is no batch being made either: a JAX update jitted anew
  // every step spent 478 ms of each 495 ms step in XLA's compiler, which read as an input pipeline
  // (bench/corpus/jax_jit_in_loop, H200, 2026-11-29).
  for (const analysis::RuntimeCompile& compile : c.compiles) accounted.push_back(compile.stretch);
  accounted = analysis::mergeIntervals(std::move(accounted));
  std::vector<int64_t> per_step;
  for (const analysis::Iteration& it : c.iterations.list) {
    if (it.warmup || !c.inTimedSteps(it.start_ns)) continue;
    const std::vector<Interval> away = analysis::awayStretches(calls, it.start_ns, std::max(it.end_ns, it.gpu_end_ns));
    // The longest stretch: a batch is made in one, while eager per-op dispatch leaves many short ones (an
    // unjitted JAX step's 5 ms a step of them was no input pipeline).
    int64_t longest = 0, dispatch = 0;
    for (const Interval& i : away) {
      const int64_t own = i.end - i.start - analysis::overlapLength(accounted, i.start, i.end);
      if (endsInCopyFromHost(kernel_calls, copy_calls, i.end))
        longest = std::max(longest, own);
      else
        dispatch = std::max(dispatch, own);
    }
    // JAX's dispatch of a jitted call (its arguments' pytrees flattened and checked) is host work outside CUDA
    // too, and a call given NumPy arrays copies them after it: a stretch before a call that copies nothing shows
    // what the call's own dispatch costs. A Flax ResNet's two jitted calls a step (gradients, then the update of
    // its TrainState) each began after 2.8 ms with no CUDA call, the batch's copy only after the first
    // (bench/corpus/jax_flax_resnet_cifar's twin, H200, 2026-12-03): no batch is made there.
    if (c.framework == Framework::kJax) longest = std::max<int64_t>(0, longest - dispatch);
    per_step.push_back(longest);
  }
  return analysis::summarize(per_step).median;
}

// Per step, what the context's rank waits inside its collectives for the rank that arrives last at each: in a
// multi-rank job, the analyzer's figure for its rank; 0 in a single process.
int64_t waitInCollectives(const Context& c) {
  const analysis::RankStep* self = c.ownRank();
  return self ? self->wait_ns : 0;
}

// The DataLoader's workers with pinned memory: batches made off the main thread, pinned by the loader's own
// thread. One fix for both rules it serves (input_pipeline, pageable_copies); the plan keeps it once.
plan::Fix loaderWorkersFix(const std::string& rule) {
  return {"data_loader-1",
          "data_loader",
          rule,
          {{"num_workers", int64_t{8}}, {"pin_memory", true}, {"persistent_workers", true}}};
}

std::optional<Finding> inputPipeline(const Context& c) {
  if (c.device == analysis::kNone) return std::nullopt;
  const int64_t between = c.step.between.empty() ? 0 : c.idleBetweenStepsNs();
  const std::vector<Interval> loader_ranges = c.dataLoaderRanges();
  const LoaderWait loader = loaderWait(c, loader_ranges);
  const int64_t away = hostAwayInSteps(c, loader_ranges);
  const int64_t per_gap = between + loader.idle_ns + away;
  if (c.shareOfStep(per_gap) < 0.10) return std::nullopt;
  // In a job every rank makes its own batches, each taking its own time: a rank also waits inside its collectives
  // for the others' loading (a Lightning DDP job loading on its training threads: 33 ms a step of its
  // all-reduces' 35 ms "alone" on either rank, 2 x H100, 2026-11-27), and workers on every rank take that too.
  const int64_t waiting = waitInCollectives(c);
  Finding f = startFinding(c, kRules[2]);
  f.title = "The GPU waits " + formatDuration(per_gap) + " per step for the next batch";
  f.summary =
      "While the host loads and prepares the next batch, outside CUDA, the GPU has finished the last step's work "
      "and idles.";
  if (between > 0) {
    const int64_t gaps = analysis::totalLength(c.step.between);
    const int64_t api = apiTimeIn(c, c.step.between);
    f.evidence.push_back({"GPU idle between steps: " + formatDuration(between) + " per step (" +
                              formatShare(c.shareOfStep(between)) + " of the " + formatDuration(c.step.time_ns) +
                              " iteration); the host spent " +
                              formatShare(gaps ? static_cast<double>(api) / gaps : 0.0) +
                              " of those gaps in CUDA calls: the rest is its own work",
                          {{"time_range", "between steps", c.step.between.front().start, c.step.between.front().end}}});
  }
  if (away > 0) {
    f.evidence.push_back({"GPU idle while the host worked outside CUDA for 1 ms or more at a time: " +
                              formatDuration(away) + " per step (" + formatShare(c.shareOfStep(away)) +
                              "); no NVTX range marks the steps, so the next batch's preparation cannot be told "
                              "from the host's other work",
                          {stepRef(c)}});
  }
  if (loader.idle_ns > 0) {
    f.evidence.push_back(
        {"GPU idle while the DataLoader handed out the next batch: " + formatDuration(loader.idle_ns) + " per step (" +
             formatShare(c.shareOfStep(loader.idle_ns)) + " of the " + formatDuration(c.step.time_ns) +
             " iteration), of " + formatDuration(loader.host_ns) +
             " per step in its __next__ (the PyTorch bridge's range)",
         {{"nvtx_range", std::string(analysis::kDataLoaderRange), loader.first.start, loader.first.end}}});
  }
  // Where the loader starts its workers again at each pass, it has workers: the fix is to keep them, and it wins
  // the wait at the passes' starts and ends, not that for the other batches.
  int64_t gain_ns = per_gap + waiting;
  std::string gain_basis =
      "the GPU's idle time waiting for batches in the steady steps" +
      std::string(waiting > 0 ? ", and its waits inside the collectives for the other ranks" : "") +
      "; with the batches prepared in background workers the next one is ready when a step ends (assumes the "
      "workers together keep up with the GPU)";
  if (const LoaderRestarts restarts = loaderRestarts(c, loader_ranges); restarts.count > 0) {
    f.evidence.push_back(
        {std::to_string(restarts.count) + " of the DataLoader's __next__ calls in the steady steps took " +
             formatDuration(restarts.total_ns / restarts.count) + " each on average, " +
             formatDuration(c.perTimedStep(restarts.total_ns)) + " per step, where the median call took " +
             formatDuration(restarts.median_ns) +
             ": a pass's first batches and its end, where a loader without persistent workers starts and stops them",
         {{"nvtx_range", std::string(analysis::kDataLoaderRange), restarts.longest.start, restarts.longest.end}}});
    // The loader has workers already: more would not make its other batches come sooner.
    const int64_t other_calls = std::max<int64_t>(0, loader.idle_ns - loaderWait(c, restarts.ranges).idle_ns);
    f.title =
        "The DataLoader starts its workers again for each pass: the GPU waits " + formatDuration(per_gap) + " per step";
    f.summary =
        "At each pass over the data the loader's new workers make their first batches, and at its end it "
        "stops them, while the GPU idles.";
    f.why =
        "Without persistent_workers a DataLoader stops its worker processes at the end of each pass over the data "
        "(an epoch, an evaluation) and starts new ones at the next, which make their first batches while the GPU "
        "idles.";
    f.fix.summary = "Keep the loader's workers between passes (persistent_workers=True), batches in pinned memory.";
    gain_ns = std::max<int64_t>(0, gain_ns - other_calls);
    // Kept workers still start each pass's batches only when it begins: with persistent workers the tutorial's
    // passes still began with calls of 7-21 ms (its clean twin: 0.36 and 0.50 ms a step of this gain in two
    // recordings, 1.70 and 1.81 without them), a wait the fix does not take away. Judged against the step as the
    // program runs unrecorded where the bridge timed it (the second recording ran 20.8 ms a step, 15.5 paused).
    if (static_cast<double>(gain_ns) < 0.10 * static_cast<double>(c.unrecordedStep())) return std::nullopt;
    const std::string others = formatDuration(other_calls) + " per step";
    gain_basis =
        "the GPU's idle time waiting for batches in the steady steps less its idle in the loader's other "
        "calls (" +
        others +
        ", which kept workers do not shorten: workers made those batches already); "
        "kept between passes, the workers have the next pass's first batches ready";
  }
  if (waiting > 0) {
    f.evidence.push_back({"inside its collectives this rank waits " + formatDuration(waiting) +
                              " per step for the rank that arrives last, which makes its batches the same way",
                          {}});
  }
  f.gain = timeGain(c, gain_ns, gain_basis);
  // The waiting is kernel time (collectives spinning); the rest is the GPU's idle.
  f.gain.idle_ns = std::max<int64_t>(0, f.gain.time_ns - waiting);
  f.fix.plan.push_back(loaderWorkersFix(f.id));
  setSeverity(f);
  return f;
}

struct PageableCopies {
  int64_t count = 0, bytes = 0, time_ns = 0;
  int64_t pinned_ns = 0;  // what the same copies would take from pinned memory
  size_t first = 0;
};

// What a copy from pinned memory costs: a fixed latency and the link's bandwidth. A 4-byte pinned copy took
// 1.4-2.0 us on an H100 host (the corpus traces, 2026-11-25), so a small copy gains nothing from pinning; 16 MiB
// pinned copies ran at 52.9 GB/s each way (bench/corpus/cuda_pageable_memcpy's twin) against 12-15 GB/s pageable.
constexpr int64_t kPinnedCopyLatencyNs = 1'500;
constexpr double kPinnedBytesPerNs = 50.0;

// The trace's own pinned copies of 1 MiB or more, where there are some, give the link's bandwidth.
double pinnedBytesPerNs(const Context& c) {
  const auto& k = c.trace.copies;
  int64_t bytes = 0, time = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    const bool pinned = k.src_kind[i] == schema::MemoryKind::kPinned || k.dst_kind[i] == schema::MemoryKind::kPinned;
    if (!pinned || k.device[i] != c.device || k.bytes[i] < (int64_t{1} << 20)) continue;
    bytes += k.bytes[i];
    time += k.end_ns[i] - k.start_ns[i];
  }
  return bytes > 0 && time > 0 ? static_cast<double>(bytes) / static_cast<double>(time) : kPinnedBytesPerNs;
}

// Whether copy i is from or to pageable host memory, on the context's device, inside the steps.
bool pageableCopyInSteps(const Context& c, size_t i) {
  const auto& k = c.trace.copies;
  const bool pageable =
      k.src_kind[i] == schema::MemoryKind::kPageable || k.dst_kind[i] == schema::MemoryKind::kPageable;
  return pageable && k.device[i] == c.device && c.inSteps(k.start_ns[i]) && !c.byCompiler(k.start_ns[i]);
}

PageableCopies pageableInSteps(const Context& c) {
  PageableCopies p;
  const auto& k = c.trace.copies;
  const double pinned_rate = pinnedBytesPerNs(c);
  for (size_t i = 0; i < k.size(); ++i) {
    if (!pageableCopyInSteps(c, i)) continue;
    if (p.count++ == 0) p.first = i;
    p.bytes += k.bytes[i];
    const int64_t took = k.end_ns[i] - k.start_ns[i];
    p.time_ns += took;
    p.pinned_ns += std::min<int64_t>(took, kPinnedCopyLatencyNs + static_cast<int64_t>(k.bytes[i] / pinned_rate));
  }
  return p;
}

// CuPy's staged copies (stagedCopies): pinned to CUPTI, pageable in the program. The GPU idles while the host
// stages; with the host arrays allocated pinned, CuPy copies from them directly.
std::optional<Finding> stagedCopiesFinding(const Context& c) {
  const StagedCopies s = stagedCopies(c);
  const int64_t idle = c.perStep(s.idle_ns), staging = c.perStep(s.staging_ns);
  if (s.count == 0 || c.shareOfStep(idle) < 0.02) return std::nullopt;
  Finding f = startFinding(c, kRules[3]);
  f.title = "CuPy stages its host arrays: the host copies " + formatBytes(c.perStep(s.bytes)) + " " + perStepWords(c) +
            " into pinned buffers first (" + formatDuration(staging) + ")";
  f.summary =
      "cp.asarray and ndarray.set copy a NumPy (pageable) array into a pinned staging buffer on the host "
      "before copying it to the GPU: the GPU idles while the host copies.";
  f.why =
      "One host thread copies each array into the pinned buffer before the GPU's copy can start: the GPU "
      "idles through it, and the host does nothing else.";
  f.verify =
      "Record again: the stretches with no CUDA call before each host-to-device copy are gone, and the step "
      "falls by about their length.";
  const std::string count = perStepCount(c, s.count);
  f.evidence.push_back(
      {count + (count == "1" ? " host-to-device copy of " : " host-to-device copies of ") +
           formatBytes(s.bytes / s.count) + " on average from pinned memory " + perStepWords(c) +
           ", each issued after " + formatDuration(s.staging_ns / s.count) +
           " in which the host made no CUDA call: at least what its own copy of those bytes takes (one thread copies "
           "at most about " +
           std::to_string(static_cast<int>(kHostCopyBytesPerNs)) +
           " GB/s), CuPy's staging of a NumPy array; the GPU idled " + formatDuration(idle) + " of it " +
           perStepWords(c),
       {{"time_range", "first staging", s.stretches.front().start, s.stretches.front().end}}});
  f.gain = timeGain(c, idle,
                    "the GPU's idle time while the host staged the arrays (the stretches with no CUDA call before "
                    "each pinned copy); assumes the arrays are made in pinned memory once (cupyx.empty_pinned) and "
                    "copied from there, as CuPy then does without staging");
  f.gain.idle_ns = f.gain.time_ns;
  setSeverity(f);
  return f;
}

// Whether every pageable copy in the steps is a host-to-device copy issued within 5 ms of the end of the PyTorch
// bridge's DataLoader range before it: the batch the loader just handed out, which a loader with pin_memory hands
// out pinned.
bool copiesOfLoaderBatches(const Context& c) {
  const std::vector<Interval> loader = c.dataLoaderRanges();
  if (loader.empty()) return false;
  const auto& k = c.trace.copies;
  for (size_t i = 0; i < k.size(); ++i) {
    if (!pageableCopyInSteps(c, i)) continue;
    if (k.kind[i] != schema::CopyKind::kHostToDevice || k.launch_call[i] == analysis::kNone) return false;
    const int64_t call = c.trace.api_calls.start_ns[static_cast<size_t>(k.launch_call[i])];
    auto after =
        std::upper_bound(loader.begin(), loader.end(), call, [](int64_t t, const Interval& x) { return t < x.end; });
    if (after == loader.begin() || call - std::prev(after)->end > 5'000'000) return false;
  }
  return true;
}

std::optional<Finding> pageableCopies(const Context& c) {
  const PageableCopies p = pageableInSteps(c);
  const int64_t time = c.perStep(p.time_ns), saved = c.perStep(p.time_ns - p.pinned_ns);
  if (p.count == 0 || c.shareOfStep(saved) < 0.02) return stagedCopiesFinding(c);
  Finding f = startFinding(c, kRules[3]);
  f.title = "Pageable host copies take " + formatDuration(time) + " " + perStepWords(c);
  f.summary = "Copies to or from pageable memory go through a staging buffer and block the host.";
  const auto& k = c.trace.copies;
  f.evidence.push_back({perStepCount(c, p.count) + " pageable copies " + perStepWords(c) + ", " +
                            formatBytes(c.perStep(p.bytes)) + ", taking " + formatDuration(time) + " of GPU copy time",
                        {{"time_range", "first pageable copy", k.start_ns[p.first], k.end_ns[p.first]}}});
  f.gain = timeGain(c, saved,
                    "the pageable copies' time less what the same bytes take from pinned memory (" +
                        analysis::formatDuration(kPinnedCopyLatencyNs) +
                        " a copy and the link's bandwidth: " + std::to_string(static_cast<int>(pinnedBytesPerNs(c))) +
                        " GB/s, from the trace's own pinned copies where it has some, else as measured on an H100 "
                        "host); more where the host was blocked, as pinned copies can also overlap kernels");
  // PyTorch copying the DataLoader's batches: the loader's workers with pin_memory hand them out pinned.
  if (c.framework == Framework::kPyTorch && copiesOfLoaderBatches(c)) f.fix.plan.push_back(loaderWorkersFix(f.id));
  setSeverity(f);
  return f;
}

// Whether the steps' kernels run on a legacy default stream (most of their time) while their copies run on other
// streams (most of theirs): the copies are on streams of their own, as overlapping asks, yet the legacy default
// stream waits for the work of every blocking stream and they for its, so none runs beside the kernels. A
// light-sheet deconvolution that copied its planes on four streams and launched its kernels with no stream kept
// its copies 0.0 % overlapped (bench/corpus/cuda_lightsheet_deconv_default_stream, H200, 2026-12-03).
std::optional<int64_t> kernelsOnTheLegacyStream(const Context& c) {
  struct OnLegacy {
    int64_t all_ns = 0, legacy_ns = 0, stream_id = 0;
  };
  const auto timeOnLegacy = [&c](const analysis::GpuWorkColumns& w) {
    OnLegacy out;
    for (size_t i = 0; i < w.size(); ++i) {
      if (w.device[i] != c.device || !c.inTimedSteps(w.start_ns[i])) continue;
      out.all_ns += w.end_ns[i] - w.start_ns[i];
      if (w.stream[i] == analysis::kNone) continue;
      const analysis::Stream& stream = c.trace.streams[static_cast<size_t>(w.stream[i])];
      if (!stream.legacy_default) continue;
      out.legacy_ns += w.end_ns[i] - w.start_ns[i];
      out.stream_id = stream.stream_id;
    }
    return out;
  };
  const OnLegacy kernels = timeOnLegacy(c.trace.kernels), copies = timeOnLegacy(c.trace.copies);
  if (2 * kernels.legacy_ns < kernels.all_ns || 2 * copies.legacy_ns > copies.all_ns || copies.all_ns == 0)
    return std::nullopt;
  return kernels.stream_id;
}

std::optional<Finding> serialCopies(const Context& c) {
  const auto& tl = c.timeline;
  const int64_t copy = c.perTimedStep(tl.copy_ns), exposed = c.perTimedStep(tl.copy_ns - tl.copy_overlap_ns);
  const int64_t pageable = c.perStep(pageableInSteps(c).time_ns);  // pageable_copies' business: they cannot overlap
  const int64_t kernels_alone = c.perTimedStep(tl.busy_ns - tl.copy_ns);  // kernel time with no copy running
  if (c.shareOfStep(copy - pageable) < 0.10 || tl.copy_overlap_ns * 4 >= tl.copy_ns) return std::nullopt;
  const int64_t hidden = std::min(exposed - pageable, kernels_alone);
  if (c.shareOfStep(hidden) < 0.03) return std::nullopt;
  Finding f = startFinding(c, kRules[4]);
  f.title = "Copies run alone for " + formatDuration(exposed) + " " + perStepWords(c) + ", not overlapping compute";
  f.summary = "The GPU copies and computes in turn: no kernel runs while data moves.";
  f.evidence.push_back({"copy time " + formatDuration(copy) + " " + perStepWords(c) + " (" +
                            formatShare(c.shareOfStep(copy)) + " of the step), " +
                            formatShare(tl.copy_ns ? static_cast<double>(tl.copy_overlap_ns) / tl.copy_ns : 0.0) +
                            " of it with a kernel running",
                        {stepRef(c)}});
  f.evidence.push_back(
      {"kernels ran with no copy beside them for " + formatDuration(kernels_alone) + " " + perStepWords(c), {}});
  f.gain = timeGain(c, hidden,
                    "the shorter of the copies' time alone and the kernels' time alone: at best one hides behind "
                    "the other (assumes the next chunk's copy does not depend on this chunk's kernels, as in a "
                    "pipelined loop)");
  if (const std::optional<int64_t> stream = kernelsOnTheLegacyStream(c)) {
    f.evidence.push_back({"the kernels run on the legacy default stream (stream " + std::to_string(*stream) +
                              ", launched with no stream or stream 0) and the copies on other streams: the legacy "
                              "default stream waits for every blocking stream's work, and they for its",
                          {}});
    f.why =
        "The legacy default stream is ordered with every blocking stream: a copy queued on another stream waits "
        "for the kernels already on it, and the next kernel for the copy, whatever stream the copy is on.";
    f.fix.summary =
        "Launch the kernels on the streams their copies use (or on streams of their own), not on the legacy default "
        "stream; or compile with --default-stream per-thread, or create the copies' streams with "
        "cudaStreamNonBlocking.";
    if (c.framework == Framework::kCuda)
      f.fix.snippet = "kernel<<<grid, block, 0, streams[s]>>>(...);  // not kernel<<<grid, block>>>(...)";
    if (c.framework == Framework::kCuPy)
      f.fix.snippet =
          "stream = cp.cuda.Stream(non_blocking=True)\nwith stream:  # the kernels too, not only the copies\n"
          "    ...";
  }
  setSeverity(f);
  return f;
}

// The step device's communication kernels and its other kernels inside the steps, as disjoint intervals.
void communicationAndCompute(const Context& c, std::vector<Interval>& comm, std::vector<Interval>& compute) {
  const auto& k = c.trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    if (!c.inTimedSteps(i)) continue;
    const bool is_comm = c.kindOf(i).cls == analysis::KernelClass::kCommunication;
    (is_comm ? comm : compute).push_back({k.start_ns[i], k.end_ns[i]});
  }
  comm = analysis::mergeIntervals(std::move(comm));
  compute = analysis::mergeIntervals(std::move(compute));
}

// A loop of collectives the program issues itself: at least this many launched one after another with nothing
// but elementwise kernels and copies between (an all_reduce and a division per parameter after the backward,
// as in PyTorch's tutorial on distributed applications). DDP's bucketed all-reduces sit among the backward's
// GEMMs, FSDP's collectives among its blocks' kernels.
constexpr int64_t kLoopCollectives = 8;

// Of such a loop's host time, what DistributedDataParallel saves: its reducer does per-gradient work of its own in
// the backward (hooks, copies into the buckets). A ResNet-50 whose 161 gradients were all-reduced one by one
// (bench/corpus/dp_manual_allreduce, 2 x H100, plain) ran 28.5-30.9 ms a step, with DDP 24.7-26.0 ms, about half
// the loop's host time.
constexpr double kLoopHostSaved = 0.5;

struct CollectiveLoops {
  int64_t host_ns = 0;      // per step: each loop's first launch to its last, less the recording's cost per launch
  int64_t collectives = 0;  // per step, in those loops
};

CollectiveLoops collectiveLoops(const Context& c) {
  const auto& k = c.trace.kernels;
  const auto& api = c.trace.api_calls;
  const int64_t per_launch = c.recording_cost_per_launch_ns;
  CollectiveLoops out;
  int64_t first = -1, last = 0, collectives = 0, launches = 0;
  const auto close = [&] {
    if (collectives >= kLoopCollectives) {
      const int64_t recording = per_launch * launches;
      out.host_ns += std::max<int64_t>(0, last - first - recording);
      out.collectives += collectives;
    }
    first = -1, collectives = 0, launches = 0;
  };
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.launch_call[i] == analysis::kNone || !c.inTimedSteps(i)) continue;
    const analysis::KernelClass cls = c.kindOf(i).cls;
    const bool comm = cls == analysis::KernelClass::kCommunication;
    if (!comm && cls != analysis::KernelClass::kElementwise && cls != analysis::KernelClass::kCopy) {
      close();
      continue;
    }
    if (!comm && first < 0) continue;  // a loop starts at a collective
    const auto call = static_cast<size_t>(k.launch_call[i]);
    if (first < 0) first = api.start_ns[call];
    last = std::max(last, api.end_ns[call]);
    ++launches, collectives += comm;
  }
  close();
  // A program that issues its collectives one by one does so in every step: a run of them seen once in the
  // whole recording (DDP's buckets lining up after one slow backward) is not its loop.
  if (c.perTimedStep(out.collectives) < kLoopCollectives) return {};
  return {c.perTimedStep(out.host_ns), c.perTimedStep(out.collectives)};
}

// The fix in the program's own terms where the bridge saw how its model is spread over the ranks.
void setCommunicationFix(const Context& c, Fix& fix) {
  switch (c.dataParallel()) {
    case DataParallel::kNone:
      fix.summary =
          "The model is not wrapped in DistributedDataParallel or FSDP: the program runs its collectives "
          "itself, after the backward. Let DistributedDataParallel all-reduce the gradients in buckets "
          "while the backward of the earlier layers still runs.";
      fix.snippet =
          "model = DDP(model, device_ids=[local_rank])  # and remove the hand-written all_reduce of the gradients\n"
          "# or, keeping your own loop: all_reduce(..., async_op=True) per bucket of gradients, started from\n"
          "# param.register_post_accumulate_grad_hook, and wait() on each before optimizer.step()";
      break;
    case DataParallel::kFsdp:
      fix.summary =
          "Let FSDP gather the parameters of more than the next block while the current block "
          "computes (FSDP2's explicit prefetching), so that no all-gather waits alone.";
      fix.snippet =
          "blocks = [...]  # the fully_shard-ed blocks, in forward order\n"
          "for i, block in enumerate(blocks):\n"
          "    block.set_modules_to_forward_prefetch(blocks[i + 1:i + 3])\n"
          "    block.set_modules_to_backward_prefetch(blocks[max(0, i - 2):i][::-1])";
      break;
    default: break;
  }
}

std::optional<Finding> exposedCommunication(const Context& c) {
  if (collectivesFarBelowLink(c)) return std::nullopt;  // collective_bandwidth's finding, and its fix
  std::vector<Interval> comm, compute;
  communicationAndCompute(c, comm, compute);
  if (comm.empty()) return std::nullopt;
  const int64_t overlap = analysis::overlapLength(comm, compute);
  const int64_t total = c.perTimedStep(analysis::totalLength(comm));
  const int64_t alone = c.perTimedStep(analysis::totalLength(comm) - overlap);
  // Waiting inside collectives for a later rank moves no data: a straggler's problem (the straggler rule), or
  // the ranks' jitter, which no overlap takes away.
  const int64_t waiting = waitInCollectives(c);
  const int64_t exposed = std::max<int64_t>(0, alone - waiting);
  const int64_t compute_alone = c.perTimedStep(analysis::totalLength(compute) - overlap);
  // Where the host sets the pace, the GPU has time to spare: communication alone on its timeline then runs while
  // the host issues what comes next, and hiding it wins at most the step less the host's own work. A 2-rank DDP
  // loop of 1 x 512-token micro-batches (2 x H200) had 35 % of its step as communication alone, and all-reducing
  // once per step instead of 8 times made it no faster.
  int64_t gain = std::min({exposed, compute_alone, gpuSlack(c)});
  // Collectives the program issues one by one after the backward also cost the host that loop, which bucketed
  // all-reduces started from the backward (DDP) take in part away: the step becomes the longer of the host's
  // work less that part and the GPU's own work less what then hides.
  // Under DDP or FSDP the wrapper issues the collectives: a run of them after the backward (DDP's buckets held
  // back by one whose gradient comes last, a tied embedding's) is no loop of the program's own to replace.
  const DataParallel wrapper = c.dataParallel();
  const CollectiveLoops loops =
      wrapper == DataParallel::kDdp || wrapper == DataParallel::kFsdp ? CollectiveLoops{} : collectiveLoops(c);
  const int64_t host = hostStepAfter(c, HostChanges{});
  if (loops.host_ns > 0 && host > 0) {
    const int64_t gpu = c.perTimedStep(c.timeline.busy_ns) - waiting - std::min(exposed, compute_alone);
    const auto saved = static_cast<int64_t>(kLoopHostSaved * static_cast<double>(loops.host_ns));
    gain = std::max(gain, c.step.time_ns - std::max(host - saved, gpu));
  }
  if (c.shareOfStep(exposed) < 0.05 && loops.host_ns == 0) return std::nullopt;
  if (c.shareOfStep(gain) < 0.05) return std::nullopt;
  Finding f = startFinding(c, kRules[5]);
  f.title = "Communication runs alone for " + formatDuration(exposed) + " " + perStepWords(c);
  f.summary = "Collective kernels run while no compute kernel does: the step waits for them.";
  if (loops.host_ns > 0) {
    f.title = formatCount(loops.collectives) + " collectives " + perStepWords(c) +
              " are issued one by one, after the compute they follow: " + formatDuration(loops.host_ns) +
              " of host time";
    f.summary =
        "The program issues its collectives itself, one tensor at a time, once the compute is done: the "
        "host spends that loop's time on them and the GPU runs them with nothing beside them.";
  }
  f.evidence.push_back({"communication kernels " + formatDuration(total) + " " + perStepWords(c) + ", " +
                            formatDuration(exposed) + " of it with no compute beside it (" +
                            formatShare(c.shareOfStep(exposed)) + " of the step)",
                        {{"time_range", "first exposed collective", comm.front().start, comm.front().end}}});
  if (waiting > 0) {
    const auto& s = c.job.straggler;
    const bool other = s && c.job.ranks[s->rank_index].session != c.session;
    f.evidence.push_back(
        {"not counted: " + formatDuration(std::min(waiting, alone)) + " " + perStepWords(c) +
             " of waiting inside the collectives for the rank that arrives last" +
             (other ? " (most often rank " + std::to_string(c.job.ranks[s->rank_index].rank) + ")" : std::string()),
         {}});
  }
  f.evidence.push_back(
      {"compute with no communication beside it: " + formatDuration(compute_alone) + " " + perStepWords(c), {}});
  if (loops.host_ns > 0) {
    f.evidence.push_back({formatCount(loops.collectives) + " collectives " + perStepWords(c) +
                              " issued one after another with nothing but elementwise kernels between, which "
                              "take the host " +
                              formatDuration(loops.host_ns) + " " + perStepWords(c),
                          {}});
  }
  if (host > 0) {
    f.evidence.push_back({"the host's own work: " + formatDuration(host) + " " + perStepWords(c) +
                              (loops.host_ns > 0 ? "" : ", which no overlap shortens"),
                          {}});
  }
  setCommunicationFix(c, f.fix);
  f.gain = timeGain(c, gain,
                    loops.host_ns > 0
                        ? "the step less the longer of the host's work without half the loop of collectives "
                          "(DDP's reducer does per-gradient work of its own) and the GPU's own work (not counting "
                          "the waits for other ranks) less the communication that then hides behind compute"
                        : "the shorter of the communication's time alone and the compute's time alone: at best one "
                          "hides behind the other (collectives on their own stream, started when their data is "
                          "ready); no more than the step less the host's own work");
  setSeverity(f);
  return f;
}

}  // namespace

std::span<const Rule> timeRules() { return kRules; }

}  // namespace gpuscope::advisor
