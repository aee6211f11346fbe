#include "analyzer/collectives.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "formats/nccl_ops.h"

namespace gpuscope::analysis {

int64_t ncclDatatypeBytes(std::string_view t) {
  if (t == "ncclInt8" || t == "ncclUint8" || t == "ncclFloat8e4m3" || t == "ncclFloat8e5m2") return 1;
  if (t == "ncclFloat16" || t == "ncclBfloat16") return 2;
  if (t == "ncclInt32" || t == "ncclUint32" || t == "ncclFloat32") return 4;
  if (t == "ncclInt64" || t == "ncclUint64" || t == "ncclFloat64") return 8;
  return 0;
}

double busFactor(std::string_view op, int64_t ranks) {
  if (ranks < 1) return 0;
  const double n = static_cast<double>(ranks);
  if (op == "AllReduce") return 2 * (n - 1) / n;
  if (op == "AllGather" || op == "ReduceScatter" || op == "AllToAll") return (n - 1) / n;
  if (op == "Broadcast" || op == "Reduce") return 1;
  return 0;
}

double CollectiveOp::busBytes() const { return static_cast<double>(bytes) * busFactor(operation, ranks); }

double CollectiveOp::busBytesPerSecond() const {
  const double bus = busBytes();
  if (bus <= 0 || transfer_ns <= 0) return 0;
  return bus * 1e9 / static_cast<double>(transfer_ns);
}

namespace {

// The largest buffer of one operation, in bytes: the whole gathered or scattered one for AllGather and ReduceScatter.
int64_t sizeOf(const TraceData& trace, const schema::CollectiveRow& r) {
  const int64_t element = ncclDatatypeBytes(trace.text(static_cast<int32_t>(r.datatype.id)));
  const nccl::Elements e =
      nccl::elementsOf(trace.text(static_cast<int32_t>(r.operation.id)), r.count, r.communicator_ranks);
  return std::max(e.in, e.out) * element;
}

// Every NCCL kernel's launch call, for joining the rows to them.
std::vector<nccl::Launch> ncclLaunches(const TraceData& trace) {
  std::vector<nccl::Launch> launches;
  const KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    const int32_t call = k.launch_call[i];
    if (call == kNone || !trace.kernelName(i).starts_with("nccl")) continue;
    launches.push_back({k.session[i], trace.api_calls.thread_id[call], trace.api_calls.start_ns[call],
                        trace.api_calls.end_ns[call], i});
  }
  return launches;
}

void addRow(const TraceData& trace, const schema::CollectiveRow& r, int32_t session, size_t kernel,
            std::map<size_t, CollectiveOp>& by_kernel) {
  const std::string& op = trace.text(static_cast<int32_t>(r.operation.id));
  auto [it, added] = by_kernel.try_emplace(kernel);
  CollectiveOp& c = it->second;
  if (added) {
    c.kernel = kernel;
    c.session = session;
    c.operation = op;
    c.ranks = r.communicator_ranks;
    c.communicator = r.communicator;
    c.sequence = r.sequence.value_or(-1);
    c.channels = r.channels.value_or(0);
    c.algorithm = trace.text(static_cast<int32_t>(r.algorithm.id));
    c.protocol = trace.text(static_cast<int32_t>(r.protocol.id));
    c.own_ns = trace.kernels.end_ns[kernel] - trace.kernels.start_ns[kernel];
    c.transfer_ns = c.own_ns;
  } else if (c.operation != op) {
    c.operation = "grouped";
  }
  c.bytes += sizeOf(trace, r);
}

// An operation's time: the shortest of its kernels over the ranks, matched by communicator, operation and
// sequence number (NCCL numbers each kind of collective on its own).
void shortestOverRanks(std::vector<CollectiveOp>& ops) {
  using Key = std::tuple<int64_t, std::string_view, int64_t>;
  std::map<Key, std::pair<int64_t, int32_t>> shortest;  // → (time, ranks seen)
  for (const CollectiveOp& c : ops) {
    if (c.sequence < 0) continue;
    auto [it, added] = shortest.try_emplace({c.communicator, c.operation, c.sequence}, c.own_ns, 0);
    it->second.first = std::min(it->second.first, c.own_ns);
    ++it->second.second;
  }
  for (CollectiveOp& c : ops) {
    if (c.sequence < 0) continue;
    std::tie(c.transfer_ns, c.ranks_seen) = shortest.at({c.communicator, c.operation, c.sequence});
  }
}

}  // namespace

std::vector<CollectiveOp> collectiveOps(const TraceData& trace) {
  if (trace.collectives.size() == 0) return {};
  std::vector<nccl::Handed> handed;
  for (size_t i = 0; i < trace.collectives.size(); ++i) {
    const schema::CollectiveRow& r = trace.collectives.rows[i];
    handed.push_back({trace.collectives.session[i], r.thread_id, r.timestamp_ns});
  }
  const std::vector<size_t> kernel_of = nccl::launchOfEach(ncclLaunches(trace), handed);
  std::map<size_t, CollectiveOp> by_kernel;
  for (size_t i = 0; i < trace.collectives.size(); ++i) {
    if (kernel_of[i] != nccl::kNoLaunch) {
      addRow(trace, trace.collectives.rows[i], trace.collectives.session[i], kernel_of[i], by_kernel);
    }
  }
  std::vector<CollectiveOp> ops;
  ops.reserve(by_kernel.size());
  for (auto& [kernel, op] : by_kernel) ops.push_back(op);
  shortestOverRanks(ops);
  return ops;
}

std::optional<GpuLink> nvlinkOf(const TraceData& trace, int32_t device) {
  if (device < 0 || static_cast<size_t>(device) >= trace.devices.size()) return std::nullopt;
  const schema::DeviceRow& d = trace.devices[device];
  for (const schema::NvlinkRow& l : trace.nvlinks) {
    // CUPTI describes each GPU pair once, from either end.
    if (l.session_id != d.session_id || l.peer_kind != "gpu" || (l.device_uuid != d.uuid && l.peer_uuid != d.uuid)) {
      continue;
    }
    return GpuLink{l.version, l.links, l.bandwidth_bytes_per_s / 2, l.through_nvswitch != 0};
  }
  return std::nullopt;
}

}  // namespace gpuscope::analysis
