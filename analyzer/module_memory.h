// PyTorch memory by module: each tensor the caching allocator handed out is charged to the innermost module
// range open when it was made (the PyTorch bridge's NVTX ranges "<qualified name> (forward)" and
// "<qualified name> (backward)"), so "which layer fills the peak, and with what" has an answer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/memory_categories.h"
#include "analyzer/phases.h"

namespace gpuscope::analysis {

struct ModuleMemory {
  std::string module;  // qualified name, e.g. "GPT2LMHeadModel.transformer.h.0.attn"
  Phase phase = Phase::kForward;
  int64_t allocations = 0;                // tensor allocations made in it
  int64_t allocated_bytes = 0;            // their total size
  int64_t at_peak_bytes = 0;              // of those, alive at the device's peak
  int64_t activations_at_peak_bytes = 0;  // of those, activations (saved for the backward pass)
};

// One row per module and phase that made tensors on the device with the highest peak, the most at the peak
// first. Empty for traces without the bridge's module ranges and allocator events.
std::vector<ModuleMemory> memoryByModule(const TraceData& trace, const MemoryAnalysis& memory,
                                         const MemoryCategories& categories);

}  // namespace gpuscope::analysis
