// The collector inside the profiled process: claims CUPTI, hands it buffers, and runs one writer thread
// that converts completed buffers into trace rows and commits them at short intervals, so the trace is
// readable whatever happens to the process. Nothing here may disturb the program: every failure is
// reported once on stderr and in the trace, and recording stops, never the program.
#pragma once

#include <semaphore.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "collector/activity_buffers.h"
#include "collector/capture_gate.h"
#include "collector/record_converter.h"
#include "collector/session_info.h"
#include "formats/trace_writer.h"

namespace gpuscope::collector {

struct CollectorOptions {
  std::string output_dir = ".";
  bool trace_cuda = true;  // kernels, copies, sets, graphs, CUPTI overhead
  // CUDA graphs recorded as a whole, a record a launch (CUPTI's GRAPH_TRACE; `record --cuda-graph-trace graph`,
  // GPUSCOPE_CUDA_GRAPH_TRACE=graph), rather than a record a kernel node: a graph of many small kernels replayed
  // every step cost a JAX program 31 % recorded node by node, 4 % as a whole (docs/benchmarks.md, H200).
  bool graphs_whole = false;
  bool trace_sync = false;           // CUPTI's synchronisation records: they slow every CUDA runtime call
  bool trace_api = true;             // CUDA runtime and driver API calls
  bool trace_nvtx = true;            // NVTX ranges and marks
  bool trace_memory = true;          // allocations, frees, memory pools
  bool trace_unified_memory = true;  // unified memory's migrations and faults, from the first managed allocation
  bool latency_timestamps = true;    // queued/submitted times of kernels
  bool all_api_calls = false;        // every runtime and driver call, not only those worth recording
  bool per_thread_buffers = true;    // CUPTI's per-thread activity buffers (its default since CUDA 13)
  // How often records are fetched from CUPTI (it also hands over every buffer that fills); 0: only then. Each
  // flush hands over the threads' partly filled buffers, which they then ask for again, about 0.45 ms each,
  // inside their CUDA calls: 20-35 requests per thread of a 30 s PyTorch run every 100 ms, 3-5 every 1000 ms
  // (CUPTI's overhead records, docs/benchmarks.md "CUPTI's periodic flush", H100, 2026-11-28).
  int64_t flush_interval_ms = 1000;
  int64_t device_buffer_mb = 0;  // CUPTI's per-context device buffer; 0 keeps CUPTI's default
  bool debug = false;            // GPUSCOPE_DEBUG: say on stderr what the collector does
  // GPUSCOPE_CAPTURE_RANGE and GPUSCOPE_CAPTURE_WINDOW_NS ("from,to" in CUPTI's clock, to 0: no end), set by
  // the launcher for --capture-range, --delay and --duration: when the costly record kinds are on.
  std::string capture_range;
  int64_t capture_from_ns = 0, capture_to_ns = 0;

  static CollectorOptions fromEnvironment();
};

// Notices from CUPTI's STATE callbacks, which may come on any thread, waiting for the writer thread. A notice
// repeated (a JAX program's recording once had the same buffer warning 997 times) is counted, not queued again.
class StateNotices {
 public:
  struct Notice {
    bool fatal = false;
    std::string message;
    int result = 0;
    int64_t count = 1;
  };
  void push(bool fatal, std::string message, int result) {
    std::lock_guard lock(mutex_);
    for (Notice& n : seen_) {
      if (n.fatal == fatal && n.result == result && n.message == message) {
        ++n.count;
        return;
      }
    }
    if (seen_.size() >= kMaxKinds) return;  // a storm of different warnings must not grow without bound
    seen_.push_back({fatal, message, result});
    fresh_.push_back({fatal, std::move(message), result});
  }
  // The notices first seen since the last call.
  std::vector<Notice> takeFresh() {
    std::lock_guard lock(mutex_);
    return std::exchange(fresh_, {});
  }
  // Every notice seen more than once, with its count.
  std::vector<Notice> repeated() const {
    std::lock_guard lock(mutex_);
    std::vector<Notice> out;
    for (const Notice& n : seen_) {
      if (n.count > 1) out.push_back(n);
    }
    return out;
  }

