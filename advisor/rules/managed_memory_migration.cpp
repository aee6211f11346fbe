// managed_memory_migration: unified memory (cudaMallocManaged) moved on demand in the steps. A page the host wrote
// and a kernel then reads is not there: the GPU faults, stalls, and the driver migrates it over, a group of pages
// at a time; a page the kernel wrote and the host then touches comes back the same way. No copy in the trace shows
// it: it hides inside the kernels' time and the host's. CUPTI's unified-memory records (recorded from the program's
// first managed allocation) show the migrations, the faults and how long they took.
#include <algorithm>

#include "advisor/rule.h"
#include "analyzer/intervals.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatBytes;
using analysis::formatDuration;
using schema::MigrationKind;

namespace {

std::optional<Finding> managedMemoryMigration(const Context& c);

constexpr Rule kRule = {
    .id = "managed_memory_migration",
    .title = "Unified memory migrates on demand in every step",
    .reads =
        "CUPTI's unified-memory records in the steady steps: pages migrated to and from the GPU, GPU page-fault "
        "groups and CPU page faults, with the time the migrations and the GPU's faults took",
    .fires_when =
        "managed pages migrate on demand inside the steps, and the migrations and the GPU's faults cover 5 % of "
        "the step or more",
    .why =
        "Each access to a managed page that is on the other side stops the accessor until the driver has moved "
        "it: the GPU stalls mid-kernel on its faults and the host inside its loops, and pages that go back and "
        "forth every step are moved twice a step, a few pages at a time instead of in one copy.",
    .fix =
        "Place unified memory where it is used: prefetch it to the GPU before the kernels that read it "
        "(cudaMemPrefetchAsync), keep data the host writes for the GPU in host memory the GPU reads directly "
        "(cudaMemAdviseSetPreferredLocation to the host, cudaMemAdviseSetAccessedBy the GPU), and keep results "
        "on the GPU (reduce them there) instead of reading them page by page from the host.",
    .snippets = {"", "",
                 "# CuPy's managed pool: prefetch before use\n"
                 "cupy.cuda.runtime.memPrefetchAsync(a.data.ptr, a.nbytes, device_id, stream.ptr)",
                 "// after the host has written it, before the kernel that reads it:\n"
                 "cudaMemLocation gpu{cudaMemLocationTypeDevice, device};\n"
                 "cudaMemPrefetchAsync(data, bytes, gpu, 0, stream);\n"
                 "// or data the host rewrites every step stays in host memory, read by the GPU:\n"
                 "cudaMemAdvise(data, bytes, cudaMemAdviseSetPreferredLocation, {cudaMemLocationTypeHost, 0});\n"
                 "cudaMemAdvise(data, bytes, cudaMemAdviseSetAccessedBy, gpu);"},
    .verify =
        "Record again: `gpuscope stats --report unified_memory` shows few migrations and faults, and the step is "
        "shorter.",
    .check = managedMemoryMigration};

// CPU faults within this of one another are one stretch of the host's faulting through its loop.
constexpr int64_t kHostFaultGapNs = 1'000'000;

struct Migrations {
  int64_t to_device_bytes = 0, to_host_bytes = 0, device_faults = 0, host_faults = 0;
  std::vector<analysis::Interval> busy;  // migrations and the GPU's fault handling, merged
  int64_t host_faulting_ns = 0;          // the host's stretches of CPU faults, first to last in each
  int64_t first_ns = -1;
};

// The stretches in which the host kept faulting: CUPTI gives a CPU fault no duration, so only their span is known.
int64_t hostFaultingTime(const std::vector<int64_t>& faults) {
  int64_t total = 0;
  for (size_t i = 0, first = 0; i < faults.size(); ++i) {
    if (i + 1 == faults.size() || faults[i + 1] - faults[i] > kHostFaultGapNs) {
      total += faults[i] - faults[first];
      first = i + 1;
    }
  }
  return total;
}

Migrations migrationsInSteps(const Context& c) {
  Migrations m;
  std::vector<int64_t> host_faults;
  for (const schema::UnifiedMemoryRow& u : c.trace.unified_memory) {
    if (u.session_id != c.session || !c.programsInTimedSteps(u.start_ns)) continue;
    switch (u.kind) {
      case MigrationKind::kToDevice: m.to_device_bytes += u.value; break;
      case MigrationKind::kToHost: m.to_host_bytes += u.value; break;
      case MigrationKind::kDeviceFault: ++m.device_faults; break;
      case MigrationKind::kHostFault: host_faults.push_back(u.start_ns); continue;  // no duration
      default: continue;
    }
    if (m.first_ns < 0) m.first_ns = u.start_ns;
    if (u.end_ns > u.start_ns) m.busy.push_back({u.start_ns, u.end_ns});
  }
  m.busy = analysis::mergeIntervals(std::move(m.busy));
  m.host_faults = static_cast<int64_t>(host_faults.size());
  m.host_faulting_ns = hostFaultingTime(host_faults);
  return m;
}

std::optional<Finding> managedMemoryMigration(const Context& c) {
  if (c.session == analysis::kNone || c.trace.unified_memory.empty()) return std::nullopt;
  const Migrations m = migrationsInSteps(c);
  const int64_t steps = std::max<int64_t>(1, c.step.timed_count);
  const int64_t migrating = c.perTimedStep(analysis::totalLength(m.busy));
  if (m.to_device_bytes + m.to_host_bytes == 0 || c.shareOfStep(migrating) < 0.05) return std::nullopt;
  Finding f = startFinding(c, kRule);
  f.title = "Unified memory migrates on demand: " + formatDuration(migrating) +
            " per step of page migrations and GPU page faults";
  f.summary =
      "Managed memory moves between the host and the GPU page by page as each side touches it, inside the "
      "kernels and the host's loops.";
  f.evidence.push_back({formatBytes(m.to_device_bytes / steps) + " per step migrated to the GPU and " +
                            formatBytes(m.to_host_bytes / steps) + " back to the host, on demand",
                        {{"time_range", "first migration", m.first_ns, m.first_ns}}});
  f.evidence.push_back({perStepCount(m.device_faults, steps) + " GPU page-fault groups and " +
                            perStepCount(m.host_faults, steps) +
                            " CPU page faults per step; migrations and the GPU's fault handling take " +
                            formatDuration(migrating) + " per step",
                        {stepRef(c)}});
  if (m.host_faults > 0) {
    f.evidence.push_back({"the host faulted through " + formatDuration(c.perTimedStep(m.host_faulting_ns)) +
                              " per step of its own loops (first to last CPU fault of each stretch); CUPTI gives a "
                              "CPU fault no duration, so how much of that the faults cost is not known and the "
                              "gain leaves it out",
                          {stepRef(c)}});
  }
  f.gain = timeGain(c, migrating,
                    "the time the on-demand migrations and the GPU's page-fault handling took in the steady steps "
                    "(CUPTI's unified-memory records, merged): placed ahead of use, data that must move still "
                    "moves, in bulk copies at the link's bandwidth, and the rest stays where it is used");
  setSeverity(f);
  return f;
}

}  // namespace

const Rule& managedMemoryMigrationRule() { return kRule; }

}  // namespace gpuscope::advisor
