#include "advisor/runtime/nvrtc_compiler.h"

#include <nvrtc.h>

#include <vector>

namespace gpuscope::runtime {

namespace {

Status nvrtcError(nvrtcResult result, const std::string& doing, const std::string& log = "") {
  std::string message = "NVRTC could not " + doing + ": " + nvrtcGetErrorString(result);
  if (!log.empty()) message += "\n" + log;
  return Status(ErrorKind::kInternal, message);
}

std::string programLog(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  nvrtcGetProgramLog(program, log.data());
  log.resize(size - 1);
  return log;
}

// Owns an nvrtcProgram.
struct Program {
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle) nvrtcDestroyProgram(&handle);
  }
};

}  // namespace

Result<std::string> compileCuda(const std::string& source, const std::string& name, int arch, CodeKind kind) {
  Program program;
  if (nvrtcResult r = nvrtcCreateProgram(&program.handle, source.c_str(), name.c_str(), 0, nullptr, nullptr);
      r != NVRTC_SUCCESS) {
    return nvrtcError(r, "create the program");
  }
  const std::string gpu_arch =
      std::string("--gpu-architecture=") + (kind == CodeKind::kCubin ? "sm_" : "compute_") + std::to_string(arch);
  const char* options[] = {gpu_arch.c_str(), "--std=c++17", "-default-device"};
  if (nvrtcResult r = nvrtcCompileProgram(program.handle, 3, options); r != NVRTC_SUCCESS) {
    return nvrtcError(r, "compile " + name, programLog(program.handle));
  }
  size_t size = 0;
  std::string code;
  if (kind == CodeKind::kCubin) {
    if (nvrtcResult r = nvrtcGetCUBINSize(program.handle, &size); r != NVRTC_SUCCESS)
      return nvrtcError(r, "size the CUBIN");
    code.resize(size);
    if (nvrtcResult r = nvrtcGetCUBIN(program.handle, code.data()); r != NVRTC_SUCCESS)
      return nvrtcError(r, "get the CUBIN");
  } else {
    if (nvrtcResult r = nvrtcGetPTXSize(program.handle, &size); r != NVRTC_SUCCESS)
      return nvrtcError(r, "size the PTX");
    code.resize(size);
    if (nvrtcResult r = nvrtcGetPTX(program.handle, code.data()); r != NVRTC_SUCCESS)
      return nvrtcError(r, "get the PTX");
    if (!code.empty() && code.back() == '\0') code.pop_back();
  }
  return code;
}

}  // namespace gpuscope::runtime
