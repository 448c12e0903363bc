// A progress bar for long work, drawn on stderr: "label [#####     ] 52% 1.2 GB/2.3 GB 340 MB/s ETA
// 3s".
//
// Contract: redraws at most ~10 times a second and only when stderr is a terminal (or when
// AFM_PROGRESS=1), so logs and pipes stay clean. finish() prints the final line once.
// Not thread-safe: one thread calls update().
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace afm {

class ProgressBar {
 public:
  enum class Unit { kBytes, kItems };
  ProgressBar(std::string label, uint64_t total, Unit unit = Unit::kBytes);
  ~ProgressBar();

  void update(uint64_t done);
  void advance(uint64_t delta) { update(done_ + delta); }
  // Text drawn after the ETA (for example "loss 3.21 41k tok/s MFU 38%"); kept until changed.
  void set_detail(std::string detail) { detail_ = std::move(detail); }
  void finish();

 private:
  void draw(bool final_line);
  std::string format_amount(double v) const;

  std::string label_;
  std::string detail_;
  uint64_t total_;
  Unit unit_;
  uint64_t done_ = 0;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace afm
