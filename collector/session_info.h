// Facts about the profiled process for its session row: identity, rank, command line, host clocks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/trace_schema.h"

namespace gpuscope::collector {

// pid, parent pid, host name, command line and rank/world size from the launcher's environment
// (torchrun's RANK/LOCAL_RANK/WORLD_SIZE, Open MPI's OMPI_COMM_WORLD_*, Slurm's SLURM_*).
schema::SessionRow describeThisProcess(int64_t session_id);

// The first integer environment variable among names that is set, if any.
std::optional<int64_t> integerFromEnvironment(std::initializer_list<const char*> names);

// The version of the CUDA runtime library this process loaded (13000 for 13.0), asked of the library itself; none
// where the program has no libcudart loaded (nvcc links the runtime statically by default).
std::optional<int64_t> loadedRuntimeVersion();

// CLOCK_REALTIME and CLOCK_MONOTONIC now, in ns, paired with trace_ns (the trace clock read by the caller).
schema::ClockSyncRow sampleClocks(int64_t session_id, int64_t trace_ns);

using Environment = std::vector<std::pair<std::string, std::string>>;

// The variables that change how CUDA, NCCL, PyTorch or XLA behave (CUDA_*, NCCL_*, PYTORCH_*, TORCH_*, XLA_*,
// JAX_*, OMP_NUM_THREADS), only those whose name starts with `prefix` when one is given. The ones gpuscope
// set to load itself are left out: they describe the recording, not the program.
Environment interestingEnvironment(std::string_view prefix = {});

// The name of a thread of this process, "" if it has exited.
std::string threadName(int64_t thread_id);

}  // namespace gpuscope::collector
