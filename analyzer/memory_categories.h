// What device memory holds — parameters, gradients, optimizer state, activations, temporaries — told from
// each allocation's lifetime against the iterations and their forward, backward and optimizer phases
// (NVTX ranges whose names say forward/fwd, backward/bwd, optim), and each category's peak. For PyTorch
// recorded with --torch, parameters, buffers, gradients and optimizer state are known exactly: the bridge
// saw their addresses (TensorRoleTable); lifetimes tell the rest.
#pragma once

#include <array>
#include <string_view>
#include <vector>

#include "analyzer/iterations.h"
#include "analyzer/memory_timeline.h"

namespace gpuscope::analysis {

enum class MemoryCategory {
  kParameters,      // allocated before the first iteration and kept (weights, and inputs kept on the GPU)
  kGradients,       // made in a backward phase and kept past it
  kOptimizerState,  // made in an optimizer phase and kept (Adam's moments)
  kActivations,     // made in a forward phase, freed in the backward phase (saved for backward)
  kTemporaries,     // made and freed within one phase, or within set-up
  kOther,           // anything else (no phases to judge by, kept from a forward phase, an allocator's reservation)
};
inline constexpr int kMemoryCategoryCount = 6;

struct CategoryUsage {
  MemoryCategory category = MemoryCategory::kOther;
  int64_t allocations = 0;
  int64_t peak_bytes = 0, peak_ns = 0;  // the category's own peak
  int64_t at_device_peak_bytes = 0;     // how much of the device's overall peak it was
};

struct MemoryCategories {
  bool phases_found = false;        // forward/backward/optimizer ranges were there to judge by
  bool roles_found = false;         // some allocations' categories came from the PyTorch bridge's tensor roles
  bool reservations_found = false;  // by lifetime, an allocator's reservation of half a GPU or more: "other"
  std::vector<MemoryCategory> of_allocation;              // parallel to MemoryAnalysis::allocations
  std::array<CategoryUsage, kMemoryCategoryCount> usage;  // for the device with the highest peak
};

MemoryCategories categorizeMemory(const TraceData& trace, const Iterations& iterations, const MemoryAnalysis& memory);

// One allocation of this share of its GPU's memory or more is an allocator's reservation that it hands out itself
// (XLA's preallocation: 75 % of the GPU by default, XLA_PYTHON_CLIENT_MEM_FRACTION another), not an array or the
// weights of the program's.
inline constexpr double kReservationShare = 0.5;
bool reservesHalfTheGpu(const TraceData& t, int32_t device, int64_t bytes);

std::string_view toString(MemoryCategory category);  // "parameters", "gradients", "optimizer_state", …

// The device with the highest peak's live bytes over time by category: one point per allocation or free, in
// time order (for the advisor's plot and the GUI's memory view).
struct CategorySeries {
  std::vector<int64_t> time;                                     // each change, in time order
  std::array<std::vector<int64_t>, kMemoryCategoryCount> bytes;  // live bytes of each after it
  int64_t peak_total = 0, peak_time = 0;
  // Live bytes of each category at time t (all 0 before the first change).
  std::array<int64_t, kMemoryCategoryCount> at(int64_t t) const;
};

// Of one device's allocations (kNone: the device with the highest peak).
CategorySeries categorySeries(const MemoryAnalysis& memory, const MemoryCategories& categories, int32_t device = kNone);

}  // namespace gpuscope::analysis
