#include "server/http_server.h"

#include <httplib.h>
#include <malloc.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <regex>
#include <string_view>
#include <utility>

#include "base/error.h"
#include "base/process_stats.h"
#include "server/api_error.h"
#include "server/connection_probe.h"
#include "server/openai_protocol.h"
#include "server/playground.h"
#include "server/text_completion.h"

namespace afm::server {
namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Per-request log state. A request is handled start to end by one worker thread (pre-routing
// handler, handler, content provider, logger), so thread-local storage is per request.
thread_local Clock::time_point t_start;
thread_local std::string t_detail;

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(e.to_json().dump(-1, ' ', false, Json::error_handler_t::replace),
                  "application/json");
}

void send_json(httplib::Response& res, const Json& body, int status = 200) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

// Constant-time comparison: the time a wrong key takes says nothing about the right one.
bool same_key(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string usage_detail(const ChatResult& r) {
  return "prompt=" + std::to_string(r.prompt_tokens) +
         " cached=" + std::to_string(r.cached_prompt_tokens) +
         " completion=" + std::to_string(r.completion_tokens) + " finish=" + r.finish_reason;
}

// A large request (a huge schema, tool list or prompt) briefly needs far more memory than its
// body (parsing, tokenizing, compiling). glibc keeps what it frees in per-thread arenas, so each
// worker thread would otherwise hold its own peak; giving the free pages back keeps the
// server's footprint that of its live data. Small requests skip it: it walks every arena.
constexpr size_t kTrimAfterBodyBytes = 64 << 10;

// cpp-httplib's default options set SO_REUSEPORT, which lets a second server bind a port that
// is in use and take part of its connections. SO_REUSEADDR alone only allows rebinding over
// connections in TIME_WAIT (a quick restart); Linux refuses it while a socket listens there.
void listen_socket_options(socket_t sock) {
  const int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
}

// Why host:port cannot be bound, found by binding a probe socket with the server's options
// (cpp-httplib reports only failure, and its clean-up may overwrite errno).
std::string bind_failure_reason(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return std::string("cannot resolve the host: ") + gai_strerror(rc);
  }
  int err = 0;
  const int fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  if (fd < 0) {
    err = errno;
  } else {
    listen_socket_options(fd);
    if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0) err = errno;
    close(fd);
  }
  freeaddrinfo(found);
  switch (err) {
    case EADDRINUSE:
      return "address already in use (another server is listening there)";
    case EADDRNOTAVAIL:
      return "address not available on this machine";
    case EACCES:
      return "permission denied (ports below 1024 need privileges)";
    case 0:
      return "the address could not be bound";
    default:
      return std::strerror(err);
  }
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(std::vector<ServedModel> models, HttpServerOptions options)
      : catalog_(std::move(models)), options_(std::move(options)), seeds_(std::random_device{}()) {
    svr_.new_task_queue = [n = std::max(2, options_.http_threads)] {
      return new httplib::ThreadPool(static_cast<size_t>(n));
    };
    svr_.set_socket_options(listen_socket_options);
    svr_.set_payload_max_length(options_.max_body_bytes);
    // Longer than HTTP clients' own idle expiry (httpx: 5 s), so a client never reuses a
    // connection the server is closing at that moment; an idle connection holds a worker.
    svr_.set_keep_alive_timeout(15);
    svr_.set_keep_alive_max_count(1000);
    // Small answers go out at once: with Nagle's algorithm a client that sends headers and
    // body in two writes (python-requests) waits for the delayed ACK, ~40-90 ms per request.
    svr_.set_tcp_nodelay(true);
    svr_.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
      t_start = Clock::now();
      t_detail.clear();
      return httplib::Server::HandlerResponse::Unhandled;
    });
    svr_.set_error_handler(httplib::Server::HandlerWithResponse(
        [this](const httplib::Request& req, httplib::Response& res) {
          return fill_error(req, res);
        }));
    svr_.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr e) {
          std::string detail;
          send_error(res, api_error_from_exception(e, &detail));
          t_detail = detail;
        });
    svr_.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      counters_.record(res.status);
      if (!options_.log_requests) return;
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t_start).count();
      std::fprintf(stderr, "afm serve: %s:%d %s %s %d %.1fms%s%s\n", req.remote_addr.c_str(),
                   req.remote_port, req.method.c_str(), req.path.c_str(), res.status, ms,
                   t_detail.empty() ? "" : " ", t_detail.c_str());
    });
    svr_.Get("/health", [](const httplib::Request&, httplib::Response& res) {
      send_json(res, {{"status", "ok"}});
    });
    svr_.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorize(req, res)) return;
      res.set_content(render_prometheus(metrics()), "text/plain; version=0.0.4; charset=utf-8");
    });
    svr_.Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorize(req, res)) return;
      Json data = Json::array();
      for (const ServedModel& m : catalog_.list()) data.push_back(model_json(m));
      send_json(res, {{"object", "list"}, {"data", data}});
    });
    svr_.Get("/v1/models/(.+)", [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorize(req, res)) return;
      if (auto m = catalog_.find(req.matches[1])) return send_json(res, model_json(*m));
      send_error(res, unknown_model(req.matches[1]));
    });
    if (options_.load_adapter) add_adapter_routes();
    if (options_.playground) add_playground_routes();
    if (options_.tokenizer) add_tokenizer_routes();
    for (const char* path : {"/v1/chat/completions", "/chat/completions"}) {
      post_generation(path, &Impl::chat);
    }
    for (const char* path : {"/v1/completions", "/completions"}) {
      post_generation(path, &Impl::text_completion);
    }
  }

  const HttpServerOptions& options() const { return options_; }

  // A POST route that generates: authorized, every exception answered as an API error.
  void post_generation(const char* path,
                       void (Impl::*handler)(const httplib::Request&, httplib::Response&)) {
    svr_.Post(path, [this, handler](const httplib::Request& req, httplib::Response& res) {
      if (!authorize(req, res)) return;
      try {
        (this->*handler)(req, res);
      } catch (...) {
        std::string detail;
        send_error(res, api_error_from_exception(std::current_exception(), &detail));
        t_detail = detail;
      }
      if (req.body.size() >= kTrimAfterBodyBytes) malloc_trim(0);
    });
  }

  httplib::Server svr_;
  std::atomic<bool> stopping_{false};

 private:
  static Json model_json(const ServedModel& m) {
    return {{"id", m.id}, {"object", "model"}, {"created", m.created}, {"owned_by", "afm"}};
  }

  // The playground's files need no key: a browser cannot send one when it opens a page, and
  // they hold nothing but the page; its API calls carry the key the user enters.
  void add_playground_routes() {
    for (const PlaygroundFile& file : playground_files()) {
      svr_.Get(std::regex_replace(std::string(file.path), std::regex(R"([.])"), R"(\.)"),
               [file](const httplib::Request&, httplib::Response& res) {
                 res.set_header("Cache-Control", "no-cache");
                 res.set_content(file.body.data(), file.body.size(), std::string(file.content_type));
               });
    }
  }

  void add_tokenizer_routes() {
    const auto route = [this](Json (*answer)(const ServedTokenizer&, std::string_view)) {
      return [this, answer](const httplib::Request& req, httplib::Response& res) {
        if (!authorize(req, res)) return;
        try {
          send_json(res, answer(*options_.tokenizer, req.body));
        } catch (...) {
          std::string detail;
          send_error(res, api_error_from_exception(std::current_exception(), &detail));
          t_detail = detail;
        }
      };
    };
    svr_.Post("/tokenize", route(&tokenize_response));
    svr_.Post("/detokenize", route(&detokenize_response));
    svr_.Get("/tokenizer_info", [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorize(req, res)) return;
      send_json(res, tokenizer_info_response(*options_.tokenizer));
    });
  }

  void add_adapter_routes() {
    svr_.Get("/v1/adapters", [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorize_admin(req, res)) return;
      Json data = Json::array();
      for (const ServedModel& m : catalog_.list()) {
        if (m.adapter) data.push_back(adapter_json(m));
      }
      send_json(res, {{"object", "list"}, {"data", data}});
    });
    svr_.Post("/v1/adapters", [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorize_admin(req, res)) return;
      const AdapterInfo info = parse_adapter_load(req.body);
      const std::string id = catalog_.base_id() + ":" + info.name;
      if (catalog_.find(id)) return send_error(res, adapter_taken(id));
      ServedModel model;
      try {
        model = options_.load_adapter(id, info);
      } catch (const Error& e) {
        t_detail = e.what();
        return send_error(res, invalid_request(std::string("The adapter could not be loaded: ") +
                                                   e.what(), "path", "invalid_adapter"));
      }
      // Two loads of one name at once: the second finds the id taken here.
      if (!catalog_.add(model)) return send_error(res, adapter_taken(id));
      t_detail = "loaded " + id + " from " + info.path;
      send_json(res, adapter_json(model), 201);
    });
    svr_.Delete("/v1/adapters/(.+)", [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorize_admin(req, res)) return;
      const std::string id = catalog_.base_id() + ":" + std::string(req.matches[1]);
      if (!catalog_.remove_adapter(id)) {
        return send_error(res, ApiError(404, "No adapter named '" + std::string(req.matches[1]) +
                                                 "' is loaded.",
                                        "invalid_request_error", "name", "adapter_not_found"));
      }
      t_detail = "unloaded " + id;
      send_json(res, {{"id", id}, {"object", "adapter"}, {"deleted", true}});
    });
  }

  // The admin routes read files the client names: only with the server's API key.
  bool authorize_admin(const httplib::Request& req, httplib::Response& res) const {
    if (options_.api_key.empty()) {
      send_error(res, ApiError(403,
                               "Adapter administration is disabled: start the server with an "
                               "API key (--api-key or AFM_API_KEY) to use it.",
                               "invalid_request_error", "", "admin_disabled"));
      return false;
    }
    return authorize(req, res);
  }

  static ApiError adapter_taken(const std::string& id) {
    return ApiError(409, "The model '" + id + "' is already served; unload it first.",
                    "invalid_request_error", "name", "adapter_exists");
  }

  // A request without 'model' gets the served model when there is exactly one (no adapters).
  std::optional<ServedModel> only_model() const {
    std::vector<ServedModel> all = catalog_.list();
    if (all.size() == 1) return all.front();
    std::string ids;
    for (const ServedModel& m : all) ids += (ids.empty() ? "'" : ", '") + m.id + "'";
    throw ApiError(400, "Missing required parameter: 'model'. This server serves " +
                            std::to_string(all.size()) + " models: " + ids + ".",
                   "invalid_request_error", "model", "missing_required_parameter");
  }

  static ApiError unknown_model(const std::string& name) {
    return ApiError(404, "The model '" + name + "' does not exist or you do not have access to it.",
                    "invalid_request_error", "model", "model_not_found");
  }

  // Called from the handlers, after cpp-httplib has read the body: a pre-routing handler that
  // answers leaves an unread body on the connection, which is then parsed as the next request
  // (and the client's real next request on that keep-alive connection gets its 400).
  bool authorize(const httplib::Request& req, httplib::Response& res) const {
    if (options_.api_key.empty() || req.path == "/health") return true;
    const std::string header = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (header.rfind(prefix, 0) == 0 && same_key(header.substr(prefix.size()), options_.api_key)) {
      return true;
    }
    send_error(res, ApiError(401,
                             header.empty() ? "You didn't provide an API key. Pass it in the "
                                              "Authorization header (Bearer KEY)."
                                            : "Incorrect API key provided.",
                             "invalid_request_error", "", "invalid_api_key"));
    return false;
  }

  // Turns httplib's own error statuses (unknown route, body too large ...) into JSON bodies.
  httplib::Server::HandlerResponse fill_error(const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    // Without the key, an unknown URL is a 401 like every other path but /health.
    if ((res.status == 404 || res.status == 405) && !authorize(req, res)) {
      return httplib::Server::HandlerResponse::Handled;
    }
    ApiError e(res.status, "", "invalid_request_error", "", "");
    if (res.status == 404) {
      e.message = "Unknown request URL: " + req.method + " " + req.path + ".";
      e.code = "unknown_url";
    } else if (res.status == 413) {
      e.message =
          "The request body is larger than " + std::to_string(options_.max_body_bytes) + " bytes.";
      e.code = "request_too_large";
    } else if (res.status == 405) {
      e.message = "Method " + req.method + " is not allowed for " + req.path + ".";
    } else {
      e.message = "The request could not be processed (HTTP " + std::to_string(res.status) + ").";
    }
    send_error(res, e);
    return httplib::Server::HandlerResponse::Handled;
  }

  std::vector<Metric> metrics() const {
    std::vector<Metric> all = {
        counters_.metric(),
        gauge("process_resident_memory_bytes", "Resident memory size in bytes",
              static_cast<double>(resident_set_bytes()))};
    if (options_.metrics) {
      for (Metric& m : options_.metrics()) all.push_back(std::move(m));
    }
    return all;
  }

  uint64_t next_seed() {
    std::lock_guard<std::mutex> lock(seed_mutex_);
    return seeds_();
  }

  ServedModel requested_model(const std::string& name) const {
    const std::optional<ServedModel> model = name.empty() ? only_model() : catalog_.find(name);
    if (!model) throw unknown_model(name);
    return *model;
  }

  void chat(const httplib::Request& req, httplib::Response& res) {
    ParsedRequest p = parse_chat_request(req.body, next_seed());
    const bool want_logprobs = p.chat.logprobs_top >= 0;
    const ServedModel model = requested_model(p.model);
    const CompletionMeta meta = new_completion_meta(model.id);
    auto encoder = std::make_shared<SseEncoder>(meta, p.include_usage, want_logprobs);
    respond(req, res, model, std::move(p), encoder, [&](const ChatResult& r) {
      return completion_json(meta, r, want_logprobs);
    });
  }

  void text_completion(const httplib::Request& req, httplib::Response& res) {
    ParsedTextRequest t = parse_text_completion_request(req.body, next_seed());
    const bool want_logprobs = t.request.chat.logprobs_top >= 0;
    const ServedModel model = requested_model(t.request.model);
    const CompletionMeta meta = new_completion_meta(model.id, "cmpl-");
    auto encoder = std::make_shared<TextSseEncoder>(meta, t.request.include_usage, want_logprobs);
    respond(req, res, model, std::move(t.request), encoder, [&](const ChatResult& r) {
      return text_completion_json(meta, r, t.echo, want_logprobs);
    });
  }

  // Runs the request as a GenerationJob and answers with `body(result)` or, streamed, with
  // the encoder's events (SseEncoder or TextSseEncoder: start, content, finish).
  template <class Encoder>
  void respond(const httplib::Request& req, httplib::Response& res, const ServedModel& model,
               ParsedRequest p, std::shared_ptr<Encoder> encoder,
               const std::function<Json(const ChatResult&)>& body) {
    auto job = std::make_shared<GenerationJob>(model.complete, std::move(p.chat),
                                               std::move(p.stop), &stopping_);
    const ConnectionProbe probe =
        ConnectionProbe::find(req.local_port, req.remote_addr, req.remote_port);
    // Wait for the first event: an error before any text still gets a proper status code.
    std::string first;
    std::vector<ChatLogprob> first_logprobs;
    bool done = false;
    bool gone = false;
    while (!done && (first.empty() || !p.stream)) {
      GenerationJob::Update u = job->wait(100ms);
      first += u.text;
      first_logprobs.insert(first_logprobs.end(), u.logprobs.begin(), u.logprobs.end());
      done = u.done;
      if (!done && !gone && probe.peer_closed()) {
        job->cancel();  // keep waiting: the job ends before the engine's next token
        gone = true;
      }
    }
    if (gone) {
      // Nobody reads the answer; 499 (nginx's "client closed request") marks it in the log.
      res.status = 499;
      t_detail = "client disconnected; " +
                 (job->error() ? std::string("error") : usage_detail(job->result()));
      return;
    }
    if (job->error()) {
      std::string detail;
      send_error(res, api_error_from_exception(job->error(), &detail));
      t_detail = detail;
      return;
    }
    if (!p.stream) {
      t_detail = usage_detail(job->result());
      send_json(res, body(job->result()));
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream", [job, encoder, probe, first, first_logprobs, done](
                                 size_t, httplib::DataSink& sink) mutable {
          auto write = [&](const std::string& s) {
            return s.empty() || sink.write(s.data(), s.size());
          };
          bool ok = write(encoder->start()) && write(encoder->content(first, first_logprobs));
          while (ok && !done) {
            GenerationJob::Update u = job->wait(250ms);
            done = u.done;
            ok = write(encoder->content(u.text, u.logprobs)) && (done || !probe.peer_closed());
          }
          if (!ok) {  // the client went away: stop generating for it
            job->cancel();
            t_detail = "client disconnected";
            return false;
          }
          if (job->error()) {
            std::string detail;
            write(SseEncoder::error(api_error_from_exception(job->error(), &detail)));
            t_detail = "error after streaming began: " + detail;
          } else {
            write(encoder->finish(job->result()));
            t_detail = "stream " + usage_detail(job->result());
          }
          sink.done();
          return true;
        });
  }

  ModelCatalog catalog_;
  HttpServerOptions options_;
  RequestCounters counters_;
  std::mutex seed_mutex_;
  std::mt19937_64 seeds_;
};

