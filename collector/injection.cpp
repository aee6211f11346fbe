// The collector's entry points, the only symbols libgpuscope_collector.so exports (see exports.map).
// The CUDA driver calls InitializeInjection during cuInit when CUDA_INJECTION64_PATH names this library;
// the NVTX loader calls InitializeInjectionNvtx* when NVTX_INJECTION64_PATH does, and those are handed to
// the CUPTI instance the process already uses, so NVTX ranges arrive as CUPTI marker records.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "collector/collector.h"
#include "collector/nccl_profiler.h"

extern "C" {
// Exported by libcupti but not declared in CUDA 13.0's headers.
int cuptiNvtxInitialize(void* get_export_table);
int cuptiNvtxInitialize2(void* get_export_table);
int cuptiNvtxExtensionInitialize(void* get_export_table);

// The collector's thread runs code of this library until the process ends: whoever loaded it (the NVTX
// loader unloads an injection whose initialisation failed) must not be able to unload it.
static void pinLibrary() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&pinLibrary), &info) && info.dli_fname) {
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
}

// The off switch: GPUSCOPE_DISABLE set to anything but 0.
static bool disabled() {
  const char* off = std::getenv("GPUSCOPE_DISABLE");
  return off && *off && std::strcmp(off, "0") != 0;
}

// The NVTX loader and the CUDA driver may each load this library, and not always as one copy: the
// environment, which every copy in the process shares, says whether one of them has started already.
static void startCollectorOnce(const char* entry) {
  static std::atomic<bool> started{false};
  const bool debug = std::getenv("GPUSCOPE_DEBUG") != nullptr;
  if (debug) std::fprintf(stderr, "gpuscope[%d]: %s called in library copy %p\n", getpid(), entry, (void*)&started);
  if (started.exchange(true) || disabled()) return;
  const std::string me = std::to_string(getpid());
  const char* owner = std::getenv("GPUSCOPE_COLLECTOR_PID");
  if (owner && me == owner) {
    if (debug) std::fprintf(stderr, "gpuscope[%d]: another copy already records this process\n", getpid());
    return;
  }
  setenv("GPUSCOPE_COLLECTOR_PID", me.c_str(), 1);  // children of this process get their own collector
  pinLibrary();
  gpuscope::collector::Collector::start(gpuscope::collector::CollectorOptions::fromEnvironment());
}

__attribute__((visibility("default"))) int InitializeInjection(void) {
  startCollectorOnce("InitializeInjection");
  return 1;
}

// NVTX hands its export table to the injection library; CUPTI takes it and records NVTX ranges as marker
// activity records. The collector is started first so marker recording is on from the first range.
// cuptiNvtxInitialize* return a CUptiResult (0 = success) while the NVTX loader expects 1 for success (and
// unloads the library on 0), so the result is translated, as libcupti's own InitializeInjectionNvtx2 does.
// Switched off, NVTX is left alone: the loader, told the injection failed, makes every NVTX call a no-op. Handed
// to a CUPTI nobody set up, a checkpointed PyTorch model's ranges (`record --torch` with GPUSCOPE_DISABLE=1)
// ended in a segmentation fault on an H200 (2026-11-29).
static int handOverNvtx(const char* entry, int (*cupti_init)(void*), void* get_export_table) {
  if (disabled()) return 0;
  startCollectorOnce(entry);
  const int result = cupti_init(get_export_table);
  if (std::getenv("GPUSCOPE_DEBUG")) {
    std::fprintf(stderr, "gpuscope[%d]: %s: CUPTI took NVTX: %s\n", getpid(), entry, result == 0 ? "yes" : "no");
  }
  return result == 0 ? 1 : 0;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx(void* get_export_table) {
  return handOverNvtx("InitializeInjectionNvtx", cuptiNvtxInitialize, get_export_table);
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(void* get_export_table) {
  return handOverNvtx("InitializeInjectionNvtx2", cuptiNvtxInitialize2, get_export_table);
}

__attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(void* get_export_table) {
  return handOverNvtx("InitializeInjectionNvtxExtension", cuptiNvtxExtensionInitialize, get_export_table);
}

// NCCL looks this up in the library NCCL_PROFILER_PLUGIN names (`gpuscope record` names this one).
__attribute__((visibility("default"))) gpuscope::collector::nccl::ProfilerV4 ncclProfiler_v4 = {
    "gpuscope",
    gpuscope::collector::nccl::init,
    gpuscope::collector::nccl::startEvent,
    gpuscope::collector::nccl::stopEvent,
    gpuscope::collector::nccl::recordEventState,
    gpuscope::collector::nccl::finalize,
};
}
