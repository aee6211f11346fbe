// What the GUI shows of one trace, computed off the GUI thread and handed over whole. A trace comes in two
// snapshots: the loaded one (the trace and its timeline's lanes, enough for the first frame) and, once the
// analyses are done, the analysed one, which shares the loaded one's trace and lanes. Views never see a
// half-built snapshot, and a snapshot never changes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "advisor/advice.h"
#include "analyzer/collectives.h"
#include "analyzer/iterations.h"
#include "analyzer/memory_categories.h"
#include "analyzer/memory_pools.h"
#include "analyzer/memory_timeline.h"
#include "analyzer/stats.h"
#include "analyzer/trace_data.h"
#include "formats/status.h"
#include "gui/timeline_lanes.h"

namespace gpuscope::gui {

struct TraceSnapshot {
  std::string path;                                  // what the user opened
  std::shared_ptr<const analysis::TraceData> data;   // shared by the loaded and the analysed snapshot
  std::shared_ptr<const std::vector<Track>> tracks;  // the timeline's lanes, built with the load
  bool analysed = false;                             // false: only loaded; what follows is still empty
  analysis::Stats stats;
  analysis::Iterations iterations;
  analysis::MemoryAnalysis memory;  // live bytes over time per device, for the timeline's counter tracks
  analysis::MemoryCategories categories;
  std::vector<analysis::PoolUsage> pools;  // stream-ordered memory pools, for fragmentation
  advisor::Advice advice;
  std::vector<analysis::CollectiveOp> collectives;  // NCCL's operations, in kernel order (NCCL's plugin rows)
  std::vector<std::string> warnings;                // data-quality warnings of the trace, shown, not buried

  const analysis::TraceData& trace() const { return *data; }
};

// Loads a gpuscope trace and builds its timeline's lanes; a torch.profiler trace or a PyTorch memory
// snapshot (JSON or pickle) is imported first, into a temporary trace. One clear error for anything else.
Result<std::shared_ptr<const TraceSnapshot>> loadSnapshot(const std::string& path);

// Runs every analysis the views show on a loaded snapshot: the analysed snapshot of the same trace.
std::shared_ptr<const TraceSnapshot> analyseSnapshot(const TraceSnapshot& loaded);

// Both at once, for callers that want the analysed snapshot only (screenshots, diffs, tests).
Result<std::shared_ptr<const TraceSnapshot>> analyseTrace(const std::string& path);

}  // namespace gpuscope::gui
