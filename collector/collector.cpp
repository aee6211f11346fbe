#include "collector/collector.h"

#include <cuda.h>
#include <execinfo.h>
#include <generated_nvtx_meta.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bit>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "collector/api_filter.h"
#include "collector/nccl_profiler.h"
#include "collector/session_info.h"
#include "formats/bridge_marks.h"

namespace gpuscope::collector {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kSessionId = 1;  // one session per per-process file; merging renumbers them
constexpr auto kCommitInterval = std::chrono::milliseconds(200);  // a kill loses at most ~250 ms

Collector* g_collector = nullptr;  // never destroyed: the process may still call back into CUPTI at exit

int64_t cuptiNow() {
  uint64_t ts = 0;
  cuptiGetTimestamp(&ts);
  return static_cast<int64_t>(ts);
}

std::string cuptiError(CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return text ? text : "CUPTI error " + std::to_string(result);
}

std::string apiName(schema::ApiKind api, uint32_t cbid) {
  const char* name = nullptr;
  const auto domain = api == schema::ApiKind::kDriver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) return "cbid " + std::to_string(cbid);
  return name;
}

bool envFlag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

// "from,to" (GPUSCOPE_CAPTURE_WINDOW_NS): the capture window in CUPTI's clock.
std::pair<int64_t, int64_t> captureWindow() {
  const char* text = std::getenv("GPUSCOPE_CAPTURE_WINDOW_NS");
  if (!text || !*text) return {0, 0};
  char* end = nullptr;
  const long long from = std::strtoll(text, &end, 10);
  const long long to = end && *end == ',' ? std::strtoll(end + 1, nullptr, 10) : 0;
  return {from, to};
}

bool isMemoryKind(CUpti_ActivityKind kind) {
  return kind == CUPTI_ACTIVITY_KIND_MEMORY2 || kind == CUPTI_ACTIVITY_KIND_MEMORY_POOL;
}

// An NVTX event's message where it is text: ASCII, or a string the program registered (by its handle).
std::string_view nvtxMessage(const nvtxEventAttributes_t* attributes,
                             const std::unordered_map<uint64_t, std::string>& registered) {
  if (!attributes) return {};
  if (attributes->messageType == NVTX_MESSAGE_TYPE_ASCII && attributes->message.ascii) {
    return attributes->message.ascii;
  }
  if (attributes->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
    const auto it = registered.find(reinterpret_cast<uint64_t>(attributes->message.registered));
    if (it != registered.end()) return it->second;
  }
  return {};
}

}  // namespace

CollectorOptions CollectorOptions::fromEnvironment() {
  CollectorOptions o;
  if (const char* dir = std::getenv("GPUSCOPE_OUTPUT_DIR"); dir && *dir) o.output_dir = dir;
  if (auto ms = integerFromEnvironment({"GPUSCOPE_FLUSH_MS"})) o.flush_interval_ms = *ms;
  if (auto mb = integerFromEnvironment({"GPUSCOPE_DEVICE_BUFFER_MB"})) o.device_buffer_mb = *mb;
  if (std::getenv("GPUSCOPE_PER_THREAD_BUFFERS")) o.per_thread_buffers = envFlag("GPUSCOPE_PER_THREAD_BUFFERS");
  o.debug = std::getenv("GPUSCOPE_DEBUG") != nullptr;
  if (const char* trace = std::getenv("GPUSCOPE_TRACE"); trace && *trace) {
    const std::string list = std::string(",") + trace + ",";
    o.trace_cuda = list.find(",cuda,") != std::string::npos;
    o.trace_api = list.find(",api,") != std::string::npos;
    o.trace_nvtx = list.find(",nvtx,") != std::string::npos;
    o.trace_memory = list.find(",memory,") != std::string::npos;
    o.trace_sync = list.find(",sync,") != std::string::npos;
    o.trace_unified_memory = list.find(",um,") != std::string::npos;
  }
  if (std::getenv("GPUSCOPE_LATENCY_TIMESTAMPS")) o.latency_timestamps = envFlag("GPUSCOPE_LATENCY_TIMESTAMPS");
  o.all_api_calls = envFlag("GPUSCOPE_ALL_API_CALLS");
  if (const char* graphs = std::getenv("GPUSCOPE_CUDA_GRAPH_TRACE")) o.graphs_whole = std::string(graphs) == "graph";
  if (const char* range = std::getenv("GPUSCOPE_CAPTURE_RANGE"); range && *range) o.capture_range = range;
  std::tie(o.capture_from_ns, o.capture_to_ns) = captureWindow();
  return o;
}

Collector::Collector(std::unique_ptr<TraceWriter> writer) : writer_(std::move(writer)), pid_(getpid()) {
  converter_ = std::make_unique<RecordConverter>(*writer_, kSessionId, apiName);
  sem_init(&signal_flush_request_, 0, 0);
  sem_init(&signal_flush_done_, 0, 0);
}

