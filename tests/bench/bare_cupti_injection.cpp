// The least a CUPTI tracer can do: enable activity kinds, hand CUPTI buffers, walk the records it returns
// and count them. Injected in place of gpuscope's collector (CUDA_INJECTION64_PATH) it measures CUPTI's own
// cost, the floor under any collector's (tests/bench/overhead.sh, section launch_cost).
// BARE_CUPTI_KINDS: a comma list of (default: kernel)
//   kernel, memcpy, memcpy2, memset, memory, sync, overhead, context, device   those activity kinds
//   graph                    one record per CUDA graph launch (GRAPH_TRACE) instead of one per kernel node;
//                            with BARE_CUPTI_GRAPH_AFTER_MS=N, switched on N ms after start, from a thread of its own
//   driver                   every driver API call as an activity record
//   nvtx                     NVTX ranges and marks (with NVTX_INJECTION64_PATH set to CUPTI's library)
//   latency                  CUPTI's queued/submitted timestamps of kernels
//   flush100                 a thread that asks CUPTI for its records every 100 ms
//   runtime                  every runtime API call as an activity record
//   runtime-launch           the runtime activity kind with every call but cudaLaunch* switched off
//   driver-launch            driver API records for cuLaunch* only
//   callback-launch          no API records: a callback at entry and exit of cudaLaunch* takes two timestamps
// BARE_CUPTI_OFF_AFTER_MS=N: N ms after start a thread of its own switches every activity kind off again and
// flushes, as a capture range's end or the PyTorch bridge's pause does; with BARE_CUPTI_OFF=finalize it then
// detaches CUPTI from the process (cuptiFinalize). What a program pays after recording stopped, either way.
#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr size_t kBufferBytes = 8 << 20;
std::atomic<long long> g_records{0};
std::atomic<long long> g_kernels{0};
std::atomic<long long> g_graphs{0};
std::atomic<long long> g_callback_ns{0};

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  long long n = 0, kernels = 0, graphs = 0;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    ++n;
    kernels += record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    graphs += record->kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
  }
  g_records += n;
  g_kernels += kernels;
  g_graphs += graphs;
  std::free(buffer);
}

void atExit() {
  cuptiActivityFlushAll(1);
  std::fprintf(stderr,
               "bare_cupti: %lld records (%lld kernels, %lld graph launches), %lld ns inside cudaLaunch* "
               "callbacks\n",
               g_records.load(), g_kernels.load(), g_graphs.load(), g_callback_ns.load());
}

// Switches the activity records of one API domain off, or on, for every call but cudaLaunch* / cuLaunch*.
void onlyLaunches(CUpti_CallbackDomain domain, uint32_t size, bool runtime) {
  for (uint32_t cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) continue;
    const bool launch = std::string(name).starts_with(runtime ? "cudaLaunch" : "cuLaunch");
    if (runtime && !launch) cuptiActivityEnableRuntimeApi(cbid, 0);
    if (!runtime && launch) cuptiActivityEnableDriverApi(cbid, 1);
  }
}

thread_local uint64_t t_entered = 0;

void CUPTIAPI onLaunch(void*, CUpti_CallbackDomain, CUpti_CallbackId, const CUpti_CallbackData* data) {
  uint64_t now = 0;
  cuptiGetTimestamp(&now);
  if (data->callbackSite == CUPTI_API_ENTER)
    t_entered = now;
  else
    g_callback_ns += static_cast<long long>(now - t_entered);
}

void launchCallbacks() {
  CUpti_SubscriberHandle subscriber = nullptr;
  if (cuptiSubscribe(&subscriber, reinterpret_cast<CUpti_CallbackFunc>(onLaunch), nullptr) != CUPTI_SUCCESS) return;
  for (uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS && name &&
        std::string(name).starts_with("cudaLaunch")) {
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
    }
  }
}

std::vector<CUpti_ActivityKind> g_enabled;

void enable(CUpti_ActivityKind kind) {
  if (cuptiActivityEnable(kind) == CUPTI_SUCCESS) g_enabled.push_back(kind);
}

void switchOffLater() {
  const char* after = std::getenv("BARE_CUPTI_OFF_AFTER_MS");
  if (!after || std::atoi(after) <= 0) return;
  const char* how = std::getenv("BARE_CUPTI_OFF");
  const bool finalize = how && std::string(how) == "finalize";
  std::thread([ms = std::atoi(after), finalize] {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    for (CUpti_ActivityKind kind : g_enabled) cuptiActivityDisable(kind);
    cuptiActivityFlushAll(1);
    const CUptiResult r = finalize ? cuptiFinalize() : CUPTI_SUCCESS;
    const char* why = nullptr;
    cuptiGetResultString(r, &why);
    std::fprintf(stderr, "bare_cupti: %zu kinds off after %d ms%s: %s\n", g_enabled.size(), ms,
                 finalize ? ", CUPTI detached" : "", why ? why : "?");
  }).detach();
}

bool wants(const std::string& list, const char* kind) {
  return ("," + list + ",").find(std::string(",") + kind + ",") != std::string::npos;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  const char* env = std::getenv("BARE_CUPTI_KINDS");
  const std::string kinds = env && *env ? env : "kernel";
  if (cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS) return 0;
  if (wants(kinds, "latency")) cuptiActivityEnableLatencyTimestamps(1);
  if (wants(kinds, "sync")) enable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  if (wants(kinds, "overhead")) enable(CUPTI_ACTIVITY_KIND_OVERHEAD);
  if (wants(kinds, "memset")) enable(CUPTI_ACTIVITY_KIND_MEMSET);
  if (wants(kinds, "flush100")) {
    std::thread([] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        cuptiActivityFlushAll(0);
      }
    }).detach();
  }
  if (wants(kinds, "kernel")) enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (wants(kinds, "graph")) {
    const char* after = std::getenv("BARE_CUPTI_GRAPH_AFTER_MS");
    const int after_ms = after && *after ? std::atoi(after) : 0;
    std::thread switch_on([after_ms] {
      if (after_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(after_ms));
      const CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
      const char* why = nullptr;
      cuptiGetResultString(r, &why);
      std::fprintf(stderr, "bare_cupti: graph trace on after %d ms: %s\n", after_ms, why ? why : "?");
    });
    after_ms > 0 ? switch_on.detach() : switch_on.join();
  }
  if (wants(kinds, "runtime") || wants(kinds, "runtime-launch")) enable(CUPTI_ACTIVITY_KIND_RUNTIME);
  if (wants(kinds, "runtime-launch")) onlyLaunches(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, true);
  if (wants(kinds, "driver-launch")) onlyLaunches(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, false);
  if (wants(kinds, "callback-launch")) launchCallbacks();
  if (wants(kinds, "memcpy")) enable(CUPTI_ACTIVITY_KIND_MEMCPY);
  if (wants(kinds, "memcpy2")) enable(CUPTI_ACTIVITY_KIND_MEMCPY2);
  if (wants(kinds, "context")) enable(CUPTI_ACTIVITY_KIND_CONTEXT);
  if (wants(kinds, "device")) enable(CUPTI_ACTIVITY_KIND_DEVICE);
  if (wants(kinds, "memory")) enable(CUPTI_ACTIVITY_KIND_MEMORY2);
  if (wants(kinds, "driver")) enable(CUPTI_ACTIVITY_KIND_DRIVER);
  if (wants(kinds, "nvtx")) enable(CUPTI_ACTIVITY_KIND_MARKER);
  switchOffLater();
  std::atexit(atExit);
  return 1;
}
