// The broker pieces of asynchronous RLOO against a real redis-server: the client's errors and
// reconnection, the replay buffer's delivery / replay / acknowledgement, the policy channel.
#include <gtest/gtest.h>

#include <chrono>

#include "base/error.h"
#include "base/free_port.h"
#include "broker/redis_client.h"
#include "rl/policy_channel.h"
#include "rl/redis_fixture.h"
#include "rl/replay_buffer.h"

namespace afm::rl {
namespace {

using broker::BrokerAddress;
using broker::RedisClient;
using testing::RedisServer;

TEST(BrokerAddress, ParsesAndRefuses) {
  EXPECT_EQ(BrokerAddress::parse("10.0.0.2:7000").str(), "10.0.0.2:7000");
  EXPECT_EQ(BrokerAddress::parse("redis.local").str(), "redis.local:6379");
  EXPECT_EQ(BrokerAddress::parse(":7001").str(), "127.0.0.1:7001");
  for (const char* bad : {"host:", "host:0", "host:70000", "host:12x", "a b:1"})
    EXPECT_THROW(BrokerAddress::parse(bad), Error) << bad;
}

TEST(RedisClient, UnreachableBrokerIsAClearErrorAfterTheRetryWindow) {
  const BrokerAddress address =
      BrokerAddress::parse("127.0.0.1:" + std::to_string(free_loopback_port()));
  const auto start = std::chrono::steady_clock::now();
  try {
    RedisClient client(address, {.retry_window_s = 1.0});
    FAIL() << "connected to a closed port";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot reach the broker at " + address.str()), std::string::npos) << what;
    EXPECT_NE(what.find("attempts"), std::string::npos) << what;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(s, 0.5);   // it retried
  EXPECT_LT(s, 10.0);  // and gave up
}

TEST(RedisClient, ServerErrorsAreTypedAndTheConnectionSurvivesARestart) {
  RedisServer server;
  RedisClient client(BrokerAddress::parse(server.address()), {.retry_window_s = 20});
  EXPECT_EQ(client.command({"SET", "k", std::string("a\0b", 3)}).str, "OK");
  EXPECT_EQ(client.command({"GET", "k"}).str, std::string("a\0b", 3));  // binary safe
  EXPECT_TRUE(client.command({"GET", "missing"}).is_nil());
  try {
    client.command({"NOSUCHCOMMAND"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("NOSUCHCOMMAND"), std::string::npos);
  }
  server.restart();  // the old connection is dead; the client reconnects and sends again
  EXPECT_EQ(client.command({"PING"}).str, "PONG");
}

TEST(ReplayBuffer, DeliversOnceReplaysUnacknowledgedAndDeletesAcknowledged) {
  RedisServer server;
  RedisClient generator_side(BrokerAddress::parse(server.address()));
  RedisClient updater_side(BrokerAddress::parse(server.address()));
  ReplayBuffer out(generator_side, "t");
  ReplayBuffer in(updater_side, "t");
  in.create_consumer_group();
  in.create_consumer_group();  // idempotent
  EXPECT_EQ(out.backlog(), 0);
  for (int i = 0; i < 5; ++i) out.publish("group " + std::to_string(i));
  EXPECT_EQ(out.backlog(), 5);

  const auto first = in.read_new("updater", 3, 100);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0].payload, "group 0");
  EXPECT_EQ(first[2].payload, "group 2");
  const auto second = in.read_new("updater", 10, 100);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].payload, "group 3");
  EXPECT_TRUE(in.read_new("updater", 10, 50).empty());  // BLOCK timed out: nothing new
  EXPECT_EQ(out.backlog(), 0);  // all delivered, none acknowledged yet: nothing waits
  out.publish("group 5");
  EXPECT_EQ(out.backlog(), 1);

  // The updater acknowledges the first three (its checkpoint covers them), then "restarts":
  // the other two come back, in order, and only they.
  in.acknowledge({first[0].id, first[1].id, first[2].id});
  EXPECT_EQ(generator_side.command({"XLEN", "afm:rloo:t:trajectories"}).integer, 3);
  RedisClient restarted(BrokerAddress::parse(server.address()));
  ReplayBuffer again(restarted, "t");
  const auto replay = again.read_pending("updater", "0", 1);
  ASSERT_EQ(replay.size(), 1u);
  EXPECT_EQ(replay[0].payload, "group 3");
  const auto rest = again.read_pending("updater", replay[0].id, 10);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].payload, "group 4");
  EXPECT_TRUE(again.read_pending("updater", rest[0].id, 10).empty());
  EXPECT_EQ(again.read_new("updater", 10, 50).at(0).payload, "group 5");
  // Another run's name sees none of it.
  ReplayBuffer other(restarted, "other");
  EXPECT_EQ(other.backlog(), 0);
}

TEST(PolicyChannel, AnnouncesVersionsKeepsTheLastFewAndFlagsTheEnd) {
  RedisServer server;
  RedisClient client(BrokerAddress::parse(server.address()));
  PolicyChannel channel(client, "t");
  EXPECT_FALSE(channel.announced().has_value());
  EXPECT_FALSE(channel.finished());
  for (int v = 0; v < 5; ++v) channel.publish(v, "bytes of v" + std::to_string(v), 3);
  EXPECT_EQ(channel.announced(), 4);
  EXPECT_EQ(channel.fetch(4), "bytes of v4");
  EXPECT_EQ(channel.fetch(2), "bytes of v2");
  try {
    channel.fetch(1);  // deleted: 4 - 3
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  }
  channel.finish();
  EXPECT_TRUE(channel.finished());
  channel.reset_finished();
  EXPECT_FALSE(channel.finished());
  client.command({"SET", "afm:rloo:t:policy:version", "seven"});
  EXPECT_THROW(channel.announced(), Error);
}

}  // namespace
}  // namespace afm::rl
