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
  const uint64_t key = keyOf(session, correlation_id);
  auto it =
      std::lower_bound(entries_.begin(), entries_.end(), key, [](const Entry& e, uint64_t k) { return e.key < k; });
  return it != entries_.end() && it->key == key ? it->call : kNone;
}

}  // namespace gpuscope::analysis
