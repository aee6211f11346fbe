// Replays a trace's allocations and frees in time order, tracking live allocations by address, so the
// bytes in use can be followed over time. A free of memory allocated before recording began changes
// nothing (it would otherwise drive the count below zero).
#pragma once

#include <functional>

#include "formats/trace_reader.h"

namespace gpuscope {

// Calls fn(event, delta) for every allocation or release that changed the bytes in use of its session:
// delta is the event's size for an allocation and minus the freed allocation's size for a release.
Status replayMemoryEvents(TraceReader& reader, const std::function<void(const schema::MemoryEventRow&, int64_t)>& fn);

}  // namespace gpuscope