void Collector::start(const CollectorOptions& options) {
  // Never replace a file: a pid can recur in a long job's folder.
  const std::string base = options.output_dir + "/gpuscope-" + std::to_string(getpid());
  const TraceWriter::Options live{.atomic = false, .page_size = 32768};
  Result<TraceWriter> writer = TraceWriter::create(base + ".gpuscope", live);
  for (int n = 2; !writer && writer.status().kind() == ErrorKind::kUsage && n < 100; ++n) {
    writer = TraceWriter::create(base + "-" + std::to_string(n) + ".gpuscope", live);
  }
  if (!writer) {
    std::fprintf(stderr, "gpuscope: cannot record this process: %s\n", writer.status().message().c_str());
    return;
  }
  const std::string writer_path = writer->path();
  auto* collector = new Collector(std::make_unique<TraceWriter>(std::move(*writer)));
  schema::SessionRow session = describeThisProcess(kSessionId);
  const int64_t now = cuptiNow();
  session.start_ns = now;
  int version = 0;
  if (cuDriverGetVersion(&version) == CUDA_SUCCESS) session.cuda_driver_version = version;
  uint32_t cupti_version = 0;
  if (cuptiGetVersion(&cupti_version) == CUPTI_SUCCESS) session.cupti_version = cupti_version;
  Status status = collector->writer_->append(session);
  if (status) status = collector->writer_->append(sampleClocks(kSessionId, now));
  if (status) status = collector->writer_->commit();
  if (!status) {
    std::fprintf(stderr, "gpuscope: cannot record this process: %s\n", status.message().c_str());
    return;
  }
  g_collector = collector;
  collector->writeEnvironment(interestingEnvironment());
  if (options.debug) std::fprintf(stderr, "gpuscope[%d]: recording into %s\n", getpid(), writer_path.c_str());
  collector->flush_interval_ = std::chrono::milliseconds(options.flush_interval_ms);
  collector->debug_ = options.debug;
  if (!collector->claimCupti() || !collector->enableActivities(options)) {
    (void)collector->writer_->finish();  // keeps the data-quality row that says why
    return;
  }
  collectiveLog().open(cuptiNow);
  collector->writer_thread_ = std::thread([collector] { collector->writerLoop(); });
  collector->installSignalHandlers();
  std::atexit(atExit);
}

// Subscribing tells us whether another profiler (Nsight, compute-sanitizer, torch.profiler's Kineto) holds
// CUPTI. Activity-only collection next to one silently receives nothing, so gpuscope steps aside instead.
bool Collector::claimCupti() {
  CUpti_SubscriberHandle subscriber = nullptr;
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
  CUpti_SubscriberParams params{CUpti_SubscriberParams_STRUCT_SIZE, "gpuscope", holder, sizeof holder};
  const CUptiResult result =
      cuptiSubscribe_v2(&subscriber, reinterpret_cast<CUpti_CallbackFunc>(callback), this, &params);
  if (result == CUPTI_SUCCESS) {
    subscriber_ = subscriber;
    cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_STATE);
    return true;
  }
  const std::string who = holder[0] ? std::string(holder) : std::string("another profiler");
  const std::string message = who + " already holds CUPTI (" + cuptiError(result) +
                              "); gpuscope recorded nothing in this process and left the program alone";
  note(schema::Severity::kError, "cupti_held_by_other_profiler", 1, message);
  std::fprintf(stderr, "gpuscope: %s\n", message.c_str());
  return false;
}

