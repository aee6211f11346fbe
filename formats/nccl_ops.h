// NCCL's operations as the trace's `collective` rows hold them: their names in NCCL's and in torch.profiler's
// words, and which NCCL kernel launch each belongs to. One definition for the importer and exporter of
// torch.profiler traces and for the analyzer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gpuscope::nccl {

// torch.profiler's "Collective name" ("allreduce", "_allgather_base", …) as NCCL names the operation
// ("AllReduce"); "" when unknown.
std::string_view operationOfTorchName(std::string_view torch_name);
// NCCL's operation as torch.profiler names it ("AllReduce" → "allreduce"); "" when unknown.
std::string_view torchNameOfOperation(std::string_view operation);
// torch.profiler's "dtype" ("Float", "BFloat16") as NCCL's datatype ("ncclFloat32"), and back.
std::string_view datatypeOfTorchType(std::string_view torch_type);
std::string_view torchTypeOfDatatype(std::string_view datatype);

// What one rank sends in and receives out, in elements, for an operation of NCCL's `count`: AllGather's count is
// what each rank sends (it receives ranks × that), ReduceScatter's what each receives (it sends ranks × that); the
// others move count each way.
struct Elements {
  int64_t in = 0, out = 0;
};
Elements elementsOf(std::string_view operation, int64_t count, int64_t ranks);
// And back: NCCL's count from what one rank sends in and receives out (torch.profiler's "In/Out msg nelems").
int64_t countOf(std::string_view operation, const Elements& elements);

// An NCCL kernel's launch call: on which thread of which process, when; `id` is the caller's.
struct Launch {
  int64_t session = 0;
  int64_t thread = 0;
  int64_t start_ns = 0, end_ns = 0;
  size_t id = 0;
};
// Where a `collective` row was written: its process, thread and time.
struct Handed {
  int64_t session = 0;
  int64_t thread = 0;
  int64_t timestamp_ns = 0;
};
inline constexpr size_t kNoLaunch = static_cast<size_t>(-1);

// For each row, the `id` of its launch, or kNoLaunch: NCCL hands an operation to its profiler on the thread that
// launches its kernel, right after the launch returns (NCCL 2.28; before it in others), so a row belongs to that
// thread's launch nearest in time, before or after. A group's operations share one launch.
std::vector<size_t> launchOfEach(std::vector<Launch> launches, const std::vector<Handed>& rows);

}  // namespace gpuscope::nccl
