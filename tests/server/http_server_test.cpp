// HttpServer against a fake engine: routes, auth, error mapping, SSE framing, stop sequences,
// and cancellation when a client disconnects (streaming or not).
#include "server/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"

namespace afm::server {
namespace {

using Json = nlohmann::ordered_json;
using namespace std::chrono_literals;

std::atomic<int> g_cancelled{0};

// Echoes the last message word by word; special prompts throw, call tools or run "forever".
ChatResult fake_complete(const ChatRequest& req, const DeltaFn& on_delta, const CancelledFn&) {
  const std::string& prompt = req.messages.back().content;
  if (prompt == "invalid")
    throw_error(ErrorCode::kInvalidArgument, "the prompt has 9 tokens but the context holds 4");
  if (prompt == "unsupported")
    throw_error(ErrorCode::kUnsupported, "unsupported keyword 'if' at /");
  if (prompt == "crash") throw std::runtime_error("secret internal detail");
  ChatResult r;
  r.prompt_tokens = 5;
  if (prompt == "tools") {
    r.tool_calls.push_back({"call_0", "f", Json{{"a", 1}}});
    r.finish_reason = "tool_calls";
    return r;
  }
  if (prompt == "forever") {
    for (int i = 0; i < 1000; ++i) {
      std::this_thread::sleep_for(10ms);
      if (!on_delta({"x"})) {
        ++g_cancelled;
        r.finish_reason = "cancelled";
        return r;
      }
      r.text += "x";
    }
    r.finish_reason = "length";
    return r;
  }
  size_t start = 0;
  while (start < prompt.size()) {
    size_t end = prompt.find(' ', start);
    end = end == std::string::npos ? prompt.size() : end + 1;
    const std::string piece = prompt.substr(start, end - start);
    r.text += piece;
    ++r.completion_tokens;
    if (!on_delta({piece})) {
      r.finish_reason = "cancelled";
      return r;
    }
    start = end;
  }
  r.finish_reason = "stop";
  return r;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void start(const std::string& api_key = "",
             std::function<std::vector<Metric>()> metrics = nullptr) {
    HttpServerOptions o;
    o.port = 0;
    o.api_key = api_key;
    o.metrics = std::move(metrics);
    o.max_body_bytes = 4096;
    o.log_requests = false;
    server_ = std::make_unique<HttpServer>(ServedModel{"fake", 1, fake_complete}, o);
    server_->bind();
    thread_ = std::thread([this] { server_->run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    for (int i = 0; i < 100 && !client_->Get("/health"); ++i) std::this_thread::sleep_for(10ms);
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  httplib::Result chat(const Json& body, const httplib::Headers& headers = {}) {
    return client_->Post("/v1/chat/completions", headers, body.dump(), "application/json");
  }
  static Json request(const std::string& prompt, bool stream = false) {
    Json b = {{"model", "fake"}, {"messages", {{{"role", "user"}, {"content", prompt}}}}};
    if (stream) b["stream"] = true;
    return b;
  }
  static Json error_of(const httplib::Result& r) {
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    const Json j = Json::parse(r->body);
    EXPECT_TRUE(j["error"].contains("message") && j["error"].contains("type") &&
                j["error"].contains("param") && j["error"].contains("code"))
        << r->body;
    return j["error"];
  }

  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HttpServerTest, HealthModelsAndCompletion) {
  start();
  auto h = client_->Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(Json::parse(h->body)["status"], "ok");
  auto m = client_->Get("/v1/models");
  ASSERT_TRUE(m);
  EXPECT_EQ(Json::parse(m->body)["data"][0]["id"], "fake");
  EXPECT_EQ(client_->Get("/v1/models/fake")->status, 200);
  EXPECT_EQ(error_of(client_->Get("/v1/models/other"))["code"], "model_not_found");
  auto r = chat(request("hello there"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  const Json c = Json::parse(r->body);
  EXPECT_EQ(c["choices"][0]["message"]["content"], "hello there");
  EXPECT_EQ(c["model"], "fake");
  Json no_model = request("hello there");
  no_model.erase("model");  // one model served: it answers, and says which
  auto n = chat(no_model);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->status, 200);
  EXPECT_EQ(Json::parse(n->body)["model"], "fake");
  auto t = chat(request("tools"));
  EXPECT_EQ(Json::parse(t->body)["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
            "{\"a\":1}");
}

TEST_F(HttpServerTest, ErrorsAreOpenAiShaped) {
  start();
  Json b = request("hi");
  b["model"] = "gpt-4";
  auto r = chat(b);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(error_of(r)["code"], "model_not_found");
  auto bad = client_->Post("/v1/chat/completions", "{not json", "application/json");
  EXPECT_EQ(bad->status, 400);
  error_of(bad);
  b = request("hi");
  b["temperature"] = "hot";
  EXPECT_EQ(error_of(chat(b))["param"], "temperature");
  auto big = client_->Post("/v1/chat/completions", std::string(10000, ' '), "application/json");
  EXPECT_EQ(big->status, 413);
  EXPECT_EQ(error_of(big)["code"], "request_too_large");
  auto nf = client_->Get("/v1/nothing");
  EXPECT_EQ(nf->status, 404);
  error_of(nf);
  auto inv = chat(request("invalid"));
  EXPECT_EQ(inv->status, 400);
  EXPECT_NE(error_of(inv)["message"].get<std::string>().find("context holds"), std::string::npos);
  auto uns = chat(request("unsupported", /*stream=*/true));  // before any token: a real 400
  EXPECT_EQ(uns->status, 400);
  EXPECT_NE(error_of(uns)["message"].get<std::string>().find("'if'"), std::string::npos);
  auto crash = chat(request("crash"));
  EXPECT_EQ(crash->status, 500);
  EXPECT_EQ(crash->body.find("secret"), std::string::npos);
}

TEST_F(HttpServerTest, ApiKey) {
  start("k123");
  EXPECT_EQ(client_->Get("/health")->status, 200);  // health checks need no key
  auto none = chat(request("hi"));
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(error_of(none)["code"], "invalid_api_key");
  EXPECT_EQ(chat(request("hi"), {{"Authorization", "Bearer nope"}})->status, 401);
  EXPECT_EQ(client_->Get("/v1/models")->status, 401);
  EXPECT_EQ(chat(request("hi"), {{"Authorization", "Bearer k123"}})->status, 200);
}

TEST(Metrics, PrometheusTextFormat) {
  Metric requests{"afm_http_requests_total", "HTTP requests", "counter",
                  {{"status=\"200\"", 3}, {"status=\"404\"", 1}}};
  EXPECT_EQ(render_prometheus({requests, gauge("afm_cache_bytes", "Bytes held", 1.5e9),
                               gauge("afm_ratio", "A ratio", 0.25)}),
            "# HELP afm_http_requests_total HTTP requests\n"
            "# TYPE afm_http_requests_total counter\n"
            "afm_http_requests_total{status=\"200\"} 3\n"
            "afm_http_requests_total{status=\"404\"} 1\n"
            "# HELP afm_cache_bytes Bytes held\n"
            "# TYPE afm_cache_bytes gauge\n"
            "afm_cache_bytes 1500000000\n"
            "# HELP afm_ratio A ratio\n"
            "# TYPE afm_ratio gauge\n"
            "afm_ratio 0.25\n");
}

TEST_F(HttpServerTest, MetricsCountRequestsAndShowTheModelsCaches) {
  start("k123", [] { return std::vector<Metric>{gauge("afm_test_cache_bytes", "A cache", 42)}; });
  const httplib::Headers key = {{"Authorization", "Bearer k123"}};
  EXPECT_EQ(client_->Get("/metrics")->status, 401);  // like every route but /health
  EXPECT_EQ(chat(request("hi"), key)->status, 200);
  EXPECT_EQ(client_->Get("/v1/nothing", key)->status, 404);
  // Counted once each when answered: the 401 above, the completion, the 404, and the health
  // polls start() made. A request is counted just after its response is written (the server's
  // request logger, on the thread that answered it), so a scrape that follows at once may still
  // race any of those counts, the 401's too when its thread is descheduled on a busy machine:
  // scrape until both have landed (they must, and exactly once), a few seconds at most.
  const std::string count_401 = "afm_http_requests_total{status=\"401\"} 1\n";
  const std::string count_404 = "afm_http_requests_total{status=\"404\"} 1\n";
  const auto landed = [&](const httplib::Result& r) {
    return r && r->body.find(count_401) != std::string::npos &&
           r->body.find(count_404) != std::string::npos;
  };
  httplib::Result m = client_->Get("/metrics", key);
  for (int tries = 0; m && !landed(m) && tries < 200; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    m = client_->Get("/metrics", key);
  }
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  EXPECT_EQ(m->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(m->body.find(count_401), std::string::npos) << m->body;
  EXPECT_NE(m->body.find(count_404), std::string::npos) << m->body;
  EXPECT_NE(m->body.find("# TYPE process_resident_memory_bytes gauge\n"), std::string::npos);
  EXPECT_NE(m->body.find("\nafm_test_cache_bytes 42\n"), std::string::npos);
}

TEST_F(HttpServerTest, StreamingAndStopSequences) {
  start();
  Json b = request("one two three four", true);
  b["stream_options"] = {{"include_usage", true}};
  auto r = chat(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  std::string text;
  int usage_chunks = 0;
  size_t pos = 0;
  std::string last;
  while ((pos = r->body.find("data: ", pos)) != std::string::npos) {
    const size_t end = r->body.find("\n\n", pos);
    last = r->body.substr(pos + 6, end - pos - 6);
    pos = end;
    if (last == "[DONE]") break;
    const Json c = Json::parse(last);
    if (!c["choices"].empty() && c["choices"][0]["delta"].contains("content")) {
      text += c["choices"][0]["delta"]["content"].get<std::string>();
    }
    if (c["usage"].is_object()) ++usage_chunks;
  }
  EXPECT_EQ(last, "[DONE]");
  EXPECT_EQ(text, "one two three four");
  EXPECT_EQ(usage_chunks, 1);

  b = request("one two three four");
  b["stop"] = Json::array({"ree", "zzz"});
  const Json c = Json::parse(chat(b)->body);
  EXPECT_EQ(c["choices"][0]["message"]["content"], "one two th");
  EXPECT_EQ(c["choices"][0]["finish_reason"], "stop");
}

// Sends a raw request and returns the connected socket.
int send_raw(int port, const std::string& body) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const std::string req =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
      "application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  EXPECT_EQ(send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  return fd;
}

bool wait_for_cancellations(int want) {
  for (int i = 0; i < 300 && g_cancelled < want; ++i) std::this_thread::sleep_for(10ms);
  return g_cancelled >= want;
}

TEST_F(HttpServerTest, DisconnectCancelsGeneration) {
  start();
  const int before = g_cancelled;
  int fd = send_raw(server_->port(), request("forever", true).dump());
  char buf[512];
  EXPECT_GT(recv(fd, buf, sizeof buf, 0), 0);  // the stream has begun
  close(fd);
  EXPECT_TRUE(wait_for_cancellations(before + 1));

  fd = send_raw(server_->port(), request("forever").dump());  // not streaming: nothing written
  std::this_thread::sleep_for(100ms);
  close(fd);
  EXPECT_TRUE(wait_for_cancellations(before + 2));
  EXPECT_EQ(client_->Get("/health")->status, 200);  // and the server still answers
}

TEST_F(HttpServerTest, StopCancelsRunningGenerations) {
  start();
  const int before = g_cancelled;
  std::thread t([&] {
    httplib::Client c("127.0.0.1", server_->port());
    c.Post("/v1/chat/completions", request("forever").dump(), "application/json");
  });
  std::this_thread::sleep_for(200ms);
  server_->stop();
  thread_.join();
  t.join();
  EXPECT_EQ(g_cancelled, before + 1);
}

// Reads from `fd` until `n` HTTP status lines have arrived (or 5 s pass, or the server closes
// the connection); returns their codes.
std::vector<int> read_statuses(int fd, size_t n) {
  std::string got;
  std::vector<int> codes;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[4096];
  while (codes.size() < n) {
    const ssize_t k = recv(fd, buf, sizeof buf, 0);
    if (k <= 0) break;
    got.append(buf, static_cast<size_t>(k));
    codes.clear();
    for (size_t at = got.find("HTTP/1.1 "); at != std::string::npos;
         at = got.find("HTTP/1.1 ", at + 1)) {
      codes.push_back(std::atoi(got.c_str() + at + 9));
    }
  }
  return codes;
}

// A request refused for its key whose body arrives after the headers: the body is consumed
// with the request, so the next request on the same keep-alive connection gets its own answer.
TEST_F(HttpServerTest, RefusedKeyLeavesTheConnectionInStep) {
  start("k123");
  for (const char* path : {"/v1/chat/completions", "/v1/nothing"}) {
    const std::string body = request("hi").dump();
    auto head = [&](const std::string& key, const std::string& p) {
      return "POST " + p + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key +
             "\r\nContent-Type: application/json\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n";
    };
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(server_->port()));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    const std::string first = head("wrong", path);
    send(fd, first.data(), first.size(), 0);
    std::this_thread::sleep_for(100ms);  // the body comes in a later segment
    send(fd, body.data(), body.size(), 0);
    EXPECT_EQ(read_statuses(fd, 1), std::vector<int>{401}) << path;
    const std::string second = head("k123", "/v1/chat/completions") + body;
    send(fd, second.data(), second.size(), 0);  // what a keep-alive client does next
    EXPECT_EQ(read_statuses(fd, 1), std::vector<int>{200}) << path;
    close(fd);
  }
}

// Expects bind() on `port` to fail with one line naming the address and the reason.
void expect_port_busy(int port) {
  HttpServerOptions o;
  o.port = port;
  o.log_requests = false;
  HttpServer second(ServedModel{"fake", 1, fake_complete}, o);
  try {
    second.bind();
    ADD_FAILURE() << "a second server bound the busy port " << port;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(msg.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << msg;
    EXPECT_NE(msg.find("address already in use"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// A port held by a running server is not shared: connections would go to either of them.
TEST_F(HttpServerTest, SecondServerOnTheSamePortFails) {
  start();
  expect_port_busy(server_->port());
  EXPECT_EQ(client_->Get("/health")->status, 200);  // the first one still serves
}

// The same when the listener set SO_REUSEPORT itself (as servers built on cpp-httplib's
// defaults do): sharing needs both sockets to ask for it, and ours does not.
TEST(HttpServerBind, PortHeldWithReusePortFails) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  const int yes = 1;
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &yes, sizeof yes), 0);
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes), 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  expect_port_busy(ntohs(a.sin_port));
  close(fd);
}

}  // namespace
}  // namespace afm::server