 private:
  static constexpr size_t kMaxKinds = 1000;
  mutable std::mutex mutex_;
  std::vector<Notice> seen_;
  std::vector<Notice> fresh_;
};

class Collector {
 public:
  // Called once, from whichever entry point runs first (InitializeInjection at cuInit, or the NVTX loader's,
  // which can come before CUDA is initialised). Returns without recording if anything is in the way.
  static void start(const CollectorOptions& options);

  // CUPTI's buffer callbacks (static trampolines into the one instance).
  static void bufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void bufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid);
  static void reportLate();

 private:
  explicit Collector(std::unique_ptr<TraceWriter> writer);
  bool claimCupti();
  bool enableActivities(const CollectorOptions& options);
  void selectApiCalls(bool on);
  void followGate();         // the gated record kinds switched on or off as the capture gate stands
  void watchCaptureEdges();  // the NVTX and profiler API callbacks the gate needs
  void watchContexts();      // a second GPU's context turns the peer-copy records on (see recordPeerCopies)
  void onContextCreated(const CUpti_ResourceData* resource);
  void recordPeerCopies();
  void watchManagedAllocations();  // the first managed allocation turns the unified-memory records on
  void recordUnifiedMemory();
  void noteUnifiedMemory();
  void periodicFlush();
  void onCaptureCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  bool onNvtxCall(CUpti_CallbackId cbid, const CUpti_NvtxData* call);
  static void CUPTIAPI callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  void writerLoop();
  void processCompleted(int wait_ms);
  void processBuffer(const CompletedBuffer& buffer);
  void nameNewThreads();
  void writeCollectives();  // NCCL operations and NCCL's environment, from the profiler plugin
  void writeEnvironment(const Environment& variables);
  void finalFlushForSignal();
  void stop();  // atexit: forced flush, drain, finish the file
  void finishFile();
  void fail(const Status& status);
  void note(schema::Severity severity, const std::string& code, int64_t count, const std::string& message);
  void recordStateNotices();
  void recordRepeatedStateNotices();
  void noteCaptureGate();

  static void atExit();
  static void onSignal(int sig);
  static void printNativeStack(int sig);
  void installSignalHandlers();

  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<RecordConverter> converter_;
  ActivityBuffers buffers_;
  StateNotices state_notices_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::unique_ptr<CaptureGate> gate_;
  std::vector<CUpti_ActivityKind> gated_kinds_;   // on only while the gate is open (always, where none is asked)
  std::vector<CUpti_ActivityKind> memory_kinds_;  // as gated_kinds_, but left on while the program pauses
  bool recording_memory_ = true;                  // whether memory_kinds_ are on (under gate_switch_)
  bool select_api_calls_ = false;                 // re-applied each time the runtime kind is switched on
  bool api_calls_looked_up_ = false;
  std::vector<uint32_t> runtime_skipped_, driver_chosen_;  // the runtime calls left out, the driver calls kept
  std::mutex gate_switch_;                                 // one switch of the kinds at a time
  bool recording_ = true;                                  // whether the gated kinds are on (under gate_switch_)
  std::mutex strings_mutex_;                               // the NVTX calls' bookkeeping, on the program's threads
  std::unordered_map<uint64_t, std::string> registered_strings_;  // NVTX's registered strings, by handle
  std::thread writer_thread_;
  std::unordered_set<int64_t> named_threads_;
  std::unordered_map<std::string, std::string> environment_written_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> failed_{false};
  std::atomic<bool> closed_{false};  // the file is finished; records arriving now are lost (and counted)
  std::atomic<int64_t> late_records_{0};
  std::atomic<uint64_t> devices_seen_{0};       // a bit per device ordinal with a context
  std::atomic<bool> second_device_{false};      // set by the resource callback, acted on by the writer thread
  bool peer_copies_ = false;                    // the writer thread's: peer copies on, the periodic flush off
  std::atomic<bool> managed_seen_{false};       // set at the program's first managed allocation
  std::atomic<int> unified_memory_result_{-1};  // CUPTI's answer to turning the unified-memory records on
  std::chrono::milliseconds flush_interval_{1000};
  bool debug_ = false;
  std::atomic<int64_t> dropped_records_{0};
  int64_t pid_ = 0;
  sem_t signal_flush_request_{};
  sem_t signal_flush_done_{};
  volatile sig_atomic_t fatal_signal_ = 0;
};

}  // namespace gpuscope::collector
