// The advisor's reports: a terminal report (wrapped to the terminal, coloured only on one), Markdown for
// issues and pull requests, a self-contained HTML page, and JSON for tools (schema: advisor/advice.schema.json,
// described in docs/advise-json.md).
#pragma once

#include <string>
#include <string_view>

#include "advisor/advice.h"

namespace gpuscope::advisor {

enum class ReportFormat { kText, kMarkdown, kHtml, kJson };
bool parseReportFormat(std::string_view text, ReportFormat& out);  // "text", "md", "html", "json"

std::string renderText(const Advice& advice, int width, bool colour);
std::string renderMarkdown(const Advice& advice);
std::string renderHtml(const Advice& advice);
std::string renderJson(const Advice& advice);

// JSON format version of the advice; bump when a key changes meaning or goes away.
inline constexpr int64_t kAdviceJsonVersion = 1;

// Sentences every format shares.
std::string gainText(const Finding& finding, bool per_step);  // "12.8 ms per step (42.8 % of the step)"
std::string stepText(const Advice& advice);                   // "29.9 ms per iteration"
// "2 ranks on one host; the job's step is rank 1's, the slowest: 33.790 ms (rank 0: 33.777 ms) …"; "" unless
// the trace holds a multi-rank job.
std::string jobText(const Advice& advice);
std::string predictionText(const Advice& advice);  // "9.1 ms per iteration (3.3× faster) …"
// The plan's prediction: "9.8 ms per iteration (…) with the 3 fixes of the time plan, which gpuscope apply makes".
std::string planText(const Advice& advice);
// Said before anything else where the recorded program failed: "the program exited with code 1 …: the figures
// are this run's …"; empty where it did not.
std::string failureText(const Advice& advice);

}  // namespace gpuscope::advisor
