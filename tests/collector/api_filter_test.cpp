// The choice of API calls to record, on CUPTI's own callback names.
#include <gtest/gtest.h>

#include "collector/api_filter.h"

namespace gpuscope::collector {
namespace {

TEST(ApiFilter, RuntimeCallsAreRecordedExceptCheapQueries) {
  for (const char* name :
       {"cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "cudaMalloc_v3020", "cudaStreamSynchronize_v3020",
        "cudaGraphLaunch_ptsz_v10000", "cudaEventRecord_v3020", "cudaGetDeviceProperties_v12000"}) {
    EXPECT_TRUE(recordRuntimeApi(name)) << name;
  }
  for (const char* name : {"cudaGetDevice_v3020", "cudaGetLastError_v3020", "cudaStreamIsCapturing_v10000",
                           "cudaEventQuery_v3020", "cudaPeekAtLastError"}) {
    EXPECT_FALSE(recordRuntimeApi(name)) << name;
  }
}

TEST(ApiFilter, DriverCallsOnlyWhenTheyDoWork) {
  for (const char* name :
       {"cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchKernel_ptsz", "cuMemcpyHtoDAsync_v2", "cuMemAlloc_v2",
        "cuMemFree_v2", "cuStreamSynchronize", "cuCtxSynchronize", "cuGraphLaunch", "cuModuleLoadData",
        "cuLibraryLoadData", "cuMemsetD32Async", "cuModuleUnload", "cuLibraryUnload"}) {
    EXPECT_TRUE(recordDriverApi(name)) << name;
  }
  for (const char* name : {"cuDevicePrimaryCtxGetState", "cuKernelGetName", "cuDeviceGetAttribute", "cuCtxGetCurrent",
                           "cuFuncGetAttribute", "cuPointerGetAttribute"}) {
    EXPECT_FALSE(recordDriverApi(name)) << name;
  }
}

}  // namespace
}  // namespace gpuscope::collector
