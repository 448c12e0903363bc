#include "server/connection_probe.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace afm::server {
namespace {

// "address", port of a socket address; false for families other than IPv4 / IPv6.
bool describe(const sockaddr_storage& a, std::string& host, int& port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &in.sin_addr, buf, sizeof buf);
    port = ntohs(in.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &in6.sin6_addr, buf, sizeof buf);
    port = ntohs(in6.sin6_port);
  } else {
    return false;
  }
  host = buf;
  return true;
}

struct Endpoints {
  std::string local_host, peer_host;
  int local_port = -1, peer_port = -1;
};

// The addresses of a connected IPv4 / IPv6 socket; false for anything else.
bool connected_endpoints(int fd, Endpoints& out) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
  sockaddr_storage peer{}, local{};
  socklen_t n = sizeof peer;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &n) != 0) return false;
  n = sizeof local;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &n) != 0) return false;
  return describe(peer, out.peer_host, out.peer_port) &&
         describe(local, out.local_host, out.local_port);
}

// Calls visit(fd, endpoints) for each connected socket of this process until it returns false.
template <class Visit>
void for_each_connection(Visit visit) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const int fd = std::atoi(e->d_name);
    Endpoints ends;
    if (fd != dirfd(dir) && connected_endpoints(fd, ends) && !visit(fd, ends)) break;
  }
  closedir(dir);
}

}  // namespace

ConnectionProbe ConnectionProbe::find(int local_port, const std::string& remote_addr,
                                      int remote_port) {
  int found = -1;
  for_each_connection([&](int fd, const Endpoints& e) {
    if (e.local_port != local_port || e.peer_port != remote_port || e.peer_host != remote_addr) {
      return true;
    }
    found = fd;
    return false;
  });
  return ConnectionProbe(found);
}

int ConnectionProbe::end_reads(int local_port) {
  int shut = 0;
  for_each_connection([&](int fd, const Endpoints& e) {
    if (e.local_port == local_port && shutdown(fd, SHUT_RD) == 0) ++shut;
    return true;
  });
  return shut;
}

bool ConnectionProbe::peer_closed() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) return true;
  if (!(p.revents & POLLIN)) return false;
  char byte;
  const ssize_t n = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return true;  // orderly shutdown
  return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

}  // namespace afm::server
