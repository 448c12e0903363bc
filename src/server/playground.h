// The web playground (`afm serve` at /): its static files, compiled into the binary from
// src/server/playground/ (cmake/embed_files.cmake), so nothing is read from disk or a CDN at
// run time. The page talks to the server's own /v1 API (docs/server.md, "Playground").
// Thread safety: the table is immutable.
#pragma once

#include <span>
#include <string_view>

namespace afm::server {

struct PlaygroundFile {
  std::string_view path;          // URL path: "/" for index.html, "/playground.js" ...
  std::string_view content_type;  // with charset for text
  std::string_view body;
};

std::span<const PlaygroundFile> playground_files();

}  // namespace afm::server
