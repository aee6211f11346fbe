// Activation checkpointing for a stack of layers: the forward pass keeps only each segment's input (and
// the last segment's activations, which backward needs first); backward recomputes one segment at a time
// into one shared store, then runs its layers' backward. Segments come from checkpoint_planner.h; a single
// segment ({0}) is the plain, uncheckpointed stack, run by the same code.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <vector>

#include "formats/status.h"

namespace gpuscope::runtime {

// One layer, mapping an input of the stack's io_bytes to an output of the same size.
class CheckpointLayer {
 public:
  virtual ~CheckpointLayer() = default;
  // Bytes the forward pass saves for the backward pass, besides the input.
  virtual int64_t savedBytes() const = 0;
  virtual Status forward(CUdeviceptr in, CUdeviceptr out, CUdeviceptr saved, CUstream stream) = 0;
  // grad_in from grad_out, the input and what forward saved; parameter gradients are the layer's own.
  virtual Status backward(CUdeviceptr in, CUdeviceptr saved, CUdeviceptr grad_out, CUdeviceptr grad_in,
                          CUstream stream) = 0;
};

// When the executor's buffers (boundary inputs, the segment store, three io buffers) exist: for its whole
// life, or from each forward pass to the end of its backward pass, stream-ordered (cuMemAllocAsync), as a
// framework's allocator would, so that a recording shows them as activations.
enum class Allocation { kOnce, kPerStep };

class CheckpointExecutor {
 public:
  static Result<CheckpointExecutor> create(std::vector<CheckpointLayer*> layers, int64_t io_bytes,
                                           std::vector<size_t> segment_starts,
                                           Allocation allocation = Allocation::kOnce);
  ~CheckpointExecutor();
  CheckpointExecutor(CheckpointExecutor&&) noexcept;
  CheckpointExecutor& operator=(CheckpointExecutor&&) noexcept;

  // The caller keeps input alive until backward has run.
  Status forward(CUdeviceptr input, CUdeviceptr output, CUstream stream);
  Status backward(CUdeviceptr grad_output, CUdeviceptr grad_input, CUstream stream);

  // Device memory the executor holds for the backward pass (per step or for its life): what checkpointing
  // saves is measured on this.
  int64_t activationBytes() const { return allocated_bytes_; }
  size_t segments() const { return starts_.size(); }

 private:
  CheckpointExecutor() = default;
  size_t segmentEnd(size_t segment) const;
  CUdeviceptr segmentInput(size_t segment) const;
  // Runs the forward of one segment, keeping every layer's input and saved bytes in the store.
  Status forwardIntoStore(size_t segment, CUdeviceptr output, CUstream stream);
  // Every buffer with its size, in one list for allocating and freeing.
  std::vector<std::pair<CUdeviceptr*, int64_t>> buffers();
  Status allocate(CUstream stream);
  // Frees every buffer at once, or stream-ordered on `stream` (the end of a per-step backward pass).
  Status release(bool stream_ordered = false, CUstream stream = nullptr);

  std::vector<CheckpointLayer*> layers_;
  std::vector<size_t> starts_;
  int64_t io_bytes_ = 0;
  CUdeviceptr input_ = 0;
  std::vector<CUdeviceptr> boundaries_;  // input of segment s, for s ≥ 1
  std::vector<CUdeviceptr> store_in_;    // per layer of the longest segment: its input (slot 0 unused)
  std::vector<CUdeviceptr> store_saved_;
  CUdeviceptr temp_[3] = {0, 0, 0};
  int64_t saved_bytes_ = 0;
  int64_t allocated_bytes_ = 0;
  Allocation allocation_ = Allocation::kOnce;
  bool forward_done_ = false;
};

}  // namespace gpuscope::runtime
