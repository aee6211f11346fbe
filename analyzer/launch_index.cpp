#include "analyzer/launch_index.h"

#include <algorithm>

namespace gpuscope::analysis {

LaunchIndex::LaunchIndex(const TraceData& trace) {
  const ApiTable& a = trace.api_calls;
  entries_.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.correlation_id[i] != 0)
      entries_.push_back({keyOf(a.session[i], a.correlation_id[i]), static_cast<int32_t>(i)});
  }
  const auto by_key = [](const Entry& x, const Entry& y) { return x.key < y.key; };
  if (!std::is_sorted(entries_.begin(), entries_.end(), by_key)) std::sort(entries_.begin(), entries_.end(), by_key);
}

int32_t LaunchIndex::callOf(int32_t session, int64_t correlation_id) const {
  size_t no_hint = entries_.size();
  return callOf(session, correlation_id, no_hint);
}

int32_t LaunchIndex::callOf(int32_t session, int64_t correlation_id, size_t& hint) const {
  constexpr size_t kNearby = 8;  // the calls between two launches (a sync, a copy) are few
  const uint64_t key = keyOf(session, correlation_id);
  for (size_t i = hint; i < entries_.size() && i < hint + kNearby; ++i) {
    if (entries_[i].key == key) {
      hint = i + 1;
      return entries_[i].call;
    }
  }
  auto it =
      std::lower_bound(entries_.begin(), entries_.end(), key, [](const Entry& e, uint64_t k) { return e.key < k; });
  if (it == entries_.end() || it->key != key) return kNone;
  hint = static_cast<size_t>(it - entries_.begin()) + 1;
  return it->call;
}

}  // namespace gpuscope::analysis