bool Collector::enableActivities(const CollectorOptions& options) {
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (options.device_buffer_mb > 0) {
    size_t bytes = static_cast<size_t>(options.device_buffer_mb) << 20;
    size_t size = sizeof bytes;
    cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &bytes);
  }
  uint8_t per_thread = options.per_thread_buffers ? 1 : 0;
  size_t attr_size = sizeof per_thread;
  cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &attr_size, &per_thread);
  // Our buffers come zeroed (ActivityBuffers clears them on the writer thread); otherwise CUPTI clears each one
  // inside the program's launch call that asked for it: 0.4-0.5 ms a 4 MiB buffer (docs/benchmarks.md).
  uint8_t zeroed = 1;
  cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &attr_size, &zeroed);
  if (options.latency_timestamps) cuptiActivityEnableLatencyTimestamps(1);
  CUptiResult registered = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
  if (registered != CUPTI_SUCCESS) {
    note(schema::Severity::kError, "cupti_unavailable", 1,
         "CUPTI refused its buffer callbacks: " + cuptiError(registered));
    std::fprintf(stderr, "gpuscope: CUPTI cannot start (%s); recording nothing\n", cuptiError(registered).c_str());
    return false;
  }
  std::vector<std::pair<CUpti_ActivityKind, const char*>> kinds = {{CUPTI_ACTIVITY_KIND_DEVICE, "device"},
                                                                   {CUPTI_ACTIVITY_KIND_CONTEXT, "context"}};
  // NVTX's records cost little and say where the capture ranges were: never gated.
  if (options.trace_nvtx) kinds.push_back({CUPTI_ACTIVITY_KIND_MARKER, "NVTX"});
  // With GRAPH_TRACE and the kernels on, CUPTI gives each graph launch as one record and no record of its kernel
  // nodes; kernels launched outside graphs are recorded as ever (H200, 2026-12-02). Never gated: switched on
  // while the program ran, graph-level records made four programs out of four crash that day (SIGSEGV); what falls
  // outside a capture range is left out when the traces merge.
  if (options.trace_cuda && options.graphs_whole) {
    kinds.push_back({CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "CUDA graphs as a whole"});
  }
  const size_t always = kinds.size();
  if (options.trace_cuda) {
    kinds.insert(kinds.end(), {{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels"},
                               {CUPTI_ACTIVITY_KIND_MEMCPY, "copies"},
                               {CUPTI_ACTIVITY_KIND_MEMSET, "memsets"},
                               {CUPTI_ACTIVITY_KIND_OVERHEAD, "overhead"}});
  }
  // Off by default: with it on, CUPTI intercepts every runtime call, which cost 2.2 us per PyTorch op on an
  // H100 (docs/benchmarks.md); the synchronize calls among the API records give the analyzer the same moments.
  if (options.trace_sync) kinds.push_back({CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronisation"});
  if (options.trace_api) kinds.push_back({CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API"});
  if (options.trace_api && options.all_api_calls) kinds.push_back({CUPTI_ACTIVITY_KIND_DRIVER, "driver API"});
  if (options.trace_memory) {
    kinds.insert(kinds.end(),
                 {{CUPTI_ACTIVITY_KIND_MEMORY2, "memory"}, {CUPTI_ACTIVITY_KIND_MEMORY_POOL, "memory pools"}});
  }
  // With no range and no window the gate stays open: everything is recorded throughout.
  gate_ = std::make_unique<CaptureGate>(options.capture_range, options.capture_from_ns, options.capture_to_ns);
  gate_->tick(cuptiNow());
  recording_ = recording_memory_ = gate_->open();
  for (size_t i = 0; i < kinds.size(); ++i) {
    const auto [kind, what] = kinds[i];
    if (i >= always) (isMemoryKind(kind) ? memory_kinds_ : gated_kinds_).push_back(kind);
    if (i >= always && !recording_) continue;
    if (CUptiResult r = cuptiActivityEnable(kind); r != CUPTI_SUCCESS) {
      note(schema::Severity::kWarning, "activity_unavailable", 1,
           std::string("CUPTI could not record ") + what + ": " + cuptiError(r));
    }
  }
  // The GPUs' NVLink topology, for what collectives could reach; a machine without NVLink has none to give.
  if (options.trace_cuda) cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_NVLINK);
  select_api_calls_ = options.trace_api && !options.all_api_calls;
  if (select_api_calls_) {
    if (recording_) selectApiCalls(true);
    note(schema::Severity::kInfo, "api_calls_selected", 1,
         "not recorded: the runtime queries " + std::string(skippedRuntimeApis()) +
             ", and driver calls other than launches, copies, sets, allocations, synchronisation, module loads "
             "and graphs (GPUSCOPE_ALL_API_CALLS=1 records every call)");
  }
  if (gate_->configured()) watchCaptureEdges();
  if (options.trace_cuda) watchContexts();
  if (options.trace_unified_memory) watchManagedAllocations();
  // The program's own pause and resume (formats/bridge_marks.h) come as marks: only marks are watched for them.
  if (options.trace_nvtx) {
    for (CUpti_CallbackId cbid :
         {CUPTI_CBID_NVTX_nvtxMarkA, CUPTI_CBID_NVTX_nvtxMarkEx, CUPTI_CBID_NVTX_nvtxDomainMarkEx}) {
      cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_NVTX, cbid);
    }
  }
  return true;
}

// After CUPTI_ACTIVITY_KIND_RUNTIME is on (it would override these settings otherwise); off: the driver calls
// chosen here are switched off again (the runtime's go with its kind). The calls are looked up by name once:
// the capture gate switches them at every edge of its ranges.
void Collector::selectApiCalls(bool on) {
  if (!api_calls_looked_up_) {
    for (uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS && name &&
          !recordRuntimeApi(name)) {
        runtime_skipped_.push_back(cbid);
      }
    }
    for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) == CUPTI_SUCCESS && name &&
          recordDriverApi(name)) {
        driver_chosen_.push_back(cbid);
      }
    }
    api_calls_looked_up_ = true;
  }
  if (on) {
    for (uint32_t cbid : runtime_skipped_) cuptiActivityEnableRuntimeApi(cbid, 0);
  }
  for (uint32_t cbid : driver_chosen_) cuptiActivityEnableDriverApi(cbid, on ? 1 : 0);
}

