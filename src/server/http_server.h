// The OpenAI-compatible HTTP server behind `afm serve` (docs/server.md):
//   POST /v1/chat/completions   (also /chat/completions)   JSON or SSE (stream: true)
//   GET  /v1/models, /v1/models/{id}
//   GET  /health                                            no auth; {"status": "ok"}
//   GET  /metrics                                           Prometheus text (metrics.h)
//   GET, POST /v1/adapters, DELETE /v1/adapters/{name}      with HttpServerOptions::load_adapter
//                                                           and an API key (adapter_admin.h)
//
// Every error is a JSON body {"error": {"message", "type", "param", "code"}}: 400 for bad
// requests (malformed JSON, wrong types, values out of range, schema keywords the engine cannot
// enforce), 401 for a missing or wrong API key, 403 for the adapter admin routes on a server
// without an API key, 409 for an adapter name already served, 404 for an unknown model (code
// "model_not_found") or route, 413 for a body over max_body_bytes, 500 with a generic message
// for anything else (the detail goes to the log). No exception escapes a handler.
//
// Concurrency: HTTP connections are served by `http_threads` workers; completions are handed
// to the model's complete function, which queues what it cannot run at once (ChatService).
// A client that disconnects cancels its generation before the engine's next token; stop() cancels
// every running generation the same way.
// Logging: one line per request on stderr.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/adapter_admin.h"
#include "server/generation_job.h"
#include "server/model_catalog.h"
#include "server/metrics.h"
#include "server/tokenizer_api.h"

namespace afm::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                   // 0: any free port (see port())
  std::string api_key;               // empty: no authentication
  size_t max_body_bytes = 4u << 20;  // larger request bodies get a 413
  int http_threads = 16;             // connection workers, one per open connection (idle ones too)
  bool log_requests = true;
  // GET / serves the web playground (playground.h); its static files need no API key (the API
  // calls the page makes do).
  bool playground = true;
  // More samples for GET /metrics (the model's cache sizes); called on each scrape, from the
  // scraping request's thread. Unset: the server's own counters only.
  std::function<std::vector<Metric>()> metrics;
  // Set: POST /tokenize, POST /detokenize and GET /tokenizer_info answer with this tokenizer
  // (tokenizer_api.h).
  std::optional<ServedTokenizer> tokenizer;
  // Set: the adapter admin routes (adapter_admin.h) exist and call this to load an adapter.
  AdapterLoader load_adapter;
};

class HttpServer {
 public:
  HttpServer(ServedModel model, HttpServerOptions options);
  // Several ids (a base model and its adapters, "BASE:NAME"): /v1/models lists them in this
  // order and each request runs on the one its "model" names. At least one.
  HttpServer(std::vector<ServedModel> models, HttpServerOptions options);
  ~HttpServer();  // stops and waits for the workers
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket; throws afm::Error(kIo) naming host:port and the reason when it
  // cannot ("address already in use" while another socket listens there: the port is never
  // shared, so a second server cannot take part of the first one's connections).
  void bind();
  // The bound port (after bind()).
  int port() const { return port_; }
  // Serves until stop(); returns after the workers have finished their requests.
  void run();
  // Thread-safe, idempotent; callable before run() returns from any thread (not a signal
  // handler: use a thread that waits for the signal).
  void stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = -1;
};

}  // namespace afm::server
