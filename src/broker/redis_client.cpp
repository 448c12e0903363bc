#include "broker/redis_client.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <thread>

#include "base/error.h"

namespace afm::broker {
namespace {

using Clock = std::chrono::steady_clock;

timeval to_timeval(double seconds) {
  const auto us = static_cast<long long>(seconds * 1e6);
  return timeval{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
}

RedisReply convert(const redisReply& r) {
  RedisReply out;
  switch (r.type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = r.integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      out.elements.reserve(r.elements);
      for (size_t i = 0; i < r.elements; ++i) out.elements.push_back(convert(*r.element[i]));
      break;
    default:  // REDIS_REPLY_NIL (errors are handled by the caller)
      break;
  }
  return out;
}

}  // namespace

BrokerAddress BrokerAddress::parse(std::string_view text) {
  BrokerAddress a;
  const size_t colon = text.rfind(':');
  std::string_view host = colon == std::string_view::npos ? text : text.substr(0, colon);
  if (!host.empty()) a.host = std::string(host);
  if (colon != std::string_view::npos) {
    const std::string_view port = text.substr(colon + 1);
    int value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535)
      throw_error(ErrorCode::kInvalidArgument,
                  "broker address '" + std::string(text) + "': the port must be 1-65535");
    a.port = value;
  }
  if (a.host.empty() || a.host.find_first_of(" /") != std::string::npos)
    throw_error(ErrorCode::kInvalidArgument,
                "broker address '" + std::string(text) + "': expected HOST:PORT");
  return a;
}

struct RedisClient::Connection {
  redisContext* context = nullptr;
  ~Connection() {
    if (context != nullptr) redisFree(context);
  }
};

RedisClient::RedisClient(BrokerAddress address, RedisOptions options)
    : address_(std::move(address)), options_(options) {
  connect_with_retries("");
}

RedisClient::~RedisClient() = default;

void RedisClient::connect_with_retries(const std::string& why) {
  const auto start = Clock::now();
  double pause_s = 0.1;
  std::string reason = why;
  for (int attempt = 1;; ++attempt) {
    auto c = std::make_unique<Connection>();
    c->context = redisConnectWithTimeout(address_.host.c_str(), address_.port,
                                         to_timeval(std::min(options_.io_timeout_s, 5.0)));
    if (c->context != nullptr && c->context->err == 0 &&
        redisSetTimeout(c->context, to_timeval(options_.io_timeout_s)) == REDIS_OK) {
      connection_ = std::move(c);
      return;
    }
    reason = c->context != nullptr ? c->context->errstr : "out of memory";
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed + pause_s > options_.retry_window_s) {
      char detail[64];
      std::snprintf(detail, sizeof(detail), " after %d attempts over %.1f s: ", attempt, elapsed);
      throw_error(ErrorCode::kIo, "cannot reach the broker at " + address_.str() + detail + reason);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(pause_s));
    pause_s = std::min(pause_s * 2, 2.0);
  }
}

RedisReply RedisClient::command(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const std::string& a : args) argv.push_back(a.data()), lengths.push_back(a.size());
  for (int tries = 0;; ++tries) {
    if (!connection_) connect_with_retries("");
    void* raw = redisCommandArgv(connection_->context, static_cast<int>(argv.size()), argv.data(),
                                 lengths.data());
    if (raw == nullptr) {
      // The connection is unusable after an I/O error: reconnect (within the retry window)
      // and send again; a second failure in a row is reported.
      const std::string reason = connection_->context->errstr;
      connection_.reset();
      if (tries >= 1)
        throw_error(ErrorCode::kIo, "broker " + address_.str() + ": " + args.at(0) + ": " + reason);
      continue;
    }
    std::unique_ptr<redisReply, void (*)(void*)> reply(static_cast<redisReply*>(raw),
                                                       freeReplyObject);
    if (reply->type == REDIS_REPLY_ERROR)
      throw_error(ErrorCode::kInvalidArgument, "broker " + address_.str() + ": " + args.at(0) +
                                                   ": " + std::string(reply->str, reply->len));
    return convert(*reply);
  }
}

}  // namespace afm::broker
