// preallocation: XLA's allocator (JAX) reserves 75 % of the GPU's memory when the first array is made, whatever
// the program needs. The program then runs, but every other process on that GPU, and any other allocator in the
// same one (a PyTorch or CuPy step beside JAX), finds the memory gone; and the trace's peak is the reservation,
// not the program's use.
#include <algorithm>

#include "advisor/rule.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatBytes;
using analysis::formatShare;

namespace {

std::optional<Finding> preallocation(const Context& c);

constexpr Rule kRule = {
    .id = "preallocation",
    .title = "The allocator reserved most of the GPU's memory up front",
    .reads = "the process's device allocations (CUDA's memory records) against the GPU's memory",
    .fires_when = "a JAX process reserves half of the GPU's memory or more in one allocation (XLA's preallocation)",
    .why =
        "XLA reserves 75 % of the GPU when the first array is made, whatever the program needs: other processes "
        "and other allocators on that GPU find the memory gone, and the process looks as large as the reservation.",
    .fix = "Let XLA allocate as the program needs, or cap its share of the GPU.",
    .snippets = {"",
                 "# before importing jax:\nos.environ[\"XLA_PYTHON_CLIENT_PREALLOCATE\"] = \"false\"\n"
                 "# or keep preallocating, a smaller share: os.environ[\"XLA_PYTHON_CLIENT_MEM_FRACTION\"] = \".30\"",
                 "", ""},
    .verify =
        "Record again: `gpuscope stats --report memory` shows a peak near what the program uses; "
        "jax.devices()[0].memory_stats() shows the bytes in use.",
    .check = preallocation};

std::optional<Finding> preallocation(const Context& c) {
  if (c.preallocated_bytes == 0) return std::nullopt;  // the context finds it (XLA's, JAX only)
  const int64_t gpu_bytes = c.trace.devices[static_cast<size_t>(c.device)].global_memory_bytes;
  const int64_t reserved = c.preallocated_bytes;
  const double share = static_cast<double>(reserved) / static_cast<double>(gpu_bytes);
  const int64_t when = c.trace.memory.time_ns[c.preallocation];
  Finding f = startFinding(c, kRule);
  f.title = "XLA reserved " + formatBytes(reserved) + ", " + formatShare(share) + " of the GPU's memory, up front";
  f.summary =
      "JAX's allocator took most of the GPU in one allocation; how much of it the program uses is XLA's to "
      "know: CUDA sees the reservation only.";
  f.evidence.push_back({"one allocation of " + formatBytes(reserved) + " on a GPU of " + formatBytes(gpu_bytes),
                        {{"time_range", "the reservation", when, when}}});
  const int64_t in_use = c.xla_peak_in_use_bytes;
  if (in_use == 0) {
    f.evidence.push_back(
        {"in use inside it: unknown (XLA hands it out itself; `gpuscope record --jax` reads it); the trace's peak "
         "device memory is the reservation, not the program's use",
         {}});
    f.gain.basis =
        "what the program uses of the reservation is not in the trace (jax.Device.memory_stats() reports it); "
        "without preallocation the process holds only that";
    setSeverity(f);
    return f;
  }
  f.evidence.push_back({"in use inside it at its peak: " + formatBytes(in_use) + ", " +
                            formatShare(static_cast<double>(in_use) / static_cast<double>(reserved)) +
                            " of the reservation (XLA's memory_stats(), " + std::to_string(c.xla_samples) +
                            " readings)",
                        {}});
  f.gain.memory_bytes = std::max<int64_t>(0, reserved - in_use);
  f.gain.share_of_peak = static_cast<double>(f.gain.memory_bytes) / static_cast<double>(reserved);
  f.gain.basis =
      "the reservation less the most XLA had in use (peak_bytes_in_use of memory_stats(), read by `record --jax`): "
      "allocating as it goes, the process holds about what it uses, plus XLA's own rounding";
  // Set by `gpuscope apply` before the program starts; the JAX bridge checks XLA's pool against the reservation.
  f.fix.plan.push_back({"allocator-1",
                        "allocator",
                        f.id,
                        {{"variable", std::string("XLA_PYTHON_CLIENT_PREALLOCATE")},
                         {"setting", std::string("false")},
                         {"reserved_bytes", reserved}}});
  setSeverity(f);
  return f;
}

}  // namespace

const Rule& preallocationRule() { return kRule; }

}  // namespace gpuscope::advisor
