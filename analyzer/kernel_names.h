// Short kernel names for sentences and narrow columns: "vectorized_elementwise_kernel<MulFunctor>" for
// PyTorch's page-long template instantiations, the name itself for Triton, XLA, CuPy and plain kernels.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::analysis {

// At most max_length characters (cut with "…"); the full name stays what tables and JSON show.
std::string shortKernelName(std::string_view name, size_t max_length = 72);
// text cut to at most max_length characters, ending in "…" when cut (never inside a UTF-8 character).
std::string ellipsize(std::string_view text, size_t max_length);

}  // namespace gpuscope::analysis
