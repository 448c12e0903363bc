#include "launcher.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/free_port.h"

extern char** environ;

namespace afm::train {

namespace {

pid_t spawn_rank(int rank, int nproc, int port, char** argv) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string s = *e;
    if (s.rfind("RANK=", 0) && s.rfind("WORLD_SIZE=", 0) && s.rfind("MASTER_ADDR=", 0) &&
        s.rfind("MASTER_PORT=", 0))
      env_strings.push_back(s);
  }
  env_strings.push_back("RANK=" + std::to_string(rank));
  env_strings.push_back("WORLD_SIZE=" + std::to_string(nproc));
  env_strings.push_back("MASTER_ADDR=127.0.0.1");
  env_strings.push_back("MASTER_PORT=" + std::to_string(port));
  std::vector<char*> env;
  for (std::string& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, env.data()) != 0)
    throw_error(ErrorCode::kIo, "cannot start rank " + std::to_string(rank));
  return pid;
}

}  // namespace

int launch_local_ranks(int nproc, char** argv) {
  const int port = free_loopback_port();
  std::vector<pid_t> ranks;
  for (int r = 0; r < nproc; ++r) ranks.push_back(spawn_rank(r, nproc, port, argv));
  int result = 0;
  for (size_t done = 0; done < ranks.size(); ++done) {
    int status = 0;
    const pid_t pid = wait(&status);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0 && result == 0) {
      result = code;
      std::fprintf(stderr, "afm-train: a rank (pid %d) failed with status %d; stopping the rest\n",
                   static_cast<int>(pid), code);
      for (pid_t other : ranks)
        if (other != pid) kill(other, SIGTERM);
    }
  }
  return result;
}

}  // namespace afm::train
