// pinned_allocation: page-locked host memory allocated (and freed) inside the loop. Pinning pages is one of the
// slowest calls CUDA has (the driver locks and maps every page; a 64 MiB buffer takes milliseconds), and
// cudaFreeHost waits for the device first, so a step that pins its staging buffer each time keeps the GPU waiting
// while the host does it.
#include <algorithm>

#include "advisor/rule.h"
#include "analyzer/timeline_analysis.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatBytes;
using analysis::formatDuration;

namespace {

std::optional<Finding> pinnedAllocation(const Context& c);

constexpr Rule kRule = {
    .id = "pinned_allocation",
    .title = "Pinned host memory is allocated in every step",
    .reads =
        "the process's pinned host allocations (CUDA's memory records) and its pinning calls (cudaHostAlloc, "
        "cudaMallocHost, cudaFreeHost, cudaHostRegister and the driver's) inside the steady steps, against the "
        "GPU's idle time",
    .fires_when =
        "at least one pinned host allocation per step, and the GPU idles while the host is in pinning calls for "
        "3 % of the step or more",
    .why =
        "Pinning host memory locks and maps every page of it, milliseconds for a large buffer, and freeing it "
        "waits for the device: while the host pins, nothing new is queued and the GPU waits.",
    .fix = "Pin the staging buffers once, before the loop, and reuse them.",
    .snippets = {"# one pinned buffer, made once: copy each batch into it, then to the GPU without blocking\n"
                 "staging = torch.empty(shape, dtype=dtype, pin_memory=True)\n"
                 "staging.copy_(batch); x = staging.to(device, non_blocking=True)",
                 "", "staging = cupyx.empty_pinned(shape, dtype)  # once; then staging[...] = batch; x.set(staging)",
                 "// before the loop:\ncudaMallocHost(&staging, bytes);\n// in the loop: fill staging, then "
                 "cudaMemcpyAsync(dst, staging, bytes, cudaMemcpyHostToDevice, stream);"},
    .verify =
        "Record again: `gpuscope stats --report api` shows no cudaHostAlloc or cudaFreeHost calls inside the "
        "steps, and the GPU's idle time per step has fallen.",
    .check = pinnedAllocation};

std::optional<Finding> pinnedAllocation(const Context& c) {
  if (!c.step.from_iterations || c.device == analysis::kNone || c.session == analysis::kNone) return std::nullopt;
  const analysis::MemoryTable& m = c.trace.memory;
  int64_t allocations = 0, bytes = 0, first_ns = -1;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.session[i] != c.session || m.kind[i] != schema::MemoryKind::kPinned ||
        m.op[i] != schema::MemoryOp::kAllocation || !c.programsInTimedSteps(m.time_ns[i])) {
      continue;
    }
    ++allocations, bytes += m.bytes[i];
    if (first_ns < 0) first_ns = m.time_ns[i];
  }
  const int64_t steps = std::max<int64_t>(1, c.step.timed_count);
  if (allocations < steps) return std::nullopt;
  // The pinning calls, and the GPU's idle time inside them.
  std::vector<analysis::Interval> calls = analysis::hostPinningCalls(c.trace, c.session);
  std::erase_if(calls, [&](const analysis::Interval& call) { return !c.programsInTimedSteps(call.start); });
  const std::vector<analysis::Interval> idle = analysis::subtract(c.step.timed_windows, c.activity.busy);
  const int64_t in_calls = c.perTimedStep(analysis::totalLength(calls));
  const int64_t gpu_idle = c.perTimedStep(analysis::overlapLength(calls, idle));
  if (c.shareOfStep(gpu_idle) < 0.03) return std::nullopt;
  Finding f = startFinding(c, kRule);
  f.title = "Pinned host memory is allocated in every step: the GPU waits " + formatDuration(gpu_idle) +
            " per step while the host pins it";
  f.summary =
      "The step pins host memory each time (cudaHostAlloc or cudaMallocHost, then cudaFreeHost); the GPU "
      "idles during those calls.";
  f.evidence.push_back({perStepCount(allocations, steps) + " pinned host allocations per step, " +
                            formatBytes(bytes / steps) + " per step",
                        {{"time_range", "first pinned allocation", first_ns, first_ns}}});
  f.evidence.push_back({"the host spends " + formatDuration(in_calls) + " per step in pinning calls, " +
                            formatDuration(gpu_idle) + " of it with the GPU idle",
                        {stepRef(c)}});
  f.gain = timeGain(c, gpu_idle,
                    "the GPU's idle time while the host was inside pinning and unpinning calls in the steady "
                    "steps: with the buffers pinned once, the host queues the next work instead");
  f.gain.idle_ns = f.gain.time_ns;
  setSeverity(f);
  return f;
}

}  // namespace

const Rule& pinnedAllocationRule() { return kRule; }

}  // namespace gpuscope::advisor
