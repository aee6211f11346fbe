#include "advisor/runtime/plan_runtime.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <variant>

namespace gpuscope::runtime {

PlanRuntime::PlanRuntime(plan::Plan plan) : plan_(std::move(plan)) {}

Result<PlanRuntime> PlanRuntime::fromEnvironment() {
  const char* path = std::getenv("GPUSCOPE_PLAN");
  if (!path || !*path) return PlanRuntime(plan::Plan{});
  return fromFile(path);
}

Result<PlanRuntime> PlanRuntime::fromFile(const std::string& path) {
  Result<plan::Plan> p = plan::readPlan(path);
  if (!p) return p.status();
  return PlanRuntime(std::move(*p));
}

namespace {

// The first fusion fix whose kernel names satisfy `matches`, or nullptr.
const plan::Fix* fusionWhere(const plan::Plan& plan,
                             const std::function<bool(const std::vector<std::string>&)>& matches) {
  for (const plan::Fix& f : plan.fixes) {
    if (f.kind != "fusion") continue;
    const plan::Value* names = f.param("kernels");
    const auto* list = names ? std::get_if<std::vector<std::string>>(names) : nullptr;
    if (list && matches(*list)) return &f;
  }
  return nullptr;
}

}  // namespace

bool PlanRuntime::shouldFuse(const std::vector<std::string>& kernels) {
  const plan::Fix* f = fusionWhere(plan_, [&](const auto& list) { return list == kernels; });
  if (f) applied_[f->id] = std::to_string(kernels.size()) + " kernels fused into one";
  return f != nullptr;
}

bool PlanRuntime::shouldFuseAfterGemm(const std::vector<std::string>& elementwise) {
  const plan::Fix* f = fusionWhere(plan_, [&](const auto& list) {
    return list.size() == elementwise.size() + 1 &&
           std::equal(elementwise.begin(), elementwise.end(), list.begin() + 1);
  });
  if (f)
    applied_[f->id] = "GEMM and " + std::to_string(elementwise.size()) + " elementwise kernels fused into its epilogue";
  return f != nullptr;
}

bool PlanRuntime::shouldFuseIntoProducer(const std::vector<std::string>& chain) {
  const plan::Fix* f = fusionWhere(plan_, [&](const auto& list) {
    return list == chain ||
           (list.size() == chain.size() + 1 && std::equal(chain.begin(), chain.end(), list.begin() + 1));
  });
  if (f) applied_[f->id] = std::to_string(chain.size()) + " kernels moved into the epilogue of the kernel before them";
  return f != nullptr;
}

std::optional<int64_t> PlanRuntime::checkpointSegments() {
  for (const plan::Fix& f : plan_.fixes) {
    if (f.kind != "checkpoint") continue;
    const plan::Value* segments = f.param("segments");
    if (const auto* n = segments ? std::get_if<int64_t>(segments) : nullptr; n && *n > 0) {
      applied_[f.id] = std::to_string(*n) + " checkpoint segments";
      return *n;
    }
  }
  return std::nullopt;
}

std::string PlanRuntime::report() const {
  std::string out;
  for (const plan::Fix& f : plan_.fixes) {
    if (auto it = applied_.find(f.id); it != applied_.end()) {
      out += "applied " + f.id + " (" + f.kind + "): " + it->second + "\n";
    } else if (f.kind == "fusion" || f.kind == "checkpoint") {
      out += "not applied " + f.id + " (" + f.kind + "): the program never reached a place that could apply it\n";
    } else {
      out += "not applied " + f.id + " (" + f.kind + "): a PyTorch setting, for the PyTorch bridge\n";
    }
  }
  return out.empty() ? "the plan holds no fixes\n" : out;
}

}  // namespace gpuscope::runtime
