#include "formats/nccl_ops.h"

#include <algorithm>
#include <map>
#include <utility>

namespace gpuscope::nccl {

namespace {

// torch.profiler's names first, each NCCL operation's preferred one before its aliases.
constexpr std::pair<std::string_view, std::string_view> kOperations[] = {
    {"allreduce", "AllReduce"},
    {"allreduce_coalesced", "AllReduce"},
    {"allgather", "AllGather"},
    {"_allgather_base", "AllGather"},
    {"all_gather_into_tensor", "AllGather"},
    {"allgather_into_tensor_coalesced", "AllGather"},
    {"reduce_scatter", "ReduceScatter"},
    {"_reduce_scatter_base", "ReduceScatter"},
    {"reduce_scatter_tensor_coalesced", "ReduceScatter"},
    {"broadcast", "Broadcast"},
    {"reduce", "Reduce"},
    {"all_to_all", "AllToAll"},
    {"all_to_allv", "AllToAll"},
    {"alltoall_base", "AllToAll"},
    {"send", "Send"},
    {"recv", "Recv"}};

constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
    {"Float", "ncclFloat32"}, {"BFloat16", "ncclBfloat16"}, {"Half", "ncclFloat16"}, {"Double", "ncclFloat64"},
    {"Int", "ncclInt32"},     {"Long", "ncclInt64"},        {"Char", "ncclInt8"},    {"Byte", "ncclUint8"}};

template <size_t N>
std::string_view lookUp(const std::pair<std::string_view, std::string_view> (&table)[N], std::string_view key,
                        bool forward) {
  for (const auto& [torch, nccl] : table) {
    if ((forward ? torch : nccl) == key) return forward ? nccl : torch;
  }
  return {};
}

// The launch a row handed over at `t` belongs to, among one thread's launches in start order.
const Launch* nearest(const std::vector<const Launch*>& list, int64_t t) {
  auto next = std::lower_bound(list.begin(), list.end(), t, [](const Launch* l, int64_t v) { return l->start_ns < v; });
  const Launch* after = next != list.end() ? *next : nullptr;
  const Launch* before = next != list.begin() ? *std::prev(next) : nullptr;
  if (!before) return after;
  if (!after) return before;
  return t - before->end_ns <= after->start_ns - t ? before : after;
}

}  // namespace

std::string_view operationOfTorchName(std::string_view n) { return lookUp(kOperations, n, true); }
std::string_view torchNameOfOperation(std::string_view op) { return lookUp(kOperations, op, false); }
std::string_view datatypeOfTorchType(std::string_view t) { return lookUp(kTypes, t, true); }
std::string_view torchTypeOfDatatype(std::string_view t) { return lookUp(kTypes, t, false); }

Elements elementsOf(std::string_view operation, int64_t count, int64_t ranks) {
  const int64_t n = std::max<int64_t>(ranks, 1);
  if (operation == "AllGather") return {count, count * n};
  if (operation == "ReduceScatter") return {count * n, count};
  return {count, count};
}

int64_t countOf(std::string_view operation, const Elements& elements) {
  return operation == "ReduceScatter" ? elements.out : elements.in;
}

std::vector<size_t> launchOfEach(std::vector<Launch> launches, const std::vector<Handed>& rows) {
  std::map<std::pair<int64_t, int64_t>, std::vector<const Launch*>> by_thread;
  for (const Launch& l : launches) by_thread[{l.session, l.thread}].push_back(&l);
  for (auto& [thread, list] : by_thread) {
    std::sort(list.begin(), list.end(), [](const Launch* a, const Launch* b) { return a->start_ns < b->start_ns; });
  }
  std::vector<size_t> out(rows.size(), kNoLaunch);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto list = by_thread.find({rows[i].session, rows[i].thread});
    if (list == by_thread.end()) continue;
    if (const Launch* l = nearest(list->second, rows[i].timestamp_ns)) out[i] = l->id;
  }
  return out;
}

}  // namespace gpuscope::nccl
