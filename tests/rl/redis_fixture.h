// A private redis-server for a test: started on a free loopback port with no persistence,
// stopped (SIGTERM, then SIGKILL) when the fixture goes away. redis-server comes from
// scripts/setup --tests; a missing binary fails the test rather than skipping it.
#pragma once

#include <sys/types.h>

#include <string>

namespace afm::rl::testing {

class RedisServer {
 public:
  RedisServer();
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  // Stops the server (kill -9) and starts it again on the same port, empty.
  void restart();

 private:
  void start();
  void stop();
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace afm::rl::testing