// ---- the capture gate ----------------------------------------------------------------------------------

// The gate is read under the switch's lock: two threads crossing edges at once leave the kinds as the gate
// stands after both, whichever switches last.
// A pause by the program leaves the allocations recorded: an allocation whose free fell in the pause would
// otherwise look kept for the rest of the run.
void Collector::followGate() {
  std::lock_guard lock(gate_switch_);
  const bool open = gate_->open();
  const bool on = open && !gate_->paused();
  const auto set = [](const std::vector<CUpti_ActivityKind>& kinds, bool enable) {
    for (CUpti_ActivityKind kind : kinds) enable ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind);
  };
  if (open != recording_memory_) set(memory_kinds_, open);
  recording_memory_ = open;
  if (on == recording_) return;
  set(gated_kinds_, on);
  if (select_api_calls_) selectApiCalls(on);
  recording_ = on;
  if (debug_) std::fprintf(stderr, "gpuscope[%d]: recording %s\n", getpid(), on ? "on" : "off");
}

void Collector::watchCaptureEdges() {
  if (gate_->watchesNvtx()) {
    for (CUpti_CallbackId cbid :
         {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxRangePop,
          CUPTI_CBID_NVTX_nvtxRangeStartA, CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxRangeEnd,
          CUPTI_CBID_NVTX_nvtxDomainRangePushEx, CUPTI_CBID_NVTX_nvtxDomainRangePop,
          CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
          CUPTI_CBID_NVTX_nvtxDomainRegisterStringA}) {
      cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_NVTX, cbid);
    }
  }
  if (gate_->watchesProfilerApi()) {
    cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
    cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
    cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
    cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
  }
}

// CUPTI's peer-copy records (MEMCPY2) beside its copy records, with buffers flushed while the program ran, made a
// JAX program's kernels fail: a neural ODE (diffrax; its solver's while loops in XLA's command buffers) ended with
// CUDA_ERROR_LAUNCH_FAILED at its first conditional, every time (bench/corpus/jax_diffrax_neural_ode, H200, driver
// 580.159.04, 2026-11-30). Bare CUPTI failed it the same with kernels, copies and peer copies and a flush every
// 100 ms, and ran it whole with any two of those three (docs/reliability.md). A peer copy needs two GPUs in one
// process: the peer-copy records go on at a second GPU's context, and from then on the periodic flush stays off.
void Collector::watchContexts() {
  if (subscriber_) cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
}

// Any thread (CUPTI's resource callback): notes the context's device; the writer thread acts on a second one.
void Collector::onContextCreated(const CUpti_ResourceData* resource) {
  uint32_t device = 0;
  if (!resource->context || cuptiGetDeviceId(resource->context, &device) != CUPTI_SUCCESS || device >= 64) return;
  const uint64_t seen = devices_seen_.fetch_or(uint64_t{1} << device) | (uint64_t{1} << device);
  if (std::popcount(seen) >= 2 && !second_device_.exchange(true)) buffers_.wake();  // before its first copy
}

// The writer thread: the periodic flush stops first, then the peer-copy records go on (as the gate stands).
void Collector::recordPeerCopies() {
  peer_copies_ = true;
  note(schema::Severity::kInfo, "periodic_flush_off", 1,
       "the program opened a second GPU: peer copies are recorded from then on, and CUPTI's buffers were no longer "
       "flushed each second (with peer copies recorded, that flush made a JAX program's kernels fail); records were "
       "fetched as buffers filled, on a signal and at the end, so a program that ends with _exit or SIGKILL loses "
       "its last partly filled buffers");
  std::lock_guard lock(gate_switch_);
  gated_kinds_.push_back(CUPTI_ACTIVITY_KIND_MEMCPY2);
  if (recording_) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2);
}

// Unified memory moves on demand, in page faults and migrations that no copy record shows: a kernel touching
// managed pages the host wrote stalls while they come over. CUPTI's counters for it are configured once the
// driver is up, and only for a program that allocates managed memory: every other program runs as before.
void Collector::watchManagedAllocations() {
  if (!subscriber_) return;
  cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000);
  cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged);
}

