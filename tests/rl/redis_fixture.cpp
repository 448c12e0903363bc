#include "rl/redis_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/free_port.h"
#include "broker/redis_client.h"

namespace afm::rl::testing {

RedisServer::RedisServer() : port_(free_loopback_port()) { start(); }

RedisServer::~RedisServer() { stop(); }

void RedisServer::start() {
  const std::string port = std::to_string(port_);
  pid_ = fork();
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) dup2(null_fd, STDOUT_FILENO);  // its start-up banner and warnings
    execl("/usr/bin/redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1",
          "--save", "", "--appendonly", "no", "--loglevel", "warning", nullptr);
    _exit(127);
  }
  broker::RedisClient client(broker::BrokerAddress::parse(address()), {.retry_window_s = 20});
  client.command({"PING"});
}

void RedisServer::stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void RedisServer::restart() {
  stop();
  start();
}

}  // namespace afm::rl::testing
