#include "collector/activity_buffers.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace gpuscope::collector {

namespace {
// CUPTI requires 8-byte aligned buffers; page alignment also keeps them off shared cache lines. Every page is
// touched here: a fresh buffer's pages are otherwise mapped one fault at a time while CUPTI writes records into
// it, on the program's threads, inside their launch calls.
uint8_t* allocateBuffer() {
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(4096, ActivityBuffers::kBufferBytes));
  if (b) std::memset(b, 0, ActivityBuffers::kBufferBytes);
  return b;
}
}  // namespace

ActivityBuffers::ActivityBuffers() {
  for (size_t i = 0; i < kPreallocated; ++i) {
    if (uint8_t* b = allocateBuffer()) {
      free_.push_back(b);
      ++allocated_;
    }
  }
}

void ActivityBuffers::keepSpares() {
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (free_.size() >= kSpares || allocated_ >= kMaxBuffers) return;
      ++allocated_;
    }
    uint8_t* b = allocateBuffer();  // outside the lock: CUPTI's requests on the program's threads never wait on it
    std::lock_guard lock(mutex_);
    if (!b) {
      --allocated_;
      return;
    }
    free_.push_back(b);
  }
}

size_t ActivityBuffers::freeBuffers() const {
  std::lock_guard lock(mutex_);
  return free_.size();
}

ActivityBuffers::~ActivityBuffers() {
  for (uint8_t* b : free_) std::free(b);
}

uint8_t* ActivityBuffers::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      uint8_t* b = free_.back();
      free_.pop_back();
      return b;
    }
    if (allocated_ >= kMaxBuffers) {
      ++refused_;
      return nullptr;
    }
    ++allocated_;
  }
  uint8_t* b = allocateBuffer();
  if (!b) {
    std::lock_guard lock(mutex_);
    --allocated_;
    ++refused_;
  }
  return b;
}

void ActivityBuffers::release(uint8_t* buffer) {
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
