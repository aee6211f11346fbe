// What the advisor tells a user: one finding per problem, with what was seen (numbers with units and
// references into the trace), why it costs, the estimated gain and its basis, the fix, and how to check it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/plan.h"

namespace gpuscope::advisor {

enum class Severity { kInfo, kLow, kMedium, kHigh };
std::string_view toString(Severity severity);  // "info", "low", "medium", "high" (stable: used in JSON)
bool parseSeverity(std::string_view text, Severity& out);
// By the share of the step (or of peak memory) a fix would win: 20 % or more high, 5 % or more medium.
Severity severityForShare(double share);

// A place in the trace a piece of evidence points at, for the reports and the GUI to jump to.
struct TraceRef {
  std::string kind;  // "time_range", "kernel", "nvtx_range", "allocation", "api_call"
  std::string name;  // kernel or range name, call name; "" for a bare time range
  int64_t start_ns = 0, end_ns = 0;
  int64_t correlation_id = 0;  // a kernel's or call's CUPTI correlation id (0: none), to find it in a Chrome export
};

struct Evidence {
  std::string text;            // one line, every number with its unit
  std::vector<TraceRef> refs;  // where to look
};

struct Gain {
  int64_t time_ns = 0;        // step time saved per iteration (per run when no iterations were found)
  int64_t idle_ns = 0;        // the part of time_ns that is GPU idle time (the rest is kernel or copy time)
  double share_of_step = 0;   // time_ns over the step (run) time, 0..1
  int64_t memory_bytes = 0;   // peak device memory saved
  double share_of_peak = 0;   // of the measured peak, 0..1
  int64_t extra_time_ns = 0;  // time the fix costs per iteration (recomputation), if any
  bool host_side = false;     // time_ns is host work the step stops waiting for, not GPU busy or idle time
  std::string basis;          // what the estimate is based on
};

struct Fix {
  std::string summary;           // the change, in one sentence
  std::string snippet;           // code to apply it ("" when none applies)
  std::string snippet_language;  // "python", "cuda", "shell"
  std::vector<plan::Fix> plan;   // what the runtime or the PyTorch bridge can apply
};

struct Finding {
  std::string id;     // the rule's id
  std::string title;  // the rule's title, specialised ("3 fusable chains …")
  Severity severity = Severity::kInfo;
  std::string summary;  // what was seen, one sentence
  std::vector<Evidence> evidence;
  std::string why;  // why it costs
  Gain gain;
  Fix fix;
  std::string verify;  // how to check the change worked
  // Where its fix stands with the plan (advice.cpp): "in the plan", "by hand: …" (gpuscope cannot apply it),
  // "left out of the time plan: …" (it costs time, or the plan is predicted faster without it).
  std::string plan_status;
  // What ranks findings: the larger of the step-time and peak-memory shares the fix would win.
  double weight() const;
};

}  // namespace gpuscope::advisor
