// Where to checkpoint: split a stack of layers into segments so that the backward pass keeps only each
// segment's input and recomputes one segment at a time. Peak activation memory is then the inputs kept at
// the segment boundaries plus the largest segment's own activations; the price is one more forward pass of
// every segment but the last. √n segments by default; for a memory budget, the boundaries that meet it
// with the fewest segments, found over each layer's real sizes (a large layer gets a segment of its own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/status.h"

namespace gpuscope::runtime {

struct LayerCost {
  int64_t activation_bytes = 0;  // everything the layer keeps for its backward
  int64_t input_bytes = 0;       // its input: what a segment boundary before it keeps
  int64_t forward_ns = 0;        // its forward time, which recomputation repeats
};

struct CheckpointPlan {
  std::vector<size_t> segment_starts;  // first layer of each segment, ascending, starting at 0
  int64_t peak_bytes = 0;              // predicted peak of activations kept for backward
  int64_t baseline_bytes = 0;          // without checkpointing: every layer's activations
  int64_t extra_ns = 0;                // recomputation: the forward time of every segment but the last
  std::string basis;
};

// Peak, baseline and extra time of given segment starts (the model above).
CheckpointPlan evaluatePlan(const std::vector<LayerCost>& layers, std::vector<size_t> segment_starts);
// `segments` segments of equal layer counts; 0: round(√n).
CheckpointPlan planUniform(const std::vector<LayerCost>& layers, size_t segments = 0);
// The fewest segments whose predicted peak fits the budget; an error when no split fits.
Result<CheckpointPlan> planForBudget(const std::vector<LayerCost>& layers, int64_t budget_bytes);

}  // namespace gpuscope::runtime
