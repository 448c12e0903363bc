#include "rloo_launch.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "base/error.h"
#include "base/free_port.h"
#include "broker/redis_client.h"

namespace afm::train {
namespace {

namespace fs = std::filesystem;

volatile sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int sig) { g_stop_signal = sig; }

// SIGINT / SIGTERM interrupt waitpid (no SA_RESTART), so the supervisor can stop its children.
void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

struct Child {
  std::string name;  // "updater", "generator 2", "broker"
  std::string exe;
  std::vector<std::string> args;  // argv[1..]
  pid_t pid = -1;
  int restarts = 0;
};

// fork + exec, with SIGTERM to the child if this process dies first.
void start(Child& c) {
  std::vector<std::string> argv_strings = {c.exe};
  argv_strings.insert(argv_strings.end(), c.args.begin(), c.args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw_error(ErrorCode::kIo, "cannot start the " + c.name);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    execv(argv[0], argv.data());
    _exit(127);
  }
  c.pid = pid;
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

int exit_code(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void stop(Child& c, int sig) {
  if (c.pid > 0) kill(c.pid, sig);
}

// Waits up to `seconds` for `c` to exit; then SIGKILL.
void reap(Child& c, double seconds) {
  if (c.pid <= 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (waitpid(c.pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      kill(c.pid, SIGKILL);
      waitpid(c.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  c.pid = -1;
}

Child start_broker(const std::string& out_dir, std::string& address) {
  const fs::path dir = fs::absolute(fs::path(out_dir) / "broker");
  fs::create_directories(dir);
  const int port = free_loopback_port();
  Child broker{"broker", "/usr/bin/redis-server", {}};
  for (const char* candidate : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"})
    if (fs::exists(candidate)) broker.exe = candidate;
  if (!fs::exists(broker.exe))
    throw_error(ErrorCode::kNotFound,
                "redis-server is not installed (scripts/setup installs it); or pass --broker "
                "HOST:PORT of a running Redis server");
  broker.args = {"--port",       std::to_string(port),
                 "--bind",       "127.0.0.1",
                 "--dir",        dir.string(),
                 "--appendonly", "yes",
                 "--save",       "",
                 "--logfile",    (dir / "redis.log").string()};
  start(broker);
  address = "127.0.0.1:" + std::to_string(port);
  // Ready when it answers (the client retries for 20 s before giving up).
  broker::RedisClient client(broker::BrokerAddress::parse(address), {.retry_window_s = 20});
  client.command({"PING"});
  return broker;
}

}  // namespace

int launch_async_rloo(const AsyncLaunch& l) {
  catch_stop_signals();
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const fs::path afm = self.parent_path() / "afm";
  if (!fs::exists(afm))
    throw_error(ErrorCode::kNotFound, afm.string() +
                                          " is missing: the generators run afm, "
                                          "which is built next to afm-train");
  std::string address = l.broker;
  Child broker;
  if (address.empty()) broker = start_broker(l.out_dir, address);
  std::fprintf(stderr, "rloo: broker %s, run '%s', %d generator(s)\n", address.c_str(),
               l.run_name.c_str(), l.generators);

  std::vector<Child> workers;
  Child updater{"updater", self.string(), {"rloo-updater"}};
  updater.args.insert(updater.args.end(), l.updater_args.begin(), l.updater_args.end());
  updater.args.insert(updater.args.end(), {"--broker", address});
  workers.push_back(updater);
  for (int g = 0; g < l.generators; ++g) {
    Child gen{"generator " + std::to_string(g), afm.string(), {"train", "rloo-generator"}};
    gen.args.insert(gen.args.end(), l.generator_args.begin(), l.generator_args.end());
    gen.args.insert(gen.args.end(), {"--broker", address, "--id", std::to_string(g)});
    workers.push_back(gen);
  }
  for (Child& c : workers) start(c);

  int result = 0;
  bool updater_done = false;
  while (!updater_done && result == 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (g_stop_signal != 0) result = 128 + g_stop_signal;
      continue;
    }
    if (pid == broker.pid) {
      std::fprintf(stderr, "rloo: the broker %s; stopping\n", describe(status).c_str());
      broker.pid = -1;
      result = 1;
      break;
    }
    for (Child& c : workers) {
      if (c.pid != pid) continue;
      c.pid = -1;
      const bool is_updater = &c == &workers[0];
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        updater_done = updater_done || is_updater;
      } else if (WIFSIGNALED(status) && c.restarts < l.max_restarts) {
        ++c.restarts;
        std::fprintf(stderr, "rloo: the %s %s; starting it again (%d of %d)\n", c.name.c_str(),
                     describe(status).c_str(), c.restarts, l.max_restarts);
        start(c);
      } else {
        std::fprintf(stderr, "rloo: the %s %s; stopping the run\n", c.name.c_str(),
                     describe(status).c_str());
        result = exit_code(status);
      }
    }
  }
  // The generators stop by themselves once the updater has marked the run done.
  for (Child& c : workers)
    if (result != 0) stop(c, SIGTERM);
  for (Child& c : workers) reap(c, result == 0 ? 30 : 10);
  stop(broker, SIGTERM);
  reap(broker, 30);
  return result;
}

}  // namespace afm::train
