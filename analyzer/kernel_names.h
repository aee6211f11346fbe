// Short kernel names for sentences and narrow columns: "vectorized_elementwise_kernel<MulFunctor>" for
// PyTorch's page-long template instantiations, the name itself for Triton, XLA, CuPy and plain kernels.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuscope::analysis {

// At most max_length characters (cut with "…"); the full name stays what tables and JSON show.
std::string shortKernelName(std::string_view name, size_t max_length = 72);
// What a CUDA graph recorded as a whole (`record --cuda-graph-trace graph`) is called where kernels are named:
// "CUDA graph 12 (launched as a whole)", which no kernel function's name (demangled or not) can be.
std::string wholeGraphName(int64_t graph_id);
bool isWholeGraphName(std::string_view name);
// text cut to at most max_length characters, ending in "…" when cut (never inside a UTF-8 character).
std::string ellipsize(std::string_view text, size_t max_length);

}  // namespace gpuscope::analysis
