// A one-line progress bar on stderr, drawn only when stderr is a terminal (never into logs or pipes).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gpuscope::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label, bool enabled = true);
  ~ProgressBar();  // clears the line
  void update(int64_t done, int64_t total);

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace gpuscope::cli
