#include "advisor/runtime/checkpoint_planner.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuscope::runtime {

CheckpointPlan evaluatePlan(const std::vector<LayerCost>& layers, std::vector<size_t> starts) {
  CheckpointPlan p;
  p.segment_starts = std::move(starts);
  int64_t largest = 0;
  for (size_t s = 0; s < p.segment_starts.size(); ++s) {
    const size_t begin = p.segment_starts[s];
    const size_t end = s + 1 < p.segment_starts.size() ? p.segment_starts[s + 1] : layers.size();
    int64_t inside = 0, forward = 0;
    for (size_t i = begin; i < end; ++i) inside += layers[i].activation_bytes, forward += layers[i].forward_ns;
    largest = std::max(largest, inside);
    if (s > 0) p.peak_bytes += layers[begin].input_bytes;
    if (s + 1 < p.segment_starts.size()) p.extra_ns += forward;
  }
  p.peak_bytes += largest;
  for (const LayerCost& l : layers) p.baseline_bytes += l.activation_bytes;
  return p;
}

CheckpointPlan planUniform(const std::vector<LayerCost>& layers, size_t segments) {
  const size_t n = layers.size();
  if (segments == 0) segments = static_cast<size_t>(std::llround(std::sqrt(static_cast<double>(n))));
  segments = std::clamp<size_t>(segments, 1, std::max<size_t>(1, n));
  std::vector<size_t> starts;
  for (size_t s = 0; s < segments; ++s) starts.push_back(s * n / segments);
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  CheckpointPlan p = evaluatePlan(layers, std::move(starts));
  p.basis = std::to_string(p.segment_starts.size()) + " segments of equal layer counts (√" + std::to_string(n) + ")";
  return p;
}

namespace {

// With no segment's activations above `limit`: the fewest segments, ties broken by the least kept at the
// boundaries (dynamic programming over where each segment starts). Empty when a single layer exceeds it.
std::vector<size_t> fewestSegmentsWithin(const std::vector<LayerCost>& layers, int64_t limit) {
  const size_t n = layers.size();
  constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
  std::vector<int64_t> count(n + 1, kInf), kept(n + 1, kInf);
  std::vector<size_t> from(n + 1, 0);
  count[0] = kept[0] = 0;
  for (size_t j = 1; j <= n; ++j) {
    int64_t inside = 0;
    for (size_t i = j; i-- > 0;) {  // the last segment is [i, j)
      inside += layers[i].activation_bytes;
      if (inside > limit) break;
      if (count[i] == kInf) continue;
      const int64_t c = count[i] + 1, k = kept[i] + (i > 0 ? layers[i].input_bytes : 0);
      if (c < count[j] || (c == count[j] && k < kept[j])) count[j] = c, kept[j] = k, from[j] = i;
    }
  }
  if (count[n] == kInf) return {};
  std::vector<size_t> starts;
  for (size_t j = n; j > 0; j = from[j]) starts.push_back(from[j]);
  std::reverse(starts.begin(), starts.end());
  return starts;
}

}  // namespace

Result<CheckpointPlan> planForBudget(const std::vector<LayerCost>& layers, int64_t budget_bytes) {
  if (layers.empty()) return Status(ErrorKind::kEmpty, "no layers to checkpoint");
  // Larger segment limits mean fewer segments; try them from the largest down, on a geometric grid between
  // the largest layer and the whole stack, and keep the first plan that fits.
  int64_t largest_layer = 0, total = 0;
  for (const LayerCost& l : layers)
    largest_layer = std::max(largest_layer, l.activation_bytes), total += l.activation_bytes;
  constexpr int kSteps = 256;
  for (int step = kSteps; step >= 0; --step) {
    const double f = static_cast<double>(step) / kSteps;
    const auto limit = static_cast<int64_t>(static_cast<double>(largest_layer) *
                                            std::pow(static_cast<double>(std::max<int64_t>(total, 1)) /
                                                         static_cast<double>(std::max<int64_t>(largest_layer, 1)),
                                                     f));
    std::vector<size_t> starts = fewestSegmentsWithin(layers, std::max(limit, largest_layer));
    if (starts.empty()) continue;
    CheckpointPlan p = evaluatePlan(layers, std::move(starts));
    if (p.peak_bytes <= budget_bytes) {
      p.basis = std::to_string(p.segment_starts.size()) +
                " segments, the fewest whose boundaries and largest "
                "segment fit the budget (layer sizes as measured)";
      return p;
    }
  }
  const CheckpointPlan best = planUniform(layers, layers.size());
  return Status(ErrorKind::kUsage, "no split of " + std::to_string(layers.size()) + " layers fits " +
                                       std::to_string(budget_bytes) + " bytes: a segment per layer needs " +
                                       std::to_string(best.peak_bytes));
}

}  // namespace gpuscope::runtime
