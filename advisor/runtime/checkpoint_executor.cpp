#include "advisor/runtime/checkpoint_executor.h"

#include <algorithm>
#include <string>

#include "advisor/runtime/cuda_driver.h"

namespace gpuscope::runtime {

CheckpointExecutor::~CheckpointExecutor() { (void)release(); }
CheckpointExecutor::CheckpointExecutor(CheckpointExecutor&& other) noexcept { *this = std::move(other); }

CheckpointExecutor& CheckpointExecutor::operator=(CheckpointExecutor&& other) noexcept {
  if (this == &other) return *this;
  (void)release();
  layers_ = std::move(other.layers_);
  starts_ = std::move(other.starts_);
  io_bytes_ = other.io_bytes_;
  input_ = other.input_;
  boundaries_ = std::move(other.boundaries_);
  store_in_ = std::move(other.store_in_);
  store_saved_ = std::move(other.store_saved_);
  std::copy(std::begin(other.temp_), std::end(other.temp_), temp_);
  saved_bytes_ = other.saved_bytes_;
  allocated_bytes_ = other.allocated_bytes_;
  allocation_ = other.allocation_;
  forward_done_ = other.forward_done_;
  other.boundaries_.clear(), other.store_in_.clear(), other.store_saved_.clear();
  std::fill(std::begin(other.temp_), std::end(other.temp_), 0);
  return *this;
}

std::vector<std::pair<CUdeviceptr*, int64_t>> CheckpointExecutor::buffers() {
  std::vector<std::pair<CUdeviceptr*, int64_t>> list;
  for (CUdeviceptr& p : boundaries_) list.push_back({&p, io_bytes_});
  for (size_t t = 0; t < store_in_.size(); ++t) {
    if (t > 0) list.push_back({&store_in_[t], io_bytes_});  // slot 0's input is the segment's own
    list.push_back({&store_saved_[t], saved_bytes_});
  }
  for (CUdeviceptr& p : temp_) list.push_back({&p, io_bytes_});
  return list;
}

Status CheckpointExecutor::allocate(CUstream stream) {
  const CudaDriver& cu = *cudaDriver().value();
  for (auto [p, bytes] : buffers()) {
    const size_t size = static_cast<size_t>(bytes);
    GPUSCOPE_RETURN_IF_ERROR(allocation_ == Allocation::kPerStep
                                 ? cu.check(cu.memAllocAsync(p, size, stream), "cuMemAllocAsync")
                                 : cu.check(cu.memAlloc(p, size), "cuMemAlloc"));
  }
  return Status::ok();
}

Status CheckpointExecutor::release(bool stream_ordered, CUstream stream) {
  Result<const CudaDriver*> cu = cudaDriver();
  if (!cu) return cu.status();
  for (auto [p, bytes] : buffers()) {
    if (*p && stream_ordered) (*cu)->memFreeAsync(*p, stream);
    if (*p && !stream_ordered) (*cu)->memFree(*p);
    *p = 0;
  }
  return Status::ok();
}

Result<CheckpointExecutor> CheckpointExecutor::create(std::vector<CheckpointLayer*> layers, int64_t io_bytes,
                                                      std::vector<size_t> segment_starts, Allocation allocation) {
  if (layers.empty() || io_bytes <= 0) return Status(ErrorKind::kUsage, "checkpointing needs layers and a size");
  if (segment_starts.empty() || segment_starts[0] != 0 ||
      !std::is_sorted(segment_starts.begin(), segment_starts.end()) || segment_starts.back() >= layers.size() ||
      std::adjacent_find(segment_starts.begin(), segment_starts.end()) != segment_starts.end()) {
    return Status(ErrorKind::kUsage, "segment starts must ascend from 0 and name layers of the stack");
  }
  Result<const CudaDriver*> cu = cudaDriver();
  if (!cu) return cu.status();
  GPUSCOPE_RETURN_IF_ERROR(ensureContext(**cu));
  CheckpointExecutor e;
  e.layers_ = std::move(layers);
  e.starts_ = std::move(segment_starts);
  e.io_bytes_ = io_bytes;
  size_t longest = 0;
  for (size_t s = 0; s < e.starts_.size(); ++s) longest = std::max(longest, e.segmentEnd(s) - e.starts_[s]);
  int64_t saved = 0;
  for (CheckpointLayer* layer : e.layers_) saved = std::max(saved, layer->savedBytes());
  e.saved_bytes_ = std::max<int64_t>(saved, 1);
  e.allocation_ = allocation;
  e.boundaries_.assign(e.starts_.size() - 1, 0);
  e.store_in_.assign(longest, 0);
  e.store_saved_.assign(longest, 0);
  for (auto [p, bytes] : e.buffers()) e.allocated_bytes_ += bytes;
  if (allocation == Allocation::kOnce) GPUSCOPE_RETURN_IF_ERROR(e.allocate(nullptr));
  return e;
}

size_t CheckpointExecutor::segmentEnd(size_t segment) const {
  return segment + 1 < starts_.size() ? starts_[segment + 1] : layers_.size();
}

CUdeviceptr CheckpointExecutor::segmentInput(size_t segment) const {
  return segment == 0 ? input_ : boundaries_[segment - 1];
}

Status CheckpointExecutor::forwardIntoStore(size_t segment, CUdeviceptr output, CUstream stream) {
  const size_t first = starts_[segment], end = segmentEnd(segment);
  for (size_t i = first; i < end; ++i) {
    const size_t t = i - first;
    const CUdeviceptr in = t == 0 ? segmentInput(segment) : store_in_[t];
    const CUdeviceptr out = i + 1 < end ? store_in_[t + 1] : output;
    GPUSCOPE_RETURN_IF_ERROR(layers_[i]->forward(in, out, store_saved_[t], stream));
  }
  return Status::ok();
}

// Segments before the last keep only their output (the next boundary): their layers' inputs go through two
// temporaries and their saved bytes into the store's first slot, overwritten layer after layer.
Status CheckpointExecutor::forward(CUdeviceptr input, CUdeviceptr output, CUstream stream) {
  if (forward_done_) return Status(ErrorKind::kUsage, "forward again before backward");
  if (allocation_ == Allocation::kPerStep) GPUSCOPE_RETURN_IF_ERROR(allocate(stream));
  input_ = input;
  for (size_t s = 0; s + 1 < starts_.size(); ++s) {
    CUdeviceptr in = segmentInput(s);
    for (size_t i = starts_[s]; i < segmentEnd(s); ++i) {
      const bool last = i + 1 == segmentEnd(s);
      const CUdeviceptr out = last ? boundaries_[s] : temp_[(i - starts_[s]) % 2];
      GPUSCOPE_RETURN_IF_ERROR(layers_[i]->forward(in, out, store_saved_[0], stream));
      in = out;
    }
  }
  GPUSCOPE_RETURN_IF_ERROR(forwardIntoStore(starts_.size() - 1, output, stream));
  forward_done_ = true;
  return Status::ok();
}

// The last segment's activations are in the store from forward; every other segment is recomputed into
// it (its output, already known, goes to a temporary). Gradients pass through two temporaries.
Status CheckpointExecutor::backward(CUdeviceptr grad_output, CUdeviceptr grad_input, CUstream stream) {
  if (!forward_done_) return Status(ErrorKind::kUsage, "backward needs a forward pass first");
  forward_done_ = false;
  CUdeviceptr grad = grad_output;
  int next_temp = 0;
  for (size_t s = starts_.size(); s-- > 0;) {
    if (s + 1 < starts_.size()) GPUSCOPE_RETURN_IF_ERROR(forwardIntoStore(s, temp_[2], stream));
    for (size_t i = segmentEnd(s); i-- > starts_[s];) {
      const size_t t = i - starts_[s];
      const CUdeviceptr in = t == 0 ? segmentInput(s) : store_in_[t];
      const CUdeviceptr out = i == 0 ? grad_input : temp_[next_temp];
      GPUSCOPE_RETURN_IF_ERROR(layers_[i]->backward(in, store_saved_[t], grad, out, stream));
      grad = out;
      next_temp ^= 1;
    }
  }
  return allocation_ == Allocation::kPerStep ? release(true, stream) : Status::ok();
}

}  // namespace gpuscope::runtime
