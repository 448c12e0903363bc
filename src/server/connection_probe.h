// Tells whether the client of an HTTP request is still connected, without writing to it.
//
// cpp-httplib 0.11 does not give handlers their socket, and a non-streaming handler writes
// nothing until the answer is complete, so a client that gives up would otherwise keep its
// generation running to the end. The probe finds the request's socket by its address pair
// (unique on the host while the handler runs, since the socket stays open until it returns)
// and peeks at it: end-of-stream or an error means the client is gone.
//
// Linux-only in practice (/proc/self/fd); elsewhere find() returns a probe that always reports
// "connected", which only costs the cancellation.
// Thread safety: a probe is used by one thread; find() is reentrant.
#pragma once

#include <string>

namespace afm::server {

class ConnectionProbe {
 public:
  ConnectionProbe() = default;
  // The connected socket whose local port is local_port and whose peer is remote_addr:remote_port.
  static ConnectionProbe find(int local_port, const std::string& remote_addr, int remote_port);

  // Ends the reading side of every connected socket of this process whose local port is
  // local_port (a server stopping): a worker waiting on an idle keep-alive connection wakes up
  // at once and closes it, instead of after the keep-alive timeout; a response being written
  // is not affected. Returns how many sockets it shut.
  static int end_reads(int local_port);

  bool found() const { return fd_ >= 0; }
  // True when the peer closed or reset the connection (pipelined bytes count as connected).
  bool peer_closed() const;

 private:
  explicit ConnectionProbe(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace afm::server
