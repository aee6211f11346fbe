#include "collector/nccl_profiler.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace gpuscope::collector {

void CollectiveLog::push(CollectiveEvent event) {
  std::lock_guard lock(mutex_);
  if (waiting_.size() >= kMaxWaiting) {
    ++dropped_;
    return;
  }
  waiting_.push_back(std::move(event));
}

void CollectiveLog::pushEnvironment(Environment variables) {
  std::lock_guard lock(mutex_);
  environment_.insert(environment_.end(), variables.begin(), variables.end());
}

bool CollectiveLog::firstCommunicator() {
  std::lock_guard lock(mutex_);
  return !std::exchange(seen_communicator_, true);
}

CollectiveLog& collectiveLog() {
  static auto* log = new CollectiveLog;  // never destroyed: NCCL may finalize communicators at exit
  return *log;
}

namespace {

// One per communicator: what every event on it shares.
struct Communicator {
  int64_t hash = 0;
  int64_t ranks = 0;
  int64_t nodes = 0;
  int64_t rank = 0;
};

int dummy_handle = 0;  // collectives need no state between start and stop; NCCL only wants a handle

std::string text(const char* s) { return s ? s : ""; }

}  // namespace

namespace nccl {

NcclResult init(void** context, int* activation_mask, const char*, uint64_t comm_hash, int nodes, int ranks, int rank,
                void*) {
  if (!collectiveLog().isOpen()) return kNcclInternalError;  // not recording: NCCL goes on without the plugin
  if (collectiveLog().firstCommunicator()) collectiveLog().pushEnvironment(interestingEnvironment("NCCL_"));
  *context = new Communicator{static_cast<int64_t>(comm_hash), ranks, nodes, rank};
  *activation_mask = kProfileColl | kProfileP2p;
  return kNcclSuccess;
}

NcclResult startEvent(void* context, void** handle, EventDescriptorV4* d) {
  *handle = &dummy_handle;
  if (!context || !d || (d->type != kProfileColl && d->type != kProfileP2p)) return kNcclSuccess;
  const auto* comm = static_cast<const Communicator*>(context);
  CollectiveEvent e;
  e.timestamp_ns = collectiveLog().now();
  e.thread_id = static_cast<int64_t>(syscall(SYS_gettid));
  e.communicator = comm->hash;
  e.ranks = comm->ranks;
  e.nodes = comm->nodes;
  e.rank = comm->rank;
  if (d->type == kProfileColl) {
    e.sequence = static_cast<int64_t>(d->payload.coll.sequence);
    e.operation = text(d->payload.coll.func);
    e.count = static_cast<int64_t>(d->payload.coll.count);
    e.datatype = text(d->payload.coll.datatype);
    e.peer_or_root = d->payload.coll.root;
    e.channels = d->payload.coll.channels;
    e.algorithm = text(d->payload.coll.algorithm);
    e.protocol = text(d->payload.coll.protocol);
  } else {
    e.point_to_point = true;
    e.operation = text(d->payload.p2p.func);
    e.count = static_cast<int64_t>(d->payload.p2p.count);
    e.datatype = text(d->payload.p2p.datatype);
    e.peer_or_root = d->payload.p2p.peer;
    e.channels = d->payload.p2p.channels;
  }
  collectiveLog().push(std::move(e));
  return kNcclSuccess;
}

NcclResult stopEvent(void*) { return kNcclSuccess; }
NcclResult recordEventState(void*, int, void*) { return kNcclSuccess; }
NcclResult finalize(void* context) {
  delete static_cast<Communicator*>(context);
  return kNcclSuccess;
}

}  // namespace nccl
}  // namespace gpuscope::collector
