#include "formats/memory_replay.h"

#include <unordered_map>

namespace gpuscope {

Status replayMemoryEvents(TraceReader& reader, const std::function<void(const schema::MemoryEventRow&, int64_t)>& fn) {
  using schema::MemoryEventRow;
  Result<sqlite::Statement> stmt =
      reader.database().prepare("SELECT " + schema::columnList(schema::tableInfo<MemoryEventRow>()) +
                                " FROM memory_event ORDER BY timestamp_ns, id");
  if (!stmt) return stmt.status();
  std::unordered_map<int64_t, std::unordered_map<int64_t, int64_t>> live;  // session → address → bytes
  MemoryEventRow m;
  while (true) {
    Result<bool> more = stmt->step();
    if (!more) return more.status();
    if (!*more) return Status::ok();
    schema::readRow(*stmt, m);
    auto& allocations = live[m.session_id];
    if (m.op == schema::MemoryOp::kAllocation) {
      allocations[m.address] = m.bytes;
      fn(m, m.bytes);
    } else if (auto it = allocations.find(m.address); it != allocations.end()) {
      const int64_t freed = it->second;
      allocations.erase(it);
      fn(m, -freed);
    }
  }
}

}  // namespace gpuscope
