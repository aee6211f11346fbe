#include "formats/plan.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>  // ordered_json: a plan read back keeps its parameters in order

#include "formats/atomic_file.h"
#include "formats/json_writer.h"

namespace gpuscope::plan {

bool isFixKind(std::string_view kind) {
  return std::find(std::begin(kFixKinds), std::end(kFixKinds), kind) != std::end(kFixKinds);
}

bool isAllocatorVariable(std::string_view name) {
  return std::find(std::begin(kAllocatorVariables), std::end(kAllocatorVariables), name) !=
         std::end(kAllocatorVariables);
}

std::string_view Fix::text(std::string_view key) const {
  const Value* v = param(key);
  const auto* s = v ? std::get_if<std::string>(v) : nullptr;
  return s ? std::string_view(*s) : std::string_view();
}

const Value* Fix::param(std::string_view key) const {
  for (const Param& p : params) {
    if (p.key == key) return &p.value;
  }
  return nullptr;
}

namespace {

void writeValue(JsonWriter& json, const Value& value) {
  if (const auto* list = std::get_if<std::vector<std::string>>(&value)) {
    json.beginArray();
    for (const std::string& s : *list) json.value(s);
    json.endArray();
  } else {
    std::visit(
        [&](const auto& v) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(v)>, std::vector<std::string>>) json.value(v);
        },
        value);
  }
}

void writeOutcome(JsonWriter& json, std::string_view key, const Outcome& o) {
  json.key(key).beginObject();
  json.field("step_time_ns", o.step_time_ns).field("peak_memory_bytes", o.peak_memory_bytes);
  json.endObject();
}

}  // namespace

void writeFix(JsonWriter& json, const Fix& fix) {
  json.beginObject().field("id", fix.id).field("kind", fix.kind).field("rule", fix.rule);
  for (const Param& p : fix.params) {
    json.key(p.key);
    writeValue(json, p.value);
  }
  json.endObject();
}

std::string toJson(const Plan& plan) {
  JsonWriter json;
  json.beginObject();
  json.field("format", kFormat).field("version", kVersion).field("trace", plan.trace);
  json.field("step_basis", plan.step_basis);
  writeOutcome(json, "measured", plan.measured);
  writeOutcome(json, "predicted", plan.predicted);
  json.field("prediction_basis", plan.prediction_basis);
  json.key("fixes").beginArray(true);
  for (const Fix& f : plan.fixes) writeFix(json, f);
  json.endArray().endObject();
  return json.text() + "\n";
}

Status writePlan(const Plan& plan, const std::string& path, bool overwrite) {
  return writeFileAtomically(path, toJson(plan), overwrite);
}

namespace {

Value valueOf(const nlohmann::ordered_json& j) {
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  std::vector<std::string> list;
  for (const auto& item : j) list.push_back(item.get<std::string>());
  return list;
}

bool isParamValue(const nlohmann::ordered_json& j) {
  if (j.is_array()) return std::all_of(j.begin(), j.end(), [](const auto& item) { return item.is_string(); });
  return j.is_boolean() || j.is_number() || j.is_string();
}

Outcome outcomeOf(const nlohmann::ordered_json& j) {
  return {j.at("step_time_ns").get<int64_t>(), j.at("peak_memory_bytes").get<int64_t>()};
}

// Checks the plan's shape; returns "" when it is a plan, else what is wrong.
std::string shapeProblem(const nlohmann::ordered_json& j) {
  if (!j.is_object() || j.value("format", "") != kFormat)
    return "not a gpuscope plan (no \"format\": \"gpuscope-plan\")";
  if (!j.contains("version") || !j["version"].is_number_integer()) return "no version";
  if (j["version"].get<int64_t>() != kVersion) {
    return "plan version " + std::to_string(j["version"].get<int64_t>()) + ", this gpuscope reads version " +
           std::to_string(kVersion);
  }
  if (!j.contains("fixes") || !j["fixes"].is_array()) return "no \"fixes\" array";
  for (const auto& f : j["fixes"]) {
    if (!f.is_object() || !f.contains("id") || !f.contains("kind") || !f["kind"].is_string()) {
      return "a fix without an id or kind";
    }
    if (!isFixKind(f["kind"].get<std::string>())) return "unknown fix kind '" + f["kind"].get<std::string>() + "'";
    for (const auto& [key, value] : f.items()) {
      if (!isParamValue(value)) return "fix '" + f["id"].dump() + "': parameter '" + key + "' has an unusable value";
    }
    if (f.contains("variable") &&
        (!f["variable"].is_string() || !isAllocatorVariable(f["variable"].get<std::string>()))) {
      return "fix " + f["id"].dump() + ": unknown allocator variable " + f["variable"].dump();
    }
  }
  return "";
}

}  // namespace

Result<Plan> readPlan(const std::string& path) {
  std::ifstream in(path);
  if (!in) return makeError(ErrorKind::kNotFound, path + ": cannot open the plan");
  try {
    const nlohmann::ordered_json j = nlohmann::ordered_json::parse(in);
    if (std::string problem = shapeProblem(j); !problem.empty()) {
      return makeError(ErrorKind::kBadFormat, path + ": " + problem);
    }
    Plan plan;
    plan.trace = j.value("trace", "");
    plan.step_basis = j.value("step_basis", "");
    plan.prediction_basis = j.value("prediction_basis", "");
    if (j.contains("measured")) plan.measured = outcomeOf(j["measured"]);
    if (j.contains("predicted")) plan.predicted = outcomeOf(j["predicted"]);
    for (const auto& f : j["fixes"]) {
      Fix fix{f["id"].get<std::string>(), f["kind"].get<std::string>(), f.value("rule", ""), {}};
      for (const auto& [key, value] : f.items()) {
        if (key != "id" && key != "kind" && key != "rule") fix.params.push_back({key, valueOf(value)});
      }
      plan.fixes.push_back(std::move(fix));
    }
    return plan;
  } catch (const nlohmann::ordered_json::exception& e) {
    return makeError(ErrorKind::kBadFormat, path + ": not a valid plan: " + e.what());
  }
}

}  // namespace gpuscope::plan