HttpServer::HttpServer(ServedModel model, HttpServerOptions options)
    : HttpServer(std::vector<ServedModel>{std::move(model)}, std::move(options)) {}

HttpServer::HttpServer(std::vector<ServedModel> models, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(models), std::move(options))) {
  // A client that disconnects mid-response must not kill the process: writes to its socket
  // fail with EPIPE instead (cpp-httplib sends without MSG_NOSIGNAL).
  std::signal(SIGPIPE, SIG_IGN);
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::bind() {
  const std::string& host = impl_->options().host;
  const int want = impl_->options().port;
  port_ = want == 0 ? impl_->svr_.bind_to_any_port(host)
                    : (impl_->svr_.bind_to_port(host, want) ? want : -1);
  if (port_ < 0) {
    throw_error(ErrorCode::kIo, "cannot listen on " + host + ":" + std::to_string(want) + ": " +
                                    bind_failure_reason(host, want));
  }
}

void HttpServer::run() {
  if (impl_->stopping_) return;
  impl_->svr_.listen_after_bind();
}

void HttpServer::stop() {
  impl_->stopping_ = true;
  impl_->svr_.stop();
  // cpp-httplib 0.11 lets a worker wait out the keep-alive timeout (15 s) on an idle
  // connection before it can be joined: wake those workers now (nginx keeps idle upstream
  // connections open, so every replica restart would otherwise take 15 s).
  if (port_ > 0) ConnectionProbe::end_reads(port_);
}

}  // namespace afm::server
