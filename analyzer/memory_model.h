// The analytic memory model M ≈ P·D_param + P·D_grad + B·A·D_act + O·P·D_opt (+ what it does not
// explain: temporaries, workspace, allocator slack), fitted to the categories measured at the peak, and
// the what-ifs it answers before anyone re-runs: bf16 activations, activation checkpointing, 8-bit or
// sharded optimizer state, batch size ×2 or ÷2.
#pragma once

#include <string>
#include <vector>

#include "analyzer/memory_categories.h"
#include "analyzer/memory_timeline.h"

namespace gpuscope::analysis {

struct MemoryModelTerms {       // bytes at the measured peak
  int64_t parameters = 0;       // P·D_param
  int64_t gradients = 0;        // P·D_grad
  int64_t activations = 0;      // B·A·D_act
  int64_t optimizer_state = 0;  // O·P·D_opt
  int64_t unexplained = 0;      // temporaries and what no category covers
  int64_t total() const { return parameters + gradients + activations + optimizer_state + unexplained; }
};

struct WhatIf {
  std::string id;                // stable: "bf16_activations", "checkpointing", "optimizer_8bit", "optimizer_sharded",
                                 // "batch_x2", "batch_half"
  int64_t setting = 0;           // checkpointing: segments; optimizer_sharded: GPUs
  std::string change;            // "bf16 activations (autocast)"
  int64_t predicted_peak_bytes;  // the model's peak after the change
  std::string basis;             // what the estimate assumes
};

struct MemoryModel {
  int64_t measured_peak_bytes = 0;
  MemoryModelTerms terms;
  int64_t parameter_count = 0;            // P: gradient (or, without gradients, parameter) bytes over D = 4 (fp32)
  double optimizer_states_per_param = 0;  // O, in fp32 values per parameter (Adam: 2)
  int64_t layers = 0;                     // activation allocations per iteration: the checkpointing granularity
  std::vector<WhatIf> what_ifs;
};

MemoryModel fitMemoryModel(const MemoryAnalysis& memory, const MemoryCategories& categories,
                           const Iterations& iterations);

}  // namespace gpuscope::analysis