// The program's thread, as its first managed allocation returns (before it can touch the memory).
void Collector::recordUnifiedMemory() {
  const CUpti_ActivityUnifiedMemoryCounterKind kinds[] = {
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING};
  CUpti_ActivityUnifiedMemoryCounterConfig config[std::size(kinds)] = {};
  for (size_t i = 0; i < std::size(kinds); ++i) {
    config[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
    config[i].kind = kinds[i];
    config[i].enable = 1;
  }
  CUptiResult r = cuptiActivityConfigureUnifiedMemoryCounter(config, std::size(kinds));
  if (r == CUPTI_SUCCESS) {
    std::lock_guard lock(gate_switch_);
    gated_kinds_.push_back(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    if (recording_) r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  }
  unified_memory_result_ = static_cast<int>(r);
}

void Collector::noteUnifiedMemory() {
  const int r = unified_memory_result_;
  if (r < 0) return;  // no managed allocation
  if (r == CUPTI_SUCCESS) {
    note(schema::Severity::kInfo, "unified_memory_recorded", 1,
         "the program allocated managed memory: its migrations and page faults were recorded from then on (a "
         "record each: a program migrating 288 MiB a step ran 30 % slower recorded, docs/benchmarks.md; "
         "`--trace cuda,api,nvtx,memory` leaves them out)");
  } else {
    note(schema::Severity::kWarning, "activity_unavailable", 1,
         "CUPTI could not record unified memory's migrations and page faults: " +
             cuptiError(static_cast<CUptiResult>(r)));
  }
}

void Collector::periodicFlush() {
  if (!peer_copies_) cuptiActivityFlushAll(0);  // hands over buffers holding completed records; never under our lock
}

namespace {

// One push/pop stack of NVTX ranges: a thread's, in one domain (the default domain's handle is null).
int64_t nvtxStack(const void* domain) {
  return static_cast<int64_t>(syscall(SYS_gettid)) * 1000003 ^ static_cast<int64_t>(reinterpret_cast<intptr_t>(domain));
}

uint64_t returnedRangeId(const CUpti_NvtxData* call) {
  return call->functionReturnValue ? *static_cast<const nvtxRangeId_t*>(call->functionReturnValue) : 0;
}

}  // namespace

// NVTX's calls as the gate needs them; whether the gate changed. A range started with no id to end it by (no
// return value given) is not watched.
bool Collector::onNvtxCall(CUpti_CallbackId cbid, const CUpti_NvtxData* call) {
  const void* p = call->functionParams;
  if (!p) return false;
  std::lock_guard lock(strings_mutex_);
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA: {
      const char* message = static_cast<const nvtxRangePushA_params*>(p)->message;
      return gate_->push(nvtxStack(nullptr), message ? message : "");
    }
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      return gate_->push(nvtxStack(nullptr),
                         nvtxMessage(static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib, registered_strings_));
    case CUPTI_CBID_NVTX_nvtxRangePop: return gate_->pop(nvtxStack(nullptr));
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* params = static_cast<const nvtxDomainRangePushEx_params*>(p);
      return gate_->push(nvtxStack(params->domain), nvtxMessage(params->core.eventAttrib, registered_strings_));
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      return gate_->pop(nvtxStack(static_cast<const nvtxDomainRangePop_params*>(p)->domain));
    case CUPTI_CBID_NVTX_nvtxRangeStartA: {
      const char* message = static_cast<const nvtxRangeStartA_params*>(p)->message;
      return returnedRangeId(call) && gate_->start(returnedRangeId(call), message ? message : "");
    }
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      return returnedRangeId(call) &&
             gate_->start(
                 returnedRangeId(call),
                 nvtxMessage(static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib, registered_strings_));
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
      return returnedRangeId(call) &&
             gate_->start(returnedRangeId(call),
                          nvtxMessage(static_cast<const nvtxDomainRangeStartEx_params*>(p)->core.eventAttrib,
                                      registered_strings_));
    case CUPTI_CBID_NVTX_nvtxRangeEnd: return gate_->end(static_cast<const nvtxRangeEnd_params*>(p)->id);
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      return gate_->end(static_cast<const nvtxDomainRangeEnd_params*>(p)->core.id);
    case CUPTI_CBID_NVTX_nvtxMarkA: {
      const char* message = static_cast<const nvtxMarkA_params*>(p)->message;
      return gate_->mark(message ? message : "");
    }
    case CUPTI_CBID_NVTX_nvtxMarkEx:
      return gate_->mark(nvtxMessage(static_cast<const nvtxMarkEx_params*>(p)->eventAttrib, registered_strings_));
    case CUPTI_CBID_NVTX_nvtxDomainMarkEx:
      return gate_->mark(
          nvtxMessage(static_cast<const nvtxDomainMarkEx_params*>(p)->core.eventAttrib, registered_strings_));
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
      const char* text = static_cast<const nvtxDomainRegisterStringA_params*>(p)->string;
      if (text && call->functionReturnValue) {
        const auto handle = *static_cast<const nvtxStringHandle_t*>(call->functionReturnValue);
        registered_strings_[reinterpret_cast<uint64_t>(handle)] = text;
      }
      return false;
    }
    default: return false;
  }
}

