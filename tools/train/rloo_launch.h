// Starts and supervises an asynchronous RLOO run on this machine (docs/rl.md): a Redis server
// (redis-server from PATH, data in <out>/broker with an append-only file, on a free loopback
// port) unless a broker address is given, the updater (this program, `rloo-updater`) and N
// generators (`afm train rloo-generator`, the `afm` binary next to this one).
//
// Every child gets SIGTERM when this process dies (PR_SET_PDEATHSIG). A generator or the
// updater killed by a signal (kill -9, the OOM killer) is started again, at most
// `max_restarts` times per role: a restarted updater resumes from its checkpoint, a restarted
// generator continues with the announced policy. A child that exits with an error (a bad
// option, an unreachable broker) ends the run with that status: starting it again would fail
// the same way. The run ends when the updater exits 0; then
// the generators (which see the run's done flag) get 30 s to exit before SIGTERM, and the Redis
// server is shut down. Returns the run's exit status.
#pragma once

#include <string>
#include <vector>

namespace afm::train {

struct AsyncLaunch {
  int generators = 1;
  int max_restarts = 3;
  std::string broker;  // "": start one
  std::string run_name;
  std::string out_dir;
  std::vector<std::string> updater_args;    // after `afm-train rloo-updater`, without --broker
  std::vector<std::string> generator_args;  // after `afm train rloo-generator`, without
                                            // --broker and --id
};

int launch_async_rloo(const AsyncLaunch& launch);

}  // namespace afm::train
