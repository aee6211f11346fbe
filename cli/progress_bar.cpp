#include "cli/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace gpuscope::cli {

ProgressBar::ProgressBar(std::string label, bool enabled)
    : label_(std::move(label)), enabled_(enabled && isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

void ProgressBar::update(int64_t done, int64_t total) {
  if (!enabled_ || total <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100) && done < total) return;
  last_draw_ = now;
  drawn_ = true;
  constexpr int kWidth = 30;
  const double fraction = std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0);
  const int filled = static_cast<int>(fraction * kWidth);
  std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% (%lld of %lld events)", label_.c_str(), filled,
               "##############################", kWidth - filled, "", static_cast<int>(fraction * 100),
               static_cast<long long>(done), static_cast<long long>(total));
  std::fflush(stderr);
}

}  // namespace gpuscope::cli
