// Loads a trace for an analyzer test, failing the test (and returning an empty trace) when it cannot.
#pragma once

#include <gtest/gtest.h>

#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

inline TraceData loadForTest(const std::string& path) {
  Result<TraceData> t = loadTrace(path);
  EXPECT_TRUE(t) << (t ? "" : t.status().message());
  return t ? std::move(*t) : TraceData{};
}

}  // namespace gpuscope::analysis
