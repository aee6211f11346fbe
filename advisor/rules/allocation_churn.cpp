// allocation_churn: device memory allocated and freed again in every step. cudaMalloc and cudaFree are slow
// host calls (tens to hundreds of µs), and cudaFree waits for the whole device first, so a loop that allocates
// its scratch each iteration keeps the GPU waiting while the host allocates.
#include <algorithm>

#include "advisor/rule.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatDuration;

namespace {

// Device allocations and releases inside the timed steps (not pinned host memory, not a stream-ordered pool's).
struct Churn {
  int64_t allocations = 0, releases = 0;
  int64_t first_ns = -1;  // the first of them, for the evidence
};

Churn countChurn(const Context& c) {
  Churn churn;
  const auto& m = c.trace.memory;
  for (size_t i = 0; i < m.size(); ++i) {
    if (!c.cudaDeviceMemoryEvent(i) || !c.programsInTimedSteps(m.time_ns[i])) continue;
    (m.op[i] == schema::MemoryOp::kAllocation ? churn.allocations : churn.releases) += 1;
    if (churn.first_ns < 0) churn.first_ns = m.time_ns[i];
  }
  return churn;
}

std::optional<Finding> allocationChurn(const Context& c);

constexpr Rule kRule = {
    .id = "allocation_churn",
    .title = "Device memory is allocated and freed in every step",
    .reads =
        "the process's device allocations and releases (CUDA's memory records) inside the steady steps, and "
        "the GPU's idle time while the host was in allocation and free calls or after an allocator's "
        "synchronisation (analyzer/timeline_analysis)",
    .fires_when =
        "at least one device allocation and one release per step, and the GPU idles while the host is in "
        "those calls for 3 % of the step or more",
    .why =
        "cudaMalloc and cudaFree are slow calls, and cudaFree first waits for every kernel on the device to "
        "finish: while the host allocates, nothing is queued and the GPU waits.",
    .fix = "Allocate the buffers once, before the loop, and reuse them; or allocate from a stream-ordered pool.",
    .snippets = {"# the caching allocator reuses memory unless it is emptied: drop torch.cuda.empty_cache() from the "
                 "loop,\n# and keep tensor sizes steady so cached blocks fit",
                 "# keep XLA's allocator (the default) rather than XLA_PYTHON_CLIENT_ALLOCATOR=platform",
                 "# the default memory pool reuses freed blocks: do not call free_all_blocks() in the loop",
                 "// before the loop:\ncudaMalloc(&scratch, bytes);\n// in the loop, if sizes change: "
                 "cudaMallocAsync(&p, bytes, stream); ... cudaFreeAsync(p, stream);"},
    .verify =
        "Record again: `gpuscope stats --report memory` shows no allocations inside the steps, and the "
        "GPU's idle time per step has fallen.",
    .check = allocationChurn};

std::optional<Finding> allocationChurn(const Context& c) {
  if (!c.step.from_iterations || c.device == analysis::kNone || c.session == analysis::kNone) return std::nullopt;
  const Churn churn = countChurn(c);
  const int64_t steps = std::max<int64_t>(1, c.step.timed_count);
  if (churn.allocations < steps || churn.releases < steps) return std::nullopt;
  // The timeline gives the GPU's idle time while the host was in such calls (its "allocating" idle).
  const int64_t idle = c.perTimedStep(c.timeline.idle.allocating_ns);
  if (c.shareOfStep(idle) < 0.03) return std::nullopt;
  Finding f = startFinding(c, kRule);
  f.title = "Device memory is allocated and freed in every step: the GPU waits " + formatDuration(idle) +
            " per step while the host allocates";
  f.summary = "The step allocates device memory and frees it again each time; the GPU idles during those calls.";
  f.evidence.push_back({perStepCount(churn.allocations, steps) + " allocations and " +
                            perStepCount(churn.releases, steps) + " releases of device memory per step",
                        {{"time_range", "first allocation", churn.first_ns, churn.first_ns}}});
  f.evidence.push_back({"the host spends " + formatDuration(c.host.allocation_ns) +
                            " per step allocating and freeing (the calls and the allocator's own work between them); "
                            "the GPU idles " +
                            formatDuration(idle) +
                            " per step in them and after the allocator's synchronisations, until the next launch",
                        {stepRef(c)}});
  f.gain = timeGain(c, idle,
                    "the GPU's idle time while the host was allocating or freeing in the steady steps, and after "
                    "the allocator's synchronisations until the next launch: with the buffers allocated once, the "
                    "host queues the next kernels instead");
  f.gain.idle_ns = f.gain.time_ns;
  setSeverity(f);
  return f;
}

}  // namespace

const Rule& allocationChurnRule() { return kRule; }

}  // namespace gpuscope::advisor