// CUPTI's own warnings and fatal errors (after a fatal one CUPTI finalises itself and recording ends), queued
// for the writer thread; and the calls that open and close the capture gate. Any thread.
void CUPTIAPI Collector::callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                  const void* data) {
  auto* c = static_cast<Collector*>(userdata);
  if (!data) return;
  if (domain == CUPTI_CB_DOMAIN_STATE) {
    const auto* state = static_cast<const CUpti_StateData*>(data);
    const char* text = state->notification.message;
    c->state_notices_.push(cbid == CUPTI_CBID_STATE_FATAL_ERROR, text ? text : "(no message)",
                           state->notification.result);
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) c->onContextCreated(static_cast<const CUpti_ResourceData*>(data));
    return;
  }
  const bool managed =
      (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000) ||
      (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged);
  if (managed) {
    const auto* call = static_cast<const CUpti_CallbackData*>(data);
    if (call->callbackSite == CUPTI_API_EXIT && !c->managed_seen_.exchange(true)) c->recordUnifiedMemory();
    return;
  }
  if (c->gate_) c->onCaptureCallback(domain, cbid, data);
}

void Collector::onCaptureCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  bool changed = false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const auto* call = static_cast<const CUpti_CallbackData*>(data);
    const bool start = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                                                             : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    // On as the start returns, off as the stop is entered: the calls in between are the range's.
    if (start && call->callbackSite == CUPTI_API_EXIT) changed = gate_->profilerStart();
    if (!start && call->callbackSite == CUPTI_API_ENTER) changed = gate_->profilerStop();
  } else if (domain == CUPTI_CB_DOMAIN_NVTX) {
    changed = onNvtxCall(cbid, static_cast<const CUpti_NvtxData*>(data));
  }
  if (changed) followGate();
}

void Collector::bufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  const ActivityBuffer b = g_collector ? g_collector->buffers_.acquire() : ActivityBuffer{};
  *buffer = b.data;
  *size = b.bytes;
  *max_records = 0;  // as many as fit
}

void Collector::bufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
  if (!g_collector) return;
  // Asked before taking any lock of ours: CUPTI may hold its own while calling us (ABBA otherwise).
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    g_collector->dropped_records_ += static_cast<int64_t>(dropped);
  }
  if (!buffer) return;
  if (g_collector->closed_) {
    // The trace is already finished (the program's exit handlers ran after ours): count what is lost.
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) ++g_collector->late_records_;
    return;
  }
  g_collector->buffers_.pushCompleted({{buffer, size}, valid});
}

// Runs when the library is unloaded, after every exit handler: says what arrived too late to be written.
__attribute__((destructor)) static void reportLateRecords() { Collector::reportLate(); }

void Collector::reportLate() {
  if (!g_collector || g_collector->pid_ != getpid()) return;
  if (g_collector->debug_) {
    std::fprintf(stderr, "gpuscope[%d]: %lld records converted, %lld arrived after the trace was closed\n", getpid(),
                 static_cast<long long>(g_collector->converter_->recordsConverted()),
                 static_cast<long long>(g_collector->late_records_.load()));
  } else if (g_collector->late_records_ > 0) {
    std::fprintf(stderr, "gpuscope: %lld activity records arrived after the trace was closed and are missing from it\n",
                 static_cast<long long>(g_collector->late_records_.load()));
  }
}

// ---- the writer thread ----------------------------------------------------------------------------------

void Collector::writerLoop() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // signals are the program's business, never this thread's
  auto last_flush = Clock::now();
  auto last_commit = Clock::now();
  while (!stopping_) {
    processCompleted(50);
    buffers_.keepSpares();
    if (sem_trywait(&signal_flush_request_) == 0) finalFlushForSignal();
    if (gate_->configured() && gate_->tick(cuptiNow())) followGate();  // the window's edges
    const auto now = Clock::now();
    if (second_device_ && !peer_copies_) recordPeerCopies();
    if (flush_interval_.count() > 0 && now - last_flush >= flush_interval_) {
      periodicFlush();
      last_flush = now;
    }
    if (now - last_commit >= kCommitInterval) {
      nameNewThreads();
      recordStateNotices();
      writeCollectives();
      if (!failed_) {
        if (Status s = writer_->commit(); !s) fail(s);
      }
      last_commit = now;
    }
  }
}

void Collector::processCompleted(int wait_ms) {
  for (const CompletedBuffer& buffer : buffers_.takeCompleted(wait_ms)) {
    processBuffer(buffer);
    buffers_.release(buffer.buffer);
  }
}

void Collector::processBuffer(const CompletedBuffer& buffer) {
  if (failed_) return;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer.buffer.data, buffer.valid_bytes, &record) == CUPTI_SUCCESS) {
    if (Status s = converter_->convert(*record); !s) {
      fail(s);
      return;
    }
  }
}

