// Which CUDA API calls the collector records. Frameworks call cheap state queries (cudaGetDevice,
// cudaGetLastError, cuDevicePrimaryCtxGetState…) several times per operator: on a launch-bound PyTorch loop
// they were 10 of every 11 API records (measured on an H100, docs/benchmarks.md), and recording each costs
// the program time. So runtime calls are recorded except those queries, and driver calls only where they do
// work a profile needs: launches, copies, sets, allocations, synchronisation, module loads, graphs. The
// runtime already records what the program asked for; the driver calls underneath it would be duplicates.
#pragma once

#include <string_view>

namespace gpuscope::collector {

// Names as CUPTI gives them (with or without the "_v3020"-style version suffix).
bool recordRuntimeApi(std::string_view name);
bool recordDriverApi(std::string_view name);

// The runtime queries left out, for the trace's data-quality note.
std::string_view skippedRuntimeApis();

}  // namespace gpuscope::collector
