// What fills device memory at its peak, and whether it grows: activations that checkpointing would drop,
// optimizer state that 8-bit or sharded state would shrink, allocations that are never freed.
#include <algorithm>
#include <set>

#include "advisor/rule.h"
#include "analyzer/tensor_replay.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatBytes;
using analysis::formatCount;
using analysis::formatDuration;
using analysis::formatShare;
using analysis::MemoryCategory;

namespace {

std::optional<Finding> activationMemory(const Context& c);
std::optional<Finding> optimizerMemory(const Context& c);
std::optional<Finding> memoryLeak(const Context& c);
std::optional<Finding> poolFragmentation(const Context& c);

constexpr Rule kRules[] = {
    {.id = "activation_memory",
     .title = "Activations dominate peak memory",
     .reads = "memory categories at the peak and the memory model's checkpointing what-if; forward-phase GPU time",
     .fires_when = "activations saved for backward are 40 % of the peak or more (for the time goal: and checkpointing "
                   "would free 1 % of the GPU's memory or more)",
     .why = "Every layer's outputs stay alive from its forward to its backward; at the peak all of them are alive.",
     .snippets = {"from torch.utils.checkpoint import checkpoint_sequential\n"
                  "out = checkpoint_sequential(model.layers, segments=SEGMENTS, input=x, use_reentrant=False)",
                  "layer = jax.checkpoint(layer)  # jax.remat: recompute in the backward pass", "",
                  "// keep the inputs of every k-th layer; recompute the layers in between during the backward pass"},
     .verify = "Record again: `gpuscope stats --report memory_categories` shows the activations' share of the peak "
               "fallen, and the step time grown by about one forward pass.",
     .check = activationMemory},
    {.id = "optimizer_memory",
     .title = "Optimizer state dominates peak memory",
     .reads = "memory categories at the peak and the memory model's optimizer-state what-ifs",
     .fires_when = "optimizer state is 25 % of the peak or more (for the time goal: and 8-bit state would free 1 % of "
                   "the GPU's memory or more)",
     .why = "Adam keeps two fp32 values per parameter: twice the parameters' own size, alive for the whole run.",
     .fix = "Keep the optimizer state in 8 bits, or shard it across the data-parallel GPUs.",
     .snippets = {"import bitsandbytes as bnb\noptimizer = bnb.optim.AdamW8bit(model.parameters(), lr=lr)\n"
                  "# or with several GPUs: torch.distributed.optim.ZeroRedundancyOptimizer",
                  "# optax with bf16 moments: optax.adamw(lr, mu_dtype=jnp.bfloat16)", "",
                  "// store the moments in 8 bits with per-block scales, or split them across ranks"},
     .verify = "Record again: `gpuscope stats --report memory_categories` shows optimizer state about 4× smaller.",
     .check = optimizerMemory},
    {.id = "memory_leak",
     .title = "Device memory grows from step to step",
     .reads = "live device memory at the end of each steady iteration (analyzer/memory_timeline); for JAX recorded "
              "with --jax, XLA's bytes in use",
     .fires_when = "live memory grows at every measuring point (end of each steady step)",
     .why = "Memory that grows every step runs out in a long enough run, however much the GPU has.",
     .fix = "Free what each step allocates, or stop keeping references to it across steps.",
     .snippets = {"losses.append(loss.item())  # not loss: a tensor keeps its graph and memory alive\n"
                  "# look for tensors stored in lists, dicts or caches across steps",
                  "# look for arrays kept across steps (lists of outputs, caches)",
                  "# free arrays kept across steps: del x",
                  "cudaFree(buffer);  // or cudaFreeAsync(buffer, stream) for each allocation made in the loop"},
     .verify = "Record again: `gpuscope stats --report memory` no longer reports growth.",
     .check = memoryLeak},
    {.id = "pool_fragmentation",
     .title = "A memory pool reserves far more than it hands out",
     .reads = "memory pools: reserved and used bytes from the pools' own records (analyzer/memory_pools)",
     .fires_when =
         "a stream-ordered pool holds 25 % more than it has handed out, and at least 16 MiB, while "
         "allocations are live; or PyTorch's caching allocator (its events in the trace) reserved 512 MiB "
         "and a quarter of its reservation more than its tensors' peak, a reservation of 5 % of the GPU's memory "
         "or more",
     .why = "Memory a pool reserved but cannot hand out — freed blocks too small or too scattered for the next "
            "request — is held by the process and lost to every other allocation, including the one that then "
            "fails with out-of-memory.",
     .fix = "Let the allocator map memory in growable segments, or trim the pool between phases, and allocate "
            "the largest buffers first.",
     .snippets =
         {"# before the first CUDA call:\nos.environ[\"PYTORCH_CUDA_ALLOC_CONF\"] = \"expandable_segments:True\"",
          "# XLA_PYTHON_CLIENT_ALLOCATOR=platform releases memory as it is freed (slower, no fragmentation)",
          "cupy.get_default_memory_pool().free_all_blocks()  # between phases",
          "cudaMemPoolTrimTo(pool, 0);  // between phases, or set cudaMemPoolAttrReleaseThreshold lower"},
     .verify = "Record again: `gpuscope stats --report memory_pools` shows reserved close to used.",
     .check = poolFragmentation},
};

const analysis::WhatIf* whatIf(const Context& c, std::string_view id) {
  for (const auto& w : c.model.what_ifs) {
    if (w.id == id) return &w;
  }
  return nullptr;
}

Gain memoryGain(const Context& c, const analysis::WhatIf& w) {
  Gain g;
  g.memory_bytes = std::max<int64_t>(0, c.model.measured_peak_bytes - w.predicted_peak_bytes);
  g.share_of_peak = c.shareOfPeak(g.memory_bytes);
  g.basis = "the memory model fitted to this trace (" + w.change + "): " + w.basis;
  return g;
}

// A peak under half the GPU's memory runs out of nothing: a memory-for-time trade there is worth knowing (to fit a
// larger batch or model) but is no problem of the program's, so it is reported low, and says why.
void lowWithHeadroom(const Context& c, Finding& f) {
  const int64_t capacity = c.peakDeviceCapacity();
  if (capacity <= 0 || 2 * c.model.measured_peak_bytes >= capacity) return;
  f.severity = Severity::kLow;
  f.evidence.push_back(
      {"the peak is " + formatShare(static_cast<double>(c.model.measured_peak_bytes) / static_cast<double>(capacity)) +
           " of the GPU's " + formatBytes(capacity) +
           ": this matters to fit a larger batch or model, not to run this one",
       {}});
}

double shareAtPeak(const Context& c, MemoryCategory category) {
  return c.shareOfPeak(c.categories.usage[static_cast<size_t>(category)].at_device_peak_bytes);
}

Evidence categoryEvidence(const Context& c, MemoryCategory category) {
  const auto& u = c.categories.usage[static_cast<size_t>(category)];
  return {std::string(analysis::toString(category)) + ": " + formatBytes(u.at_device_peak_bytes) + " of the " +
              formatBytes(c.model.measured_peak_bytes) + " peak (" + formatShare(shareAtPeak(c, category)) + "), in " +
              formatCount(u.allocations) + " allocations",
          {{"time_range", "memory peak", u.peak_ns, u.peak_ns}}};
}

std::optional<Finding> activationMemory(const Context& c) {
  const analysis::WhatIf* w = whatIf(c, "checkpointing");
  if (!c.categories.phases_found || !w || shareAtPeak(c, MemoryCategory::kActivations) < 0.40) return std::nullopt;
  Finding f = startFinding(c, kRules[0]);
  f.gain = memoryGain(c, *w);
  int64_t segments = w->setting;
  const std::optional<analysis::TensorReplay> replay =
      analysis::replayTensors(c.trace, c.memory, c.categories, {.checkpoint_blocks = true});
  if (replay && replay->blocks > 0 && replay->peak_bytes < c.model.measured_peak_bytes) {
    segments = replay->blocks;
    f.gain.memory_bytes = c.model.measured_peak_bytes - replay->peak_bytes;
    f.gain.share_of_peak = c.shareOfPeak(f.gain.memory_bytes);
    f.gain.basis = "the run's tensors (PyTorch's allocator events) replayed with each of the " +
                   std::to_string(replay->blocks) +
                   " repeated blocks checkpointed: the activations its forward made, but its output, live until "
                   "the forward ends and again from the start of its backward";
  }
  // Recomputation runs the checkpointed forward again: the repeated blocks' forward kernels where the PyTorch
  // bridge's module ranges show them, else the whole forward pass's.
  const int64_t blocks = c.blockForwardKernelNs();
  const PhaseWork forward = c.phaseWork(analysis::Phase::kForward);
  f.gain.extra_time_ns = c.perStep(blocks > 0 ? blocks : forward.kernel_ns);
  if (blocks > 0) {
    f.gain.basis += "; the extra time is the GPU time of the repeated blocks' forward kernels, run again";
  } else if (forward.ranges) {
    f.gain.basis += "; the extra time is one more forward pass (its kernels' GPU time)";
  }
  f.title = "Activations hold " + formatShare(shareAtPeak(c, MemoryCategory::kActivations)) +
            " of peak memory; checkpointing would free " + formatBytes(f.gain.memory_bytes);
  f.summary = "Most of the peak is activations kept from the forward pass for the backward pass.";
  f.evidence.push_back(categoryEvidence(c, MemoryCategory::kActivations));
  f.evidence.push_back({formatCount(c.model.layers) + " activation allocations per step", {}});
  f.fix.summary =
      "Checkpoint the model in " + std::to_string(segments) +
      " segments: keep only segment inputs and recompute the rest in the backward pass" +
      (f.gain.extra_time_ns ? ", at about " + formatDuration(f.gain.extra_time_ns) + " more per step" : "") + ".";
  if (const size_t at = f.fix.snippet.find("SEGMENTS"); at != std::string::npos) {
    f.fix.snippet.replace(at, 8, std::to_string(segments));
  }
  f.fix.plan.push_back({"checkpoint-1", "checkpoint", f.id, {{"segments", segments}}});
  setSeverity(f);
  lowWithHeadroom(c, f);
  return f;
}

std::optional<Finding> optimizerMemory(const Context& c) {
  const analysis::WhatIf* w = whatIf(c, "optimizer_8bit");
  if (!c.categories.phases_found || !w || shareAtPeak(c, MemoryCategory::kOptimizerState) < 0.25) return std::nullopt;
  Finding f = startFinding(c, kRules[1]);
  f.gain = memoryGain(c, *w);
  f.title = "Optimizer state holds " + formatShare(shareAtPeak(c, MemoryCategory::kOptimizerState)) +
            " of peak memory; 8-bit state would free " + formatBytes(f.gain.memory_bytes);
  f.summary = "The optimizer's per-parameter state (Adam's two moments) is a large part of the peak.";
  f.evidence.push_back(categoryEvidence(c, MemoryCategory::kOptimizerState));
  f.evidence.push_back({formatCount(c.model.parameter_count) + " parameters (estimated), " +
                            analysis::formatFixed(c.model.optimizer_states_per_param, 1) + " fp32 values of state each",
                        {}});
  if (const analysis::WhatIf* sharded = whatIf(c, "optimizer_sharded")) {
    f.evidence.push_back({"sharded over " + std::to_string(sharded->setting) + " GPUs (ZeRO-1) the peak would be " +
                              formatBytes(sharded->predicted_peak_bytes),
                          {}});
  }
  f.fix.plan.push_back({"optimizer-state-1", "optimizer", f.id, {{"setting", std::string("8bit")}}});
  setSeverity(f);
  lowWithHeadroom(c, f);
  return f;
}

std::optional<Finding> memoryLeak(const Context& c) {
  const analysis::LeakCheck& leak = c.memory.leak;
  if (!leak.growing || leak.samples.size() < 2) return std::nullopt;
  Finding f = startFinding(c, kRules[2]);
  const int64_t grown = leak.samples.back() - leak.samples.front();
  const bool xla = !leak.measure.empty();  // XLA's own readings: its buffers, inside the reservation CUDA sees
  f.title = std::string(xla ? "XLA's memory in use grows by " : "Device memory grows by ") + leak.growthWords();
  f.summary = xla ? "What XLA's allocator has in use rises through the steps: arrays made in the loop stay alive."
                  : "Live device memory rises at every measuring point: allocations made in the loop are not freed.";
  f.evidence.push_back({(xla ? leak.measure : "live memory") + " went from " + formatBytes(leak.samples.front()) +
                            " to " + formatBytes(leak.samples.back()) + " over " + std::to_string(leak.samples.size()) +
                            " measuring points (" + leak.basis + ")",
                        {}});
  for (size_t i = 0; i < leak.suspects.size() && i < 3; ++i) {
    const auto& a = c.memory.allocations[static_cast<size_t>(leak.suspects[i])];
    f.evidence.push_back({"never freed: " + formatBytes(a.bytes) + " by " + analysis::creatorOf(c.trace, a),
                          {{"allocation", "", a.alloc_ns, a.alloc_ns}}});
  }
  f.gain.memory_bytes = grown;
  f.gain.share_of_peak = c.shareOfPeak(grown);
  f.gain.basis = "the growth over the recorded run; it keeps growing in a longer one";
  setSeverity(f);
  f.severity = std::max(f.severity, Severity::kMedium);  // it ends in an out-of-memory error in a long run
  return f;
}

// A reservation this small a share of the GPU takes nothing another allocation needs: PyTorch's caching allocator
// held 1.6-3.0 GiB for 0.8-2.2 GiB of tensors in two clean 2-rank jobs on 80 GiB H100s (2026-11-27), an unused
// gigabyte no program misses; the planted cases reserved 7 GiB and more.
constexpr double kPoolShareOfGpu = 0.05;

bool smallOnItsGpu(const Context& c, int64_t reserved) {
  const int64_t capacity = c.peakDeviceCapacity();
  return capacity > 0 && static_cast<double>(reserved) < kPoolShareOfGpu * static_cast<double>(capacity);
}

// PyTorch's caching allocator (and CuPy's memory pool, with gpuscope's CuPy bridge) is a pool too: it reserves
// segments with cudaMalloc and hands tensors out of them. With its own events in the trace (record --torch, import),
// what it reserved at its peak against its tensors' peak is what it held and never needed at once: segments whose freed
// blocks did not fit the sizes asked for next. Some slack is the cache doing its job, so it takes a quarter of the
// reservation and 512 MiB.
std::optional<Finding> cachingAllocatorFragmentation(const Context& c) {
  const analysis::DeviceMemory* top = c.memory.peakDevice();
  if (!c.memory.hasTensors() || !top || top->cuda_peak_bytes == 0) return std::nullopt;
  const int64_t reserved = top->cuda_peak_bytes, used = top->peak_bytes, slack = reserved - used;
  if (slack < (int64_t{512} << 20) || slack * 4 < reserved) return std::nullopt;
  if (smallOnItsGpu(c, reserved)) return std::nullopt;
  // The segments, from CUDA's records (the analysis measures this process by its tensors).
  const analysis::MemoryTable& m = c.trace.memory;
  int64_t segments = 0, freed = 0;
  std::set<int64_t> sizes;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.device[i] != top->device || m.kind[i] != schema::MemoryKind::kDevice) continue;
    const bool allocation = m.op[i] == schema::MemoryOp::kAllocation;
    segments += allocation, freed += !allocation;
    if (allocation) sizes.insert(m.bytes[i]);
  }
  // CuPy's pool (its bridge's events) keeps every block it got and never merges them: the same measure.
  const bool cupy = c.framework == Framework::kCuPy;
  const std::string pool = cupy ? "CuPy's memory pool" : "PyTorch's caching allocator";
  const std::string blocks = cupy ? "arrays" : "tensors";
  Finding f = startFinding(c, kRules[3]);
  f.title = pool + " holds " + formatBytes(slack) + " more than its " + blocks + " ever need";
  f.summary = "The " + std::string(cupy ? "pool" : "caching allocator") + " reserved " + formatBytes(reserved) +
              " from CUDA while its " + blocks + " peaked at " + formatBytes(used) +
              ": freed blocks that did not fit the sizes asked for next stayed reserved.";
  f.evidence.push_back({"reserved at most " + formatBytes(reserved) + " (CUDA's allocations), " + blocks + " at most " +
                            formatBytes(used) + " (the allocator's own events): " + formatBytes(slack) +
                            " never in use at once (" +
                            formatShare(static_cast<double>(slack) / static_cast<double>(reserved)) + ")",
                        {{"time_range", "peak in use", top->peak_ns, top->peak_ns}}});
  f.evidence.push_back({formatCount(segments) + " segments from cudaMalloc in " + formatCount(sizes.size()) +
                            " different sizes, " + formatCount(freed) + " of them given back (" +
                            (cupy ? "free_all_blocks" : "empty_cache or an out-of-memory retry") + ")",
                        {}});
  f.gain.memory_bytes = slack;
  f.gain.share_of_peak = static_cast<double>(slack) / static_cast<double>(reserved);
  if (cupy) {
    f.gain.basis =
        "the pool's reservation at its peak less its arrays' peak (CUDA's records and the pool's events from "
        "gpuscope's CuPy bridge): with the pool's free blocks given back between phases, or CUDA's stream-ordered "
        "pool (cupy.cuda.MemoryAsyncPool), which reuses freed memory for any size, it holds about the arrays' peak";
    f.fix.summary =
        "Give the pool's free blocks back between phases of different sizes (free_all_blocks), cap the pool "
        "(set_limit), or let CUDA's stream-ordered pool serve the arrays (cupy.cuda.MemoryAsyncPool).";
  } else {
    f.gain.basis =
        "the allocator's reservation at its peak less its tensors' peak (CUDA's records and PyTorch's allocator "
        "events): with expandable segments it maps freed pages to the sizes asked for instead of holding "
        "whole segments, and holds about the tensors' peak";
    f.fix.plan.push_back({"allocator-1", "allocator", f.id, {{"setting", std::string("expandable_segments:True")}}});
  }
  setSeverity(f);
  return f;
}

