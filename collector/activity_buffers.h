// CUPTI activity buffers: a pool of pre-allocated, zeroed buffers handed to CUPTI on request (so the request
// callback, which runs on the program's threads, never allocates or clears memory in the common case), and the
// queue of completed buffers waiting for the writer thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace gpuscope::collector {

struct ActivityBuffer {
  uint8_t* data = nullptr;  // nullptr: refused
  size_t bytes = 0;
};

struct CompletedBuffer {
  ActivityBuffer buffer;
  size_t valid_bytes;
};

// With per-thread activity buffers (CUPTI's default since CUDA 13) every thread that makes a CUDA call holds a
// buffer of its own: a JAX program had 142 such threads. The first buffers are large, for the few threads that
// launch most; past them buffers are small, so that many threads fit under the same total.
struct ActivityBufferLimits {
  size_t large_bytes = 4 << 20;  // about 20,000 kernel records
  size_t large_buffers = 64;     // 256 MiB
  size_t small_bytes = 512 << 10;
  size_t max_bytes = 512 << 20;  // beyond this CUPTI drops records, and counts them
};

class ActivityBuffers {
 public:
  static constexpr size_t kPreallocated = 8;
  static constexpr size_t kSpares = 4;

  explicit ActivityBuffers(ActivityBufferLimits limits = {});
  ~ActivityBuffers();

  // A free buffer, zeroed, or a null one when the limits are reached (CUPTI then drops records).
  ActivityBuffer acquire();
  // Allocates buffers (pages touched) until kSpares are free: called by the writer thread, so that acquire(), on
  // the program's threads, seldom has to allocate.
  void keepSpares();
  size_t freeBuffers() const;
  // Zeroes the buffer (CUPTI is told its buffers come zeroed and skips clearing them inside the program's
  // launch calls) and makes it free again. Called by the writer thread.
  void release(ActivityBuffer buffer);

  void pushCompleted(CompletedBuffer buffer);
  // Takes every completed buffer, waiting up to timeout_ms for the first one.
  std::vector<CompletedBuffer> takeCompleted(int timeout_ms);
  void wake();  // ends a takeCompleted() wait early

  int64_t buffersRefused() const;
  const ActivityBufferLimits& limits() const { return limits_; }

 private:
  size_t reserveLocked();                         // counts the next buffer in and returns its size; 0 at the limits
  ActivityBuffer allocateReserved(size_t bytes);  // a null buffer, the reservation undone, when it fails

  const ActivityBufferLimits limits_;
  mutable std::mutex mutex_;
  std::condition_variable completed_ready_;
  std::vector<ActivityBuffer> free_;
  std::deque<CompletedBuffer> completed_;
  size_t large_allocated_ = 0;
  size_t bytes_allocated_ = 0;
  int64_t refused_ = 0;
  bool woken_ = false;
};

}  // namespace gpuscope::collector
