#include "collector/api_filter.h"

namespace gpuscope::collector {

namespace {

std::string_view withoutVersion(std::string_view name) {
  const size_t v = name.rfind("_v");
  if (v != std::string_view::npos && v + 2 < name.size() &&
      name.find_first_not_of("0123456789", v + 2) == std::string_view::npos) {
    name = name.substr(0, v);
  }
  if (name.ends_with("_ptsz") || name.ends_with("_ptds")) name.remove_suffix(5);
  return name;
}

constexpr std::string_view kSkippedRuntime[] = {
    "cudaGetDevice",         "cudaGetLastError",         "cudaPeekAtLastError",
    "cudaStreamIsCapturing", "cudaStreamGetCaptureInfo", "cudaDeviceGetAttribute",
    "cudaGetDeviceCount",    "cudaFuncGetAttributes",    "cudaPointerGetAttributes",
    "cudaEventQuery",        "cudaStreamQuery",
};

constexpr std::string_view kRecordedDriverPrefixes[] = {
    "cuLaunch",          "cuGraphLaunch",        "cuGraphInstantiate", "cuMemcpy",
    "cuMemset",          "cuMemAlloc",           "cuMemFree",          "cuMemHostAlloc",
    "cuMemHostRegister", "cuMemHostUnregister",  "cuMemCreate",        "cuMemMap",
    "cuMemUnmap",        "cuMemRelease",         "cuMemPoolTrimTo",    "cuStreamSynchronize",
    "cuCtxSynchronize",  "cuEventSynchronize",   "cuStreamWaitEvent",  "cuModuleLoad",
    "cuLibraryLoad",     "cuStreamBeginCapture", "cuStreamEndCapture", "cuModuleUnload",
    "cuLibraryUnload",
};

}  // namespace

bool recordRuntimeApi(std::string_view name) {
  const std::string_view base = withoutVersion(name);
  for (std::string_view skipped : kSkippedRuntime) {
    if (base == skipped) return false;
  }
  return true;
}

bool recordDriverApi(std::string_view name) {
  const std::string_view base = withoutVersion(name);
  for (std::string_view prefix : kRecordedDriverPrefixes) {
    if (base.starts_with(prefix)) return true;
  }
  return false;
}

std::string_view skippedRuntimeApis() {
  return "cudaGetDevice, cudaGetLastError, cudaPeekAtLastError, cudaStreamIsCapturing, cudaStreamGetCaptureInfo, "
         "cudaDeviceGetAttribute, cudaGetDeviceCount, cudaFuncGetAttributes, cudaPointerGetAttributes, "
         "cudaEventQuery, cudaStreamQuery";
}

}  // namespace gpuscope::collector
