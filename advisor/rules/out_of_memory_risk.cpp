// out_of_memory_risk: the process held nearly all of its GPU's memory at its peak. It ran, but a longer
// sequence, a larger batch, another process on the GPU or a little fragmentation will not: the allocation that
// fails is whichever comes next, not the one that is large.
#include <algorithm>

#include "advisor/rule.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatBytes;
using analysis::formatShare;

namespace {

// Held at the peak against the GPU's memory. The CUDA context, cuBLAS's workspaces and the allocator's
// rounding take the last few percent, so a process past this has next to no headroom.
constexpr double kNearlyFull = 0.9;

std::optional<Finding> outOfMemoryRisk(const Context& c);

constexpr Rule kRule = {
    .id = "out_of_memory_risk",
    .title = "The peak leaves almost none of the GPU's memory free",
    .reads =
        "device memory over time (analyzer/memory_timeline): what the process held from CUDA at its peak, "
        "what was alive then, against the GPU's memory",
    .fires_when =
        "the process held 90 % of its GPU's memory or more at its peak (not XLA's preallocation, which the "
        "preallocation rule reads)",
    .why =
        "With no headroom, a longer input, a larger batch, another process on the GPU or a little fragmentation "
        "makes the next allocation fail, wherever it is.",
    .fix = "Lower the peak: the memory findings above say by how much each fix would; or give the run a smaller batch.",
    .snippets = {"# see what holds the peak: torch.cuda.memory._record_memory_history(); ... "
                 "torch.cuda.memory._dump_snapshot('peak.pickle')\n"
                 "os.environ[\"PYTORCH_CUDA_ALLOC_CONF\"] = \"expandable_segments:True\"  # less lost to fragmentation",
                 "", "", ""},
    .verify = "Record again: `gpuscope stats --report memory_peak` shows the peak below 90 % of the GPU's memory.",
    .check = outOfMemoryRisk};

std::optional<Finding> outOfMemoryRisk(const Context& c) {
  const analysis::DeviceMemory* top = c.memory.peakDevice();
  if (!top || c.preallocated_bytes > 0) return std::nullopt;
  const int64_t capacity = c.peakDeviceCapacity();
  const int64_t held = std::max(top->peak_bytes, top->cuda_peak_bytes);
  if (capacity <= 0 || static_cast<double>(held) < kNearlyFull * static_cast<double>(capacity)) return std::nullopt;
  const double share = static_cast<double>(held) / static_cast<double>(capacity);
  Finding f = startFinding(c, kRule);
  f.title = "The peak holds " + formatShare(share) +
            " of the GPU's memory: " + formatBytes(std::max<int64_t>(0, capacity - held)) + " left";
  f.summary = "At its peak the process held " + formatBytes(held) + " of the " + formatBytes(capacity) +
              " the GPU has; the next allocation beyond it fails with out-of-memory.";
  f.evidence.push_back({"held at the peak: " + formatBytes(held) +
                            (top->cuda_peak_bytes > top->peak_bytes
                                 ? " (reserved from CUDA; tensors " + formatBytes(top->peak_bytes) + ")"
                                 : ""),
                        {{"time_range", "the peak", top->peak_ns, top->peak_ns}}});
  addLiveAtPeak(f, c, *top, "the peak");
  f.gain.basis =
      "no saving of its own: the headroom is what is left of the GPU's memory at the peak; the other "
      "memory findings estimate what each fix frees";
  f.severity = Severity::kMedium;
  return f;
}

}  // namespace

const Rule& outOfMemoryRiskRule() { return kRule; }

}  // namespace gpuscope::advisor
