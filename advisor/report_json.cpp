// The advice as JSON (advisor/advice.schema.json, docs/advise-json.md): raw numbers in ns and bytes.
#include "advisor/report.h"
#include "formats/json_writer.h"

namespace gpuscope::advisor {

namespace {

void writeOutcome(JsonWriter& json, std::string_view key, const plan::Outcome& o) {
  json.key(key).beginObject();
  json.field("step_time_ns", o.step_time_ns).field("peak_memory_bytes", o.peak_memory_bytes);
  json.endObject();
}

void writeEvidence(JsonWriter& json, const Evidence& e) {
  json.beginObject().field("text", e.text).key("refs").beginArray();
  for (const TraceRef& r : e.refs) {
    json.beginObject().field("kind", r.kind).field("name", r.name);
    json.field("start_ns", r.start_ns).field("end_ns", r.end_ns).field("correlation_id", r.correlation_id).endObject();
  }
  json.endArray().endObject();
}

void writeFinding(JsonWriter& json, const Finding& f) {
  json.beginObject().field("id", f.id).field("title", f.title).field("severity", toString(f.severity));
  json.field("summary", f.summary).key("evidence").beginArray();
  for (const Evidence& e : f.evidence) writeEvidence(json, e);
  json.endArray().field("why", f.why);
  const Gain& g = f.gain;
  json.key("estimated_gain").beginObject().field("time_ns", g.time_ns).field("share_of_step", g.share_of_step);
  json.field("memory_bytes", g.memory_bytes).field("share_of_peak", g.share_of_peak);
  json.field("extra_time_ns", g.extra_time_ns).field("basis", g.basis).endObject();
  json.key("fix").beginObject().field("summary", f.fix.summary).field("snippet", f.fix.snippet);
  json.field("snippet_language", f.fix.snippet_language).key("plan").beginArray();
  for (const plan::Fix& p : f.fix.plan) plan::writeFix(json, p);
  json.endArray().endObject();
  json.field("verify", f.verify).field("plan_status", f.plan_status).endObject();
}

// The job's ranks and the rank the others wait for; null for a single process.
void writeJob(JsonWriter& json, const Advice& a) {
  const analysis::JobView& job = a.job;
  json.key("job");
  if (job.ranks.empty()) {
    json.null();
    return;
  }
  json.beginObject().field("step_time_ns", job.step_ns).field("slowest_rank", job.ranks[job.slowest].rank);
  json.field("hosts", job.hosts).field("collectives", job.collectives).field("unmatched", job.unmatched);
  json.field("clock_residual_ns", job.clock_residual_ns).key("ranks").beginArray();
  for (size_t r = 0; r < job.ranks.size(); ++r) {
    const analysis::RankStep& s = job.ranks[r];
    json.beginObject().field("rank", s.rank).field("device", a.rank_devices[r]).field("steps", s.steps);
    json.field("step_time_ns", s.step_ns).field("compute_ns", s.compute_ns).field("comm_alone_ns", s.comm_alone_ns);
    json.field("comm_overlapped_ns", s.comm_overlapped_ns).field("copy_ns", s.copy_ns).field("idle_ns", s.idle_ns);
    json.field("host_ns", s.host_ns).field("away_ns", s.away_ns).field("peak_bytes", s.peak_bytes);
    json.field("clock_offset_ns", job.clock_offset_ns.empty() ? 0 : job.clock_offset_ns[r]).endObject();
  }
  json.endArray().key("straggler");
  if (!job.straggler) {
    json.null();
  } else {
    const analysis::Straggler& s = *job.straggler;
    json.beginObject().field("rank", job.ranks[s.rank_index].rank).field("last_share", s.last_share);
    json.field("late_ns", s.late_ns).field("wait_ns", s.wait_ns).field("cause", s.cause);
    json.field("cause_ns", s.cause_ns).endObject();
  }
  json.endObject();
}

}  // namespace

std::string renderJson(const Advice& a) {
  JsonWriter json;
  json.beginObject().field("format", "gpuscope-advice").field("version", kAdviceJsonVersion);
  json.field("trace", a.trace).field("framework", a.framework).field("device", a.device);
  json.field("per_step", a.per_step).field("step_basis", a.step_basis).field("run_failed", a.run_failed);
  writeOutcome(json, "measured", a.measured);
  writeOutcome(json, "predicted", a.predicted);
  json.field("goal", toString(a.goal));
  writeOutcome(json, "plan_predicted", a.plan_predicted);
  json.field("plan_fixes", static_cast<int64_t>(a.plan_fixes));
  json.field("prediction_basis", a.prediction_basis).key("findings").beginArray(true);
  for (const Finding& f : a.findings) writeFinding(json, f);
  json.endArray().key("notes").beginArray();
  for (const std::string& n : a.notes) json.value(n);
  json.endArray();
  writeJob(json, a);
  json.endObject();
  return json.text() + "\n";
}

}  // namespace gpuscope::advisor
