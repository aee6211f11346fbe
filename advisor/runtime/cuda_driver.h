// The CUDA driver API, loaded at run time (dlopen of libcuda.so.1) rather than linked: the runtime and its
// tests load on machines without a GPU driver, and say so in one clear error when asked to launch.
#pragma once

#include <cuda.h>

#include "formats/status.h"

namespace gpuscope::runtime {

struct CudaDriver {
  decltype(&cuInit) init;
  decltype(&cuGetErrorString) getErrorString;
  decltype(&cuDeviceGet) deviceGet;
  decltype(&cuDeviceGetAttribute) deviceGetAttribute;
  decltype(&cuDevicePrimaryCtxRetain) primaryCtxRetain;
  decltype(&cuCtxGetCurrent) ctxGetCurrent;
  decltype(&cuCtxSetCurrent) ctxSetCurrent;
  decltype(&cuCtxGetDevice) ctxGetDevice;
  decltype(&cuCtxSynchronize) ctxSynchronize;
  decltype(&cuModuleLoadData) moduleLoadData;
  decltype(&cuModuleGetFunction) moduleGetFunction;
  decltype(&cuLaunchKernel) launchKernel;
  decltype(&cuMemAlloc) memAlloc;
  decltype(&cuMemFree) memFree;
  decltype(&cuMemAllocAsync) memAllocAsync;
  decltype(&cuMemFreeAsync) memFreeAsync;
  decltype(&cuMemcpyHtoD) memcpyHtoD;
  decltype(&cuMemcpyDtoH) memcpyDtoH;
  decltype(&cuMemcpyDtoDAsync) memcpyDtoDAsync;
  decltype(&cuMemsetD8) memsetD8;
  decltype(&cuEventCreate) eventCreate;
  decltype(&cuEventRecord) eventRecord;
  decltype(&cuEventSynchronize) eventSynchronize;
  decltype(&cuEventElapsedTime) eventElapsedTime;
  decltype(&cuEventDestroy) eventDestroy;

  // "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE" when result is not CUDA_SUCCESS.
  Status check(CUresult result, const char* call) const;
};

// The driver, loaded and initialised once; an error when there is no driver or no GPU.
Result<const CudaDriver*> cudaDriver();
// Makes the device's primary context current when the thread has none (as the CUDA runtime would).
Status ensureContext(const CudaDriver& cu, int device = 0);

}  // namespace gpuscope::runtime
