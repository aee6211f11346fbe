// CUPTI names API calls with the version that introduced them ("cudaLaunchKernel_v7000"); users know them
// without it, as torch.profiler and Nsight Systems show them, and tools that read Kineto's traces (HTA) look
// them up by that name.
#pragma once

#include <string_view>

namespace gpuscope {

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel"; any other name as it is.
inline std::string_view withoutVersionSuffix(std::string_view name) {
  const size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= name.size()) return name;
  return name.find_first_not_of("0123456789", v + 2) == std::string_view::npos ? name.substr(0, v) : name;
}

}  // namespace gpuscope
