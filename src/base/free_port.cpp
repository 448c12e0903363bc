#include "base/free_port.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.h"

namespace afm {

int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    throw_error(ErrorCode::kIo, "cannot find a free loopback TCP port");
  }
  const int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

}  // namespace afm
