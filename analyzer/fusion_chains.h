// Fusable kernel chains: memory-bound kernels (elementwise, reduction, normalisation, and copy kernels such as
// dtype casts) that run back to back on one stream within one iteration and one of the program's NVTX ranges
// (the PyTorch bridge's module ranges do not bound them), and GEMMs or convolutions followed by elementwise
// kernels (a bias or an activation their epilogue could apply). Recurring chains are grouped into patterns, each
// with its count, kernels, time and the saving fusion would bring, with the basis of that estimate.
#pragma once

#include <string>
#include <vector>

#include "analyzer/intervals.h"
#include "analyzer/iterations.h"
#include "analyzer/kernel_classifier.h"
#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

enum class FusionKind {
  kMemoryBoundChain,  // consecutive elementwise / reduction / normalisation kernels
  kGemmEpilogue,      // a GEMM or convolution, then the elementwise kernels that could be its epilogue
};

struct FusionPattern {
  FusionKind kind = FusionKind::kMemoryBoundChain;
  std::vector<std::string> kernels;  // names, in order
  std::vector<KernelClass> classes;
  int64_t occurrences = 0;
  int64_t kernel_time_ns = 0;            // the member kernels' execution time, all occurrences
  int64_t gap_time_ns = 0;               // GPU idle time between members, all occurrences
  int64_t saving_ns = 0;                 // estimated GPU time saved by fusing, all occurrences
  int64_t launches_removed = 0;          // all occurrences
  int64_t intermediate_bytes = 0;        // estimated bytes that would no longer round-trip through memory
  std::string basis;                     // how saving_ns was estimated
  std::vector<size_t> first_occurrence;  // kernel indexes of one occurrence, for the GUI and the advisor
};

// Chains longer than this are cut into pieces of this length, so a loop of thousands of small kernels
// shows as one recurring pattern rather than one unique chain.
inline constexpr size_t kMaxChainLength = 32;

// Patterns sorted by estimated saving, largest first. With iterations, only steady ones count (warm-up
// iterations and set-up run slower and once). With a device, only its kernels: the advisor's per-step figures
// are one GPU's, and in a multi-rank job every rank runs the same chains in the same steps. With windows
// (sorted, disjoint), only kernels starting inside them: those the advisor divides by its count of steps.
std::vector<FusionPattern> findFusableChains(const TraceData& trace, const Iterations& iterations,
                                             int32_t device = kNone, const std::vector<Interval>& windows = {});

std::string_view toString(FusionKind kind);  // "memory-bound chain", "GEMM epilogue"

}  // namespace gpuscope::analysis
