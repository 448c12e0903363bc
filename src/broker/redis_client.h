// A synchronous client for one Redis server (the broker of asynchronous RLOO, docs/rl.md).
//
// Contract:
// - Construction connects, retrying with a growing pause (0.1 s doubling to 2 s) until
//   `retry_window_s` has passed; then Error(kIo) "cannot reach the broker at HOST:PORT after N
//   attempts over S s: <reason>". Nothing blocks longer than that window plus one I/O timeout.
// - command() sends one command (arguments are binary-safe) and returns the reply as an owned
//   tree. A lost connection (the server restarted, a network error, an I/O timeout) reconnects
//   within the same retry window and sends the command again, so a command may run twice on the
//   server when only its reply was lost: callers publish with ids that make that harmless.
//   An error reply of the server ("ERR ...", "BUSYGROUP ...") is Error(kInvalidArgument) with
//   the server's text; reply.is_error() is never seen by callers.
// - Not thread-safe: one client per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace afm::broker {

struct BrokerAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  // "HOST:PORT", "HOST" (port 6379) or ":PORT"; Error(kInvalidArgument) naming the text.
  static BrokerAddress parse(std::string_view text);
  std::string str() const { return host + ":" + std::to_string(port); }
};

struct RedisOptions {
  double retry_window_s = 30;  // how long connecting (or reconnecting) keeps trying
  double io_timeout_s = 15;    // one command's send + reply; must exceed any BLOCK it asks for
};

struct RedisReply {
  enum class Type { kNil, kString, kStatus, kInteger, kArray };
  Type type = Type::kNil;
  std::string str;  // kString, kStatus
  long long integer = 0;
  std::vector<RedisReply> elements;  // kArray

  bool is_nil() const { return type == Type::kNil; }
};

class RedisClient {
 public:
  RedisClient(BrokerAddress address, RedisOptions options = {});
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  RedisReply command(const std::vector<std::string>& args);
  const BrokerAddress& address() const { return address_; }

 private:
  struct Connection;
  void connect_with_retries(const std::string& why);

  BrokerAddress address_;
  RedisOptions options_;
  std::unique_ptr<Connection> connection_;
};

}  // namespace afm::broker
