// Facts about the profiled process for its session row: identity, rank, command line, host clocks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "formats/trace_schema.h"

namespace gpuscope::collector {

// pid, parent pid, host name, command line and rank/world size from the launcher's environment
// (torchrun's RANK/LOCAL_RANK/WORLD_SIZE, Open MPI's OMPI_COMM_WORLD_*, Slurm's SLURM_*).
schema::SessionRow describeThisProcess(int64_t session_id);

// The first integer environment variable among names that is set, if any.
std::optional<int64_t> integerFromEnvironment(std::initializer_list<const char*> names);

// CLOCK_REALTIME and CLOCK_MONOTONIC now, in ns, paired with trace_ns (the trace clock read by the caller).
schema::ClockSyncRow sampleClocks(int64_t session_id, int64_t trace_ns);

// The name of a thread of this process, "" if it has exited.
std::string threadName(int64_t thread_id);

}  // namespace gpuscope::collector
