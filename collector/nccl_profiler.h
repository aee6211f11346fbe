// NCCL's profiler plugin interface, version 4 (NCCL 2.26 and later): `gpuscope record` points
// NCCL_PROFILER_PLUGIN at this library, NCCL calls it for every collective and send/receive it enqueues, and
// the collector writes each one into the trace's `collective` table. CUPTI sees NCCL's kernels but not what
// they move; this is where the sizes, the algorithm and the protocol come from. An older NCCL looks for
// versions 1-3 only, finds none and goes on without the plugin: its collectives are simply not recorded.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "collector/session_info.h"

namespace gpuscope::collector {

// One operation as NCCL described it, with the communicator it ran on.
struct CollectiveEvent {
  int64_t thread_id = 0;
  int64_t timestamp_ns = 0;
  int64_t communicator = 0;
  int64_t ranks = 0;
  int64_t nodes = 0;
  int64_t rank = 0;
  bool point_to_point = false;
  int64_t sequence = 0;
  std::string operation;
  int64_t count = 0;
  std::string datatype;
  int64_t peer_or_root = 0;
  int64_t channels = 0;
  std::string algorithm;
  std::string protocol;
};

// Events wait here, pushed by whichever thread NCCL calls from, until the writer thread takes them. Closed
// (the plugin refuses NCCL's init) unless the collector is recording.
class CollectiveLog {
 public:
  // From now on NCCL's operations are kept, stamped with `clock` (the trace's clock: CUPTI's).
  void open(int64_t (*clock)()) {
    std::lock_guard lock(mutex_);
    clock_ = clock;
    open_ = true;
  }
  int64_t now() {
    std::lock_guard lock(mutex_);
    return clock_ ? clock_() : 0;
  }
  bool isOpen() {
    std::lock_guard lock(mutex_);
    return open_;
  }
  void push(CollectiveEvent event);
  std::vector<CollectiveEvent> take() {
    std::lock_guard lock(mutex_);
    return std::exchange(waiting_, {});
  }
  int64_t dropped() {
    std::lock_guard lock(mutex_);
    return dropped_;
  }
  // Variables read when NCCL created its first communicator (it reads its own then), for the writer.
  void pushEnvironment(Environment variables);
  Environment takeEnvironment() {
    std::lock_guard lock(mutex_);
    return std::exchange(environment_, {});
  }
  // True once, at the first communicator's creation: NCCL has read its environment by then.
  bool firstCommunicator();

 private:
  static constexpr size_t kMaxWaiting = 1 << 20;  // a stalled writer must not grow memory without bound
  std::mutex mutex_;
  bool open_ = false;
  int64_t (*clock_)() = nullptr;
  bool seen_communicator_ = false;
  std::vector<CollectiveEvent> waiting_;
  Environment environment_;
  int64_t dropped_ = 0;
};

CollectiveLog& collectiveLog();

namespace nccl {

// The plugin ABI of NCCL's ext-profiler/README.md, version 4: only what gpuscope reads is named; the layout
// of everything up to it must match NCCL's exactly.
using NcclResult = int;
constexpr NcclResult kNcclSuccess = 0;
constexpr NcclResult kNcclInternalError = 3;
constexpr int kProfileColl = 1 << 1;
constexpr int kProfileP2p = 1 << 2;

struct CollV4 {
  uint64_t sequence;
  const char* func;
  const void* send_buffer;
  void* receive_buffer;
  size_t count;
  int root;
  const char* datatype;
  uint8_t channels;
  uint8_t warps;
  const char* algorithm;
  const char* protocol;
};
struct P2pV4 {
  const char* func;
  void* buffer;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t channels;
};
struct EventDescriptorV4 {
  uint8_t type;
  void* parent;
  int rank;
  union {
    CollV4 coll;
    P2pV4 p2p;
  } payload;  // NCCL's union has more members (proxy and kernel-channel events), none larger than CollV4
};

struct ProfilerV4 {
  const char* name;
  NcclResult (*init)(void** context, int* activation_mask, const char* comm_name, uint64_t comm_hash, int nodes,
                     int ranks, int rank, void* log_function);
  NcclResult (*start_event)(void* context, void** handle, EventDescriptorV4* descriptor);
  NcclResult (*stop_event)(void* handle);
  NcclResult (*record_event_state)(void* handle, int state, void* state_arguments);
  NcclResult (*finalize)(void* context);
};

// The plugin's functions; injection.cpp exports them as the symbol `ncclProfiler_v4`.
NcclResult init(void** context, int* activation_mask, const char* comm_name, uint64_t comm_hash, int nodes, int ranks,
                int rank, void* log_function);
NcclResult startEvent(void* context, void** handle, EventDescriptorV4* descriptor);
NcclResult stopEvent(void* handle);
NcclResult recordEventState(void* handle, int state, void* state_arguments);
NcclResult finalize(void* context);

}  // namespace nccl

}  // namespace gpuscope::collector
