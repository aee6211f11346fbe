#include "collector/activity_buffers.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace gpuscope::collector {

ActivityBuffers::ActivityBuffers(ActivityBufferLimits limits) : limits_(limits) {
  for (size_t i = 0; i < kPreallocated; ++i) {
    size_t bytes = 0;
    {
      std::lock_guard lock(mutex_);
      bytes = reserveLocked();
    }
    ActivityBuffer b = allocateReserved(bytes);
    if (!b.data) break;
    free_.push_back(b);
  }
}

ActivityBuffers::~ActivityBuffers() {
  for (ActivityBuffer b : free_) std::free(b.data);
}

size_t ActivityBuffers::reserveLocked() {
  size_t bytes = 0;
  if (large_allocated_ < limits_.large_buffers && bytes_allocated_ + limits_.large_bytes <= limits_.max_bytes) {
    bytes = limits_.large_bytes;
    ++large_allocated_;
  } else if (bytes_allocated_ + limits_.small_bytes <= limits_.max_bytes) {
    bytes = limits_.small_bytes;
  }
  bytes_allocated_ += bytes;
  return bytes;
}

// CUPTI requires 8-byte aligned buffers; page alignment also keeps them off shared cache lines. Every page is
// touched (zeroed) here: a fresh buffer's pages are otherwise mapped one fault at a time while CUPTI writes
// records into it, on the program's threads, inside their launch calls.
ActivityBuffer ActivityBuffers::allocateReserved(size_t bytes) {
  auto* b = bytes ? static_cast<uint8_t*>(std::aligned_alloc(4096, bytes)) : nullptr;
  if (b) {
    std::memset(b, 0, bytes);
    return {b, bytes};
  }
  std::lock_guard lock(mutex_);
  if (bytes == limits_.large_bytes && bytes > 0) --large_allocated_;
  bytes_allocated_ -= bytes;
  return {};
}

void ActivityBuffers::keepSpares() {
  for (;;) {
    size_t bytes = 0;
    {
      std::lock_guard lock(mutex_);
      if (free_.size() >= kSpares) return;
      bytes = reserveLocked();
    }
    // Outside the lock: CUPTI's requests on the program's threads never wait on it.
    ActivityBuffer b = allocateReserved(bytes);
    if (!b.data) return;
    std::lock_guard lock(mutex_);
    free_.push_back(b);
  }
}

size_t ActivityBuffers::freeBuffers() const {
  std::lock_guard lock(mutex_);
  return free_.size();
}

ActivityBuffer ActivityBuffers::acquire() {
  size_t bytes = 0;
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      ActivityBuffer b = free_.back();
      free_.pop_back();
      return b;
    }
    bytes = reserveLocked();
  }
  ActivityBuffer b = allocateReserved(bytes);
  if (!b.data) {
    std::lock_guard lock(mutex_);
    ++refused_;
  }
  return b;
}

// The whole buffer, not only its valid bytes: CUPTI relies on zeros wherever it has not written a whole record.
void ActivityBuffers::release(ActivityBuffer buffer) {
  std::memset(buffer.data, 0, buffer.bytes);
  std::lock_guard lock(mutex_);
  free_.push_back(buffer);
}

void ActivityBuffers::pushCompleted(CompletedBuffer buffer) {
  {
    std::lock_guard lock(mutex_);
    completed_.push_back(buffer);
  }
  completed_ready_.notify_one();
}

std::vector<CompletedBuffer> ActivityBuffers::takeCompleted(int timeout_ms) {
  std::unique_lock lock(mutex_);
  completed_ready_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return !completed_.empty() || woken_; });
  woken_ = false;
  std::vector<CompletedBuffer> taken(completed_.begin(), completed_.end());
  completed_.clear();
  return taken;
}

void ActivityBuffers::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  completed_ready_.notify_one();
}

int64_t ActivityBuffers::buffersRefused() const {
  std::lock_guard lock(mutex_);
  return refused_;
}

}  // namespace gpuscope::collector
