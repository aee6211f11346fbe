#include "analyzer/memory_pools.h"

#include <algorithm>
#include <unordered_map>

namespace gpuscope::analysis {

namespace {

// What the pool's allocations and frees say: live allocations by address (a free names an address, not a
// size) and the live bytes after each change, in time order.
struct PoolAllocations {
  std::unordered_map<int64_t, int64_t> size_of;
  int64_t live = 0;
  std::vector<std::pair<int64_t, int64_t>> live_after;  // (time, live bytes)

  int64_t liveAt(int64_t t) const {
    auto after = std::upper_bound(live_after.begin(), live_after.end(), t,
                                  [](int64_t x, const std::pair<int64_t, int64_t>& p) { return x < p.first; });
    return after == live_after.begin() ? 0 : std::prev(after)->second;
  }
};

size_t poolIndex(std::vector<PoolUsage>& pools, std::vector<PoolAllocations>& allocations, int32_t session,
                 int32_t device, int64_t address) {
  for (size_t i = 0; i < pools.size(); ++i) {
    if (pools[i].session == session && pools[i].device == device && pools[i].pool == address) return i;
  }
  pools.push_back({session, device, address});
  allocations.emplace_back();
  return pools.size() - 1;
}

}  // namespace

std::vector<PoolUsage> analyzePools(const TraceData& t) {
  std::vector<PoolUsage> pools;
  std::vector<PoolAllocations> allocations;
  const MemoryTable& m = t.memory;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.pool[i] == 0) continue;
    const size_t index = poolIndex(pools, allocations, m.session[i], m.device[i], m.pool[i]);
    PoolUsage& p = pools[index];
    PoolAllocations& a = allocations[index];
    if (m.op[i] == schema::MemoryOp::kAllocation) {
      ++p.allocations;
      a.size_of[m.address[i]] = m.bytes[i];
      a.live += m.bytes[i];
    } else if (auto it = a.size_of.find(m.address[i]); it != a.size_of.end()) {
      a.live -= it->second;
      a.size_of.erase(it);
    }
    a.live_after.push_back({m.time_ns[i], a.live});
    if (a.live > p.peak_used_bytes) p.peak_used_bytes = a.live, p.peak_used_ns = m.time_ns[i];
  }
  const PoolEventTable& e = t.pools;
  for (size_t i = 0; i < e.size(); ++i) {
    const size_t index = poolIndex(pools, allocations, e.session[i], e.device[i], e.pool[i]);
    PoolUsage& p = pools[index];
    const int64_t used = e.used_bytes[i] == kNone ? allocations[index].liveAt(e.time_ns[i]) : e.used_bytes[i];
    const PoolSample s{e.time_ns[i], e.reserved_bytes[i], used};
    p.samples.push_back(s);
    p.peak_reserved_bytes = std::max(p.peak_reserved_bytes, s.reserved_bytes);
    if (s.used_bytes > 0 && s.reserved_bytes - s.used_bytes > p.slackBytes()) p.worst = s;
  }
  return pools;
}

}  // namespace gpuscope::analysis
