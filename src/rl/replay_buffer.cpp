#include "rl/replay_buffer.h"

#include <algorithm>

#include "base/error.h"

namespace afm::rl {

using broker::RedisReply;

ReplayBuffer::ReplayBuffer(broker::RedisClient& client, const std::string& run)
    : client_(client), keys_(run) {}

std::string ReplayBuffer::publish(const std::string& group_json) {
  return client_.command({"XADD", keys_.trajectories(), "*", "group", group_json}).str;
}

int64_t ReplayBuffer::backlog() {
  // Entries in the stream are either waiting or delivered and not yet acknowledged (pending):
  // acknowledged ones are deleted at once.
  const int64_t entries = client_.command({"XLEN", keys_.trajectories()}).integer;
  int64_t pending = 0;
  try {
    const broker::RedisReply r =
        client_.command({"XPENDING", keys_.trajectories(), keys_.consumer_group()});
    if (!r.elements.empty()) pending = r.elements[0].integer;
  } catch (const Error& e) {
    // NOGROUP: no updater has created the group yet, so nothing was delivered.
    if (std::string(e.what()).find("NOGROUP") == std::string::npos) throw;
  }
  return std::max<int64_t>(0, entries - pending);
}

void ReplayBuffer::create_consumer_group() {
  try {
    client_.command(
        {"XGROUP", "CREATE", keys_.trajectories(), keys_.consumer_group(), "0", "MKSTREAM"});
  } catch (const Error& e) {
    // BUSYGROUP: it exists already (a resumed run, a second updater start).
    if (std::string(e.what()).find("BUSYGROUP") == std::string::npos) throw;
  }
}

std::vector<StreamEntry> ReplayBuffer::read_pending(const std::string& consumer,
                                                    const std::string& after, int64_t count) {
  return read({"XREADGROUP", "GROUP", keys_.consumer_group(), consumer, "COUNT",
               std::to_string(count), "STREAMS", keys_.trajectories(), after});
}

std::vector<StreamEntry> ReplayBuffer::read_new(const std::string& consumer, int64_t count,
                                                int64_t block_ms) {
  return read({"XREADGROUP", "GROUP", keys_.consumer_group(), consumer, "COUNT",
               std::to_string(count), "BLOCK", std::to_string(block_ms), "STREAMS",
               keys_.trajectories(), ">"});
}

std::vector<StreamEntry> ReplayBuffer::read(std::vector<std::string> args) {
  const RedisReply reply = client_.command(args);
  std::vector<StreamEntry> out;
  // [[stream, [[id, [field, value, ...]], ...]]], or nil when BLOCK timed out.
  if (reply.type != RedisReply::Type::kArray || reply.elements.empty()) return out;
  const RedisReply& streams = reply.elements[0];
  if (streams.elements.size() != 2)
    throw_error(ErrorCode::kFormat, "broker: unexpected XREADGROUP reply");
  for (const RedisReply& entry : streams.elements[1].elements) {
    if (entry.elements.size() != 2)
      throw_error(ErrorCode::kFormat, "broker: unexpected stream entry");
    StreamEntry e{entry.elements[0].str, {}};
    const auto& fields = entry.elements[1].elements;  // nil for an entry deleted meanwhile
    for (size_t i = 0; i + 1 < fields.size(); i += 2)
      if (fields[i].str == "group") e.payload = fields[i + 1].str;
    out.push_back(std::move(e));
  }
  return out;
}

void ReplayBuffer::acknowledge(const std::vector<std::string>& ids) {
  if (ids.empty()) return;
  std::vector<std::string> ack = {"XACK", keys_.trajectories(), keys_.consumer_group()};
  std::vector<std::string> del = {"XDEL", keys_.trajectories()};
  ack.insert(ack.end(), ids.begin(), ids.end());
  del.insert(del.end(), ids.begin(), ids.end());
  client_.command(ack);
  client_.command(del);
}

}  // namespace afm::rl