// What a stream-ordered pool reserved at its largest beyond the most its allocations held at once: memory it never
// needed. Reserved against in use at one moment is not that: a pool told to keep what is freed (its release
// threshold) holds the next step's buffers between steps (a heat solver that takes its field from the pool each
// step: 160 MiB reserved and 64 MiB in use between steps, 128 MiB in use at its peak; H200, 2026-11-28).
// A pool that handed nothing out holds only what it reserved when made (NCCL's and PyTorch's pools, 32 MiB): 0.
int64_t neverNeeded(const analysis::PoolUsage& p) {
  return p.allocations > 0 ? p.peak_reserved_bytes - p.peak_used_bytes : 0;
}

std::optional<Finding> poolFragmentation(const Context& c) {
  const analysis::PoolUsage* worst = nullptr;
  for (const auto& p : c.pools) {
    if (!worst || neverNeeded(p) > neverNeeded(*worst)) worst = &p;
  }
  if (!worst || neverNeeded(*worst) < (int64_t{16} << 20) || neverNeeded(*worst) * 4 < worst->peak_reserved_bytes) {
    return cachingAllocatorFragmentation(c);
  }
  Finding f = startFinding(c, kRules[3]);
  const int64_t slack = neverNeeded(*worst);
  f.title = "A memory pool holds " + formatBytes(slack) + " it does not hand out";
  f.summary = "A stream-ordered memory pool reserved up to " + formatBytes(worst->peak_reserved_bytes) +
              " from the device while its allocations never held more than " + formatBytes(worst->peak_used_bytes) +
              " at once.";
  f.evidence.push_back({"pool reserved " + formatBytes(worst->worst.reserved_bytes) + ", in use " +
                            formatBytes(worst->worst.used_bytes) + " at its most reserved-but-unused moment",
                        {{"time_range", "pool record", worst->worst.time_ns, worst->worst.time_ns}}});
  f.evidence.push_back(
      {formatCount(worst->allocations) + " allocations from the pool; at most " + formatBytes(worst->peak_used_bytes) +
           " in use, up to " + formatBytes(worst->peak_reserved_bytes) + " reserved: " + formatBytes(slack) +
           " never needed at once (" +
           formatShare(static_cast<double>(slack) / static_cast<double>(worst->peak_reserved_bytes)) + ")",
       {}});
  f.gain.memory_bytes = slack;
  const int64_t peak = std::max(c.model.measured_peak_bytes, worst->peak_reserved_bytes);
  f.gain.share_of_peak = peak > 0 ? static_cast<double>(slack) / static_cast<double>(peak) : 0.0;
  f.gain.basis =
      "the pool's largest reservation less the most its allocations held at once (CUPTI memory-pool records "
      "and its allocations): what an allocator that maps memory on demand would not hold";
  f.fix.plan.push_back({"allocator-1", "allocator", f.id, {{"setting", std::string("expandable_segments:True")}}});
  setSeverity(f);
  return f;
}

}  // namespace

std::span<const Rule> memoryRules() { return kRules; }

}  // namespace gpuscope::advisor