void Collector::writeCollectives() {
  writeEnvironment(collectiveLog().takeEnvironment());
  for (const CollectiveEvent& e : collectiveLog().take()) {
    if (failed_) return;
    schema::CollectiveRow row{kSessionId,
                              e.thread_id,
                              e.timestamp_ns,
                              e.communicator,
                              e.ranks,
                              e.nodes,
                              e.rank,
                              {},
                              writer_->intern(e.operation),
                              e.count,
                              writer_->intern(e.datatype)};
    if (e.point_to_point) {
      row.peer = e.peer_or_root;
    } else {
      row.sequence = e.sequence;
      row.root = e.peer_or_root;
      if (!e.algorithm.empty()) row.algorithm = writer_->intern(e.algorithm);
      if (!e.protocol.empty()) row.protocol = writer_->intern(e.protocol);
    }
    row.channels = e.channels;
    if (Status s = writer_->append(row); !s) fail(s);
  }
}

// Each variable once, again only when its value changed (NCCL's are read a second time at its first init).
void Collector::writeEnvironment(const Environment& variables) {
  for (const auto& [name, value] : variables) {
    if (failed_) return;
    auto [it, added] = environment_written_.try_emplace(name, value);
    if (!added && it->second == value) continue;
    it->second = value;
    if (Status s = writer_->append(schema::EnvironmentRow{kSessionId, name, value}); !s) fail(s);
  }
}

void Collector::nameNewThreads() {
  for (int64_t tid : converter_->threadsSeen()) {
    if (!named_threads_.insert(tid).second) continue;
    std::string name = threadName(tid);
    if (!name.empty() && !failed_) (void)writer_->append(schema::ThreadRow{kSessionId, tid, std::move(name)});
  }
}

// Recording stops at the first write error (a full disk, a removed directory); the program goes on.
void Collector::fail(const Status& status) {
  if (failed_.exchange(true)) return;
  std::fprintf(stderr, "gpuscope: recording stopped, the program continues: %s\n", status.message().c_str());
}

namespace {
std::string stateNoticeText(const StateNotices::Notice& n) {
  return "CUPTI " + std::string(n.fatal ? "fatal error" : "warning") + " (" +
         cuptiError(static_cast<CUptiResult>(n.result)) + "): " + n.message +
         (n.fatal ? "; CUPTI stopped, so recording ended here" : "");
}
const char* stateNoticeCode(const StateNotices::Notice& n) { return n.fatal ? "cupti_fatal_error" : "cupti_warning"; }
schema::Severity stateNoticeSeverity(const StateNotices::Notice& n) {
  return n.fatal ? schema::Severity::kError : schema::Severity::kWarning;
}
}  // namespace

// Each notice as it is first seen (a crash later keeps it); the repeats are counted at the end.
void Collector::recordStateNotices() {
  for (const StateNotices::Notice& n : state_notices_.takeFresh()) {
    const std::string message = stateNoticeText(n);
    note(stateNoticeSeverity(n), stateNoticeCode(n), 1, message);
    if (n.fatal || debug_) std::fprintf(stderr, "gpuscope: %s\n", message.c_str());
  }
}

void Collector::recordRepeatedStateNotices() {
  for (const StateNotices::Notice& n : state_notices_.repeated()) {
    note(stateNoticeSeverity(n), stateNoticeCode(n), n.count,
         stateNoticeText(n) + " (" + std::to_string(n.count) + " times in all)");
  }
}

void Collector::note(schema::Severity severity, const std::string& code, int64_t count, const std::string& message) {
  if (failed_) return;
  if (Status s = writer_->append(schema::DataQualityRow{kSessionId, severity, code, count, message, cuptiNow()}); !s) {
    fail(s);
  }
}

// ---- the end of the process ----------------------------------------------------------------------------

void Collector::atExit() {
  if (g_collector && g_collector->pid_ == getpid()) g_collector->stop();  // a forked child leaves the file alone
}

// The forced flush comes before the writer thread is told to stop, and what it delivers is drained after
// the thread has ended: buffers handed over in between would otherwise be left in the queue, unwritten.
void Collector::stop() {
  if (stopping_) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  stopping_ = true;
  buffers_.wake();
  if (writer_thread_.joinable()) writer_thread_.join();
  processCompleted(0);
  finishFile();
  closed_ = true;
}

