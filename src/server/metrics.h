// GET /metrics: the server's counters and the model's cache sizes in the Prometheus text
// exposition format (version 0.0.4), so a scraper or a soak test can tell bounded caches
// filling from memory that leaks (docs/server.md "Metrics").
//
// Thread safety: RequestCounters::record() and metrics() may be called from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace afm::server {

struct Metric {
  std::string name;  // [a-zA-Z_:][a-zA-Z0-9_:]*, e.g. "afm_grammar_cache_bytes"
  std::string help;  // one line
  std::string type;  // "gauge" or "counter"
  // One sample per label set: the labels as written inside {} (empty: none), and the value.
  std::vector<std::pair<std::string, double>> samples;
};

// A metric with one unlabelled sample.
Metric gauge(std::string name, std::string help, double value);

// The exposition text: # HELP and # TYPE lines, then one line per sample.
std::string render_prometheus(const std::vector<Metric>& metrics);

// Answered requests by HTTP status, counted once each when the response has been sent.
class RequestCounters {
 public:
  void record(int status);
  Metric metric() const;  // afm_http_requests_total{status="..."}

 private:
  static constexpr int kMinStatus = 100, kMaxStatus = 599;
  std::array<std::atomic<uint64_t>, kMaxStatus - kMinStatus + 1> by_status_{};
  std::atomic<uint64_t> other_{0};  // statuses outside 100..599 (none expected)
};

}  // namespace afm::server
