#include "advisor/runtime/cuda_driver.h"

#include <dlfcn.h>

#include <string>

namespace gpuscope::runtime {

Status CudaDriver::check(CUresult result, const char* call) const {
  if (result == CUDA_SUCCESS) return Status::ok();
  const char* text = nullptr;
  getErrorString(result, &text);
  return Status(ErrorKind::kIo, std::string(call) + " failed: " + (text ? text : std::to_string(result)));
}

namespace {

template <typename F>
bool resolve(void* library, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(library, name));
  return out != nullptr;
}

Result<CudaDriver> load() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) return Status(ErrorKind::kNotFound, "no CUDA driver (libcuda.so.1) on this machine");
  CudaDriver d{};
  // The _v2 names are what cuda.h's macros map the plain ones to.
  const bool ok =
      resolve(library, "cuInit", d.init) && resolve(library, "cuGetErrorString", d.getErrorString) &&
      resolve(library, "cuDeviceGet", d.deviceGet) && resolve(library, "cuDeviceGetAttribute", d.deviceGetAttribute) &&
      resolve(library, "cuDevicePrimaryCtxRetain", d.primaryCtxRetain) &&
      resolve(library, "cuCtxGetCurrent", d.ctxGetCurrent) && resolve(library, "cuCtxSetCurrent", d.ctxSetCurrent) &&
      resolve(library, "cuCtxGetDevice", d.ctxGetDevice) && resolve(library, "cuCtxSynchronize", d.ctxSynchronize) &&
      resolve(library, "cuModuleLoadData", d.moduleLoadData) &&
      resolve(library, "cuModuleGetFunction", d.moduleGetFunction) &&
      resolve(library, "cuLaunchKernel", d.launchKernel) && resolve(library, "cuMemAlloc_v2", d.memAlloc) &&
      resolve(library, "cuMemFree_v2", d.memFree) && resolve(library, "cuMemAllocAsync", d.memAllocAsync) &&
      resolve(library, "cuMemFreeAsync", d.memFreeAsync) && resolve(library, "cuMemcpyHtoD_v2", d.memcpyHtoD) &&
      resolve(library, "cuMemcpyDtoH_v2", d.memcpyDtoH) &&
      resolve(library, "cuMemcpyDtoDAsync_v2", d.memcpyDtoDAsync) && resolve(library, "cuMemsetD8_v2", d.memsetD8) &&
      resolve(library, "cuEventCreate", d.eventCreate) && resolve(library, "cuEventRecord", d.eventRecord) &&
      resolve(library, "cuEventSynchronize", d.eventSynchronize) &&
      resolve(library, "cuEventElapsedTime_v2", d.eventElapsedTime) &&
      resolve(library, "cuEventDestroy_v2", d.eventDestroy);
  if (!ok) return Status(ErrorKind::kNotFound, "the CUDA driver lacks a function gpuscope needs (driver too old?)");
  if (CUresult r = d.init(0); r != CUDA_SUCCESS) return d.check(r, "cuInit");
  if (CUdevice device; d.deviceGet(&device, 0) != CUDA_SUCCESS) {
    return Status(ErrorKind::kNotFound, "no CUDA GPU on this machine");
  }
  return d;
}

}  // namespace

Result<const CudaDriver*> cudaDriver() {
  static const Result<CudaDriver> driver = load();  // thread-safe, once
  if (!driver) return driver.status();
  return &driver.value();
}

Status ensureContext(const CudaDriver& cu, int device) {
  CUcontext current = nullptr;
  GPUSCOPE_RETURN_IF_ERROR(cu.check(cu.ctxGetCurrent(&current), "cuCtxGetCurrent"));
  if (current) return Status::ok();
  CUdevice dev;
  GPUSCOPE_RETURN_IF_ERROR(cu.check(cu.deviceGet(&dev, device), "cuDeviceGet"));
  GPUSCOPE_RETURN_IF_ERROR(cu.check(cu.primaryCtxRetain(&current, dev), "cuDevicePrimaryCtxRetain"));
  return cu.check(cu.ctxSetCurrent(current), "cuCtxSetCurrent");
}

}  // namespace gpuscope::runtime