void Collector::finishFile() {
  if (failed_) return;
  const int64_t end = cuptiNow();
  nameNewThreads();
  recordStateNotices();
  recordRepeatedStateNotices();
  writeCollectives();
  if (const int64_t lost = collectiveLog().dropped(); lost > 0) {
    note(schema::Severity::kWarning, "dropped_collectives", lost,
         std::to_string(lost) + " NCCL operations were not recorded: the writer fell behind");
  }
  noteCaptureGate();
  noteUnifiedMemory();
  Status status = converter_->closeOpenRanges(end);
  if (status) status = writer_->append(sampleClocks(kSessionId, end));
  if (dropped_records_ > 0) {
    note(schema::Severity::kWarning, "dropped_records", dropped_records_,
         "CUPTI dropped " + std::to_string(dropped_records_.load()) + " activity records (its buffers were full)");
  }
  if (const int64_t refused = buffers_.buffersRefused(); refused > 0) {
    note(schema::Severity::kWarning, "buffers_refused", refused,
         std::to_string(refused) + " CUPTI buffer requests were refused at the " +
             std::to_string(buffers_.limits().max_bytes >> 20) + " MiB limit; their records are lost");
  }
  if (const int64_t unfinished = converter_->unfinishedRecords(); unfinished > 0) {
    note(schema::Severity::kInfo, "unfinished_records", unfinished,
         std::to_string(unfinished) + " records had no end time when flushed and are shown with zero length");
  }
  // Asked at the end, not at cuInit's injection, where the runtime may be inside its own initialisation.
  if (status) status = writer_->updateSessionEnd(kSessionId, end, loadedRuntimeVersion());
  if (status) status = writer_->finish();
  if (!status) fail(status);
}

// What the capture gate let through: how often recording was switched on, or that it never was.
void Collector::noteCaptureGate() {
  if (!gate_) return;
  if (const int64_t pauses = gate_->timesPaused(); pauses > 0) {
    note(schema::Severity::kInfo, "recording_paused", pauses,
         "the program paused recording " + std::to_string(pauses) +
             " times (gpuscope's PyTorch bridge, timing steps unrecorded): kernels, copies and API calls are missing "
             "between the marks '" +
             std::string(marks::kRecordingPaused) + "' and '" + std::string(marks::kRecordingResumed) + "'");
  }
  if (!gate_->configured()) return;
  const CaptureGate& g = *gate_;
  const std::string what = g.watchesProfilerApi() ? "between cudaProfilerStart and cudaProfilerStop"
                           : g.watchesNvtx()      ? "inside NVTX ranges named '" + g.range() + "'"
                                                  : "inside the --delay/--duration window";
  if (g.timesOpened() == 0 && !g.range().empty()) {
    note(schema::Severity::kWarning, "capture_never_opened", 1,
         "recording was never switched on: no CUDA work ran " + what);
    return;
  }
  note(schema::Severity::kInfo, "capture_gate", g.timesOpened(),
       "kernels, copies, API calls and allocations were recorded only " + what + " (switched on " +
           std::to_string(g.timesOpened()) + " times); outside, CUPTI recorded nothing but NVTX");
}

// Termination and crash signals whose action is the default (the program did not take them) get a handler
// that asks the writer thread for a last flush, waits at most 2 s, then lets the signal do what it would have.
void Collector::installSignalHandlers() {
  if (debug_) {  // backtrace() loads its unwinder on the first call: never first inside a signal handler
    void* frame = nullptr;
    backtrace(&frame, 1);
  }
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction action {};
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;  // a second signal of the same kind acts at once
    sigaction(sig, &action, nullptr);
  }
}

void Collector::onSignal(int sig) {
  Collector* c = g_collector;
  if (c && c->pid_ == getpid() && !c->stopping_) {
    if (c->debug_) printNativeStack(sig);
    c->fatal_signal_ = sig;
    sem_post(&c->signal_flush_request_);
    timespec deadline{};
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 2;
    while (sem_timedwait(&c->signal_flush_done_, &deadline) == -1 && errno == EINTR) {
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

// Under GPUSCOPE_DEBUG, the faulting thread's native frames (library and offset; addr2line resolves those of
// gpuscope's own library): a crash in a recorded program must say whose code it was in.
void Collector::printNativeStack(int sig) {
  char line[96];
  const int length = std::snprintf(line, sizeof line, "gpuscope[%d]: signal %d in thread %ld; native stack:\n",
                                   static_cast<int>(getpid()), sig, static_cast<long>(gettid()));
  if (length > 0) (void)!write(STDERR_FILENO, line, static_cast<size_t>(length));
  void* frames[48];
  backtrace_symbols_fd(frames, backtrace(frames, 48), STDERR_FILENO);
}

void Collector::finalFlushForSignal() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  processCompleted(0);
  nameNewThreads();
  note(schema::Severity::kWarning, "terminated_by_signal", 1,
       std::string("the program was ended by signal ") + std::to_string(fatal_signal_) + " (" +
           strsignal(fatal_signal_) + "); work after the last flush is missing");
  if (!failed_) {
    if (Status s = writer_->commit(); !s) fail(s);
  }
  sem_post(&signal_flush_done_);
}

}  // namespace gpuscope::collector
