// NCCL's operations joined to the kernels that carried them, and the bus bandwidth each reached.
//
// The trace's `collective` rows (NCCL's profiler plugin, `gpuscope record`) say what an operation moved: its
// type, element count and datatype, the algorithm and protocol NCCL chose. CUPTI's kernel records say how long
// the kernel carrying it ran; formats/nccl_ops.h says which launch each row belongs to. Bandwidth follows nccl-tests
// (its doc/PERFORMANCE.md): the algorithm bandwidth is the operation's size (its largest buffer) over its time, and the
// bus bandwidth scales it by what each rank must send: 2(n-1)/n for AllReduce, (n-1)/n for AllGather, ReduceScatter and
// AllToAll, 1 for the rooted ones. A kernel's time includes waiting for the other ranks to arrive; the rank that
// arrived last waited least, so an operation's time is the shortest of its kernels over the ranks the trace holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

struct CollectiveOp {
  size_t kernel = 0;           // the NCCL kernel that carried it (index into TraceData::kernels)
  int32_t session = kNone;     // its process
  std::string_view operation;  // NCCL's name: "AllReduce", "AllGather", "Send", …; "grouped" for a mix
  int64_t bytes = 0;           // nccl-tests' size: the largest buffer (summed over a group of the same type)
  int64_t ranks = 0;           // ranks of its communicator
  int64_t communicator = 0;
  int64_t sequence = -1;  // in its communicator; -1 for send/receive
  int64_t channels = 0;
  std::string_view algorithm, protocol;
  int64_t own_ns = 0;                // its kernel's time on this rank
  int64_t transfer_ns = 0;           // the shortest of its kernels over the ranks in the trace
  int32_t ranks_seen = 1;            // how many of its communicator's ranks the trace holds it for
  double busBytes() const;           // bytes × nccl-tests' bus factor: what each rank must move; 0 for send/receive
  double busBytesPerSecond() const;  // 0 for send/receive and for an unknown datatype
};

// Every NCCL operation of the trace that could be joined to its kernel, in kernel order.
std::vector<CollectiveOp> collectiveOps(const TraceData& trace);

int64_t ncclDatatypeBytes(std::string_view datatype);  // 4 for "ncclFloat32"; 0 when unknown
// nccl-tests' factor from algorithm to bus bandwidth; 0 for an operation it does not define.
double busFactor(std::string_view operation, int64_t ranks);

// The NVLink connection between a process's GPU and another GPU: what a collective between them could reach.
struct GpuLink {
  int64_t version = 0;
  int64_t links = 0;
  int64_t bytes_per_s_each_way = 0;  // CUPTI reports both directions of all links together
  bool through_nvswitch = false;
};
std::optional<GpuLink> nvlinkOf(const TraceData& trace, int32_t device);

}  // namespace gpuscope::analysis
