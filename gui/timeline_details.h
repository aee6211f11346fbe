// What the timeline says of the item a click selects: its kind, name, start and duration, and every field
// the trace recorded for it — a kernel's grid, block, registers, shared memory, stream and correlation id,
// the API call that launched it (with the launch latency) and the NVTX range open around that call; a
// copy's bytes, direction and bandwidth; a call's thread and return code; an NCCL kernel's operation, size and
// bus bandwidth.
#pragma once

#include <QString>
#include <cstdint>

#include <vector>

#include "analyzer/collectives.h"
#include "analyzer/trace_data.h"
#include "gui/timeline_lanes.h"

namespace gpuscope::gui {

// `collectives`: the trace's NCCL operations in kernel order (analysis::collectiveOps), or none.
QString describeItem(const analysis::TraceData& trace, ItemKind kind, uint32_t row,
                     const std::vector<analysis::CollectiveOp>& collectives = {});

// The API call that launched a piece of GPU work (kNone when the trace has none).
int32_t launchCallOf(const analysis::TraceData& trace, ItemKind kind, uint32_t row);

}  // namespace gpuscope::gui
