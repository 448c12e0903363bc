#include "server/metrics.h"

#include <cstdio>

namespace afm::server {

Metric gauge(std::string name, std::string help, double value) {
  return {std::move(name), std::move(help), "gauge", {{"", value}}};
}

namespace {

// Integers print without an exponent (byte counts past 2^53 lose nothing that matters here).
std::string format_value(double v) {
  char buf[64];
  if (v == static_cast<double>(static_cast<int64_t>(v))) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(buf, sizeof buf, "%.17g", v);
  }
  return buf;
}

}  // namespace

std::string render_prometheus(const std::vector<Metric>& metrics) {
  std::string out;
  for (const Metric& m : metrics) {
    out += "# HELP " + m.name + " " + m.help + "\n";
    out += "# TYPE " + m.name + " " + m.type + "\n";
    for (const auto& [labels, value] : m.samples) {
      out += m.name;
      if (!labels.empty()) {
        out += '{';
        out += labels;
        out += '}';
      }
      out += ' ';
      out += format_value(value);
      out += '\n';
    }
  }
  return out;
}

void RequestCounters::record(int status) {
  if (status < kMinStatus || status > kMaxStatus) {
    other_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  by_status_[static_cast<size_t>(status - kMinStatus)].fetch_add(1, std::memory_order_relaxed);
}

Metric RequestCounters::metric() const {
  Metric m{"afm_http_requests_total", "HTTP requests answered, by status", "counter", {}};
  for (size_t i = 0; i < by_status_.size(); ++i) {
    const uint64_t n = by_status_[i].load(std::memory_order_relaxed);
    if (n == 0) continue;
    m.samples.push_back({"status=\"" + std::to_string(kMinStatus + static_cast<int>(i)) + "\"",
                         static_cast<double>(n)});
  }
  if (const uint64_t n = other_.load(std::memory_order_relaxed)) {
    m.samples.push_back({"status=\"other\"", static_cast<double>(n)});
  }
  return m;
}

}  // namespace afm::server
