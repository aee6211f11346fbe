// What the GUI shows of one trace, computed off the GUI thread and handed over whole: the loaded trace, its
// statistics and the advisor's findings. Views never see a half-built snapshot, and a snapshot never changes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "advisor/advice.h"
#include "analyzer/iterations.h"
#include "analyzer/memory_categories.h"
#include "analyzer/memory_pools.h"
#include "analyzer/memory_timeline.h"
#include "analyzer/stats.h"
#include "analyzer/trace_data.h"
#include "formats/status.h"

namespace gpuscope::gui {

struct TraceSnapshot {
  std::string path;  // what the user opened
  analysis::TraceData trace;
  analysis::Stats stats;
  analysis::Iterations iterations;
  analysis::MemoryAnalysis memory;  // live bytes over time per device, for the timeline's counter tracks
  analysis::MemoryCategories categories;
  std::vector<analysis::PoolUsage> pools;  // stream-ordered memory pools, for fragmentation
  advisor::Advice advice;
  std::vector<std::string> warnings;  // data-quality warnings of the trace, shown, not buried
};

// Loads and analyses a gpuscope trace; a torch.profiler trace or a PyTorch memory snapshot (JSON or pickle)
// is imported first, into a temporary trace. One clear error for anything else.
Result<std::shared_ptr<const TraceSnapshot>> analyseTrace(const std::string& path);

}  // namespace gpuscope::gui
