#include "base/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace afm {

namespace {
bool progress_enabled() {
  const char* env = std::getenv("AFM_PROGRESS");
  if (env != nullptr) return std::strcmp(env, "0") != 0;
  return isatty(STDERR_FILENO) != 0;
}
}  // namespace

ProgressBar::ProgressBar(std::string label, uint64_t total, Unit unit)
    : label_(std::move(label)), total_(total), unit_(unit), enabled_(progress_enabled()) {
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

ProgressBar::~ProgressBar() {
  if (!finished_) finish();
}

void ProgressBar::update(uint64_t done) {
  done_ = done;
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(false);
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  if (enabled_) draw(true);
}

std::string ProgressBar::format_amount(double v) const {
  char buf[32];
  if (unit_ == Unit::kItems) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    return buf;
  }
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int i = 0;
  while (v >= 1000.0 && i < 4) {
    v /= 1000.0;
    ++i;
  }
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[i]);
  return buf;
}

void ProgressBar::draw(bool final_line) {
  constexpr int kWidth = 30;
  double frac = total_ > 0 ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  if (frac > 1.0) frac = 1.0;
  int filled = static_cast<int>(frac * kWidth);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = secs > 0 ? static_cast<double>(done_) / secs : 0.0;
  double eta =
      rate > 0 ? static_cast<double>(total_ - (done_ < total_ ? done_ : total_)) / rate : 0;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kWidth - filled), ' ');
  std::fprintf(stderr, "\r%s [%s] %3d%% %s/%s %s/s ETA %.0fs%s%s\033[K%s", label_.c_str(),
               bar.c_str(), static_cast<int>(frac * 100),
               format_amount(static_cast<double>(done_)).c_str(),
               format_amount(static_cast<double>(total_)).c_str(), format_amount(rate).c_str(), eta,
               detail_.empty() ? "" : " ", detail_.c_str(), final_line ? "\n" : "");
  std::fflush(stderr);
}

}  // namespace afm
