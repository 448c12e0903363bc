#include "rl/policy_channel.h"

#include <charconv>

#include "base/error.h"

namespace afm::rl {

PolicyChannel::PolicyChannel(broker::RedisClient& client, const std::string& run)
    : client_(client), keys_(run) {}

void PolicyChannel::publish(int64_t version, const std::string& adapter_bytes, int64_t keep) {
  client_.command({"SET", keys_.policy(version), adapter_bytes});
  client_.command({"SET", keys_.policy_version(), std::to_string(version)});
  if (version - keep >= 0) client_.command({"DEL", keys_.policy(version - keep)});
}

std::optional<int64_t> PolicyChannel::announced() {
  const broker::RedisReply r = client_.command({"GET", keys_.policy_version()});
  if (r.is_nil()) return std::nullopt;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(r.str.data(), r.str.data() + r.str.size(), v);
  if (ec != std::errc() || end != r.str.data() + r.str.size() || v < 0)
    throw_error(ErrorCode::kFormat, "broker: " + keys_.policy_version() + " holds '" + r.str +
                                        "', not a version number");
  return v;
}

std::string PolicyChannel::fetch(int64_t version) {
  broker::RedisReply r = client_.command({"GET", keys_.policy(version)});
  if (r.is_nil())
    throw_error(ErrorCode::kNotFound,
                "broker: policy version " + std::to_string(version) + " is gone");
  return std::move(r.str);
}

void PolicyChannel::finish() { client_.command({"SET", keys_.done(), "1"}); }

bool PolicyChannel::finished() { return !client_.command({"GET", keys_.done()}).is_nil(); }

void PolicyChannel::reset_finished() { client_.command({"DEL", keys_.done()}); }

}  // namespace afm::rl
