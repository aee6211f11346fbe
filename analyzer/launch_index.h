// Finds the API call that launched a piece of GPU work: CUPTI gives both the same correlation id within
// a process. A sorted index (16 bytes per API call) rather than a hash map, so ten million calls stay small.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

class LaunchIndex {
 public:
  explicit LaunchIndex(const TraceData& trace);
  // Index into trace.api_calls of the call with this correlation id in this process, or kNone.
  int32_t callOf(int32_t session, int64_t correlation_id) const;
  // The same, for callers that look up in correlation order (kernels by start): the entry after the one
  // found last is tried first, so a pass over a table costs O(n), not O(n log n) cache misses.
  int32_t callOf(int32_t session, int64_t correlation_id, size_t& hint) const;

 private:
  struct Entry {
    uint64_t key;  // session in the top 16 bits, correlation id below
    int32_t call;
  };
  static uint64_t keyOf(int32_t session, int64_t correlation_id) {
    return (static_cast<uint64_t>(session) << 48) | (static_cast<uint64_t>(correlation_id) & ((1ULL << 48) - 1));
  }
  std::vector<Entry> entries_;
};

}  // namespace gpuscope::analysis
