// CUPTI activity buffers: a pool of large pre-allocated buffers handed to CUPTI on request (so the request
// callback, which runs on the program's threads, never allocates in the common case), and the queue of
// completed buffers waiting for the writer thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace gpuscope::collector {

struct CompletedBuffer {
  uint8_t* data;
  size_t valid_bytes;
};

class ActivityBuffers {
 public:
  static constexpr size_t kBufferBytes = 4 << 20;  // 4 MiB: about 20,000 kernel records
  static constexpr size_t kPreallocated = 8;
  static constexpr size_t kSpares = 4;
  static constexpr size_t kMaxBuffers = 128;  // 512 MiB: beyond this CUPTI drops records, and counts them

  ActivityBuffers();
  ~ActivityBuffers();

  // A free buffer, or nullptr when kMaxBuffers are all in use (CUPTI then drops records).
  uint8_t* acquire();
  // Allocates buffers (pages touched) until kSpares are free: called by the writer thread, so that acquire(), on
  // the program's threads, seldom has to allocate.
  void keepSpares();
  size_t freeBuffers() const;
  void release(uint8_t* buffer);

  void pushCompleted(CompletedBuffer buffer);
  // Takes every completed buffer, waiting up to timeout_ms for the first one.
  std::vector<CompletedBuffer> takeCompleted(int timeout_ms);
  void wake();  // ends a takeCompleted() wait early

  int64_t buffersRefused() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable completed_ready_;
  std::vector<uint8_t*> free_;
  std::deque<CompletedBuffer> completed_;
  size_t allocated_ = 0;
  int64_t refused_ = 0;
  bool woken_ = false;
};

}  // namespace gpuscope::collector
