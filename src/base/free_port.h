// A loopback TCP port nothing listens on, for servers a process starts for itself (a Redis
// broker, a rendezvous store) and for tests. The port is bound, read and released, so another
// process may take it before the caller binds it: callers retry or fail loudly.
// Errors: Error(kIo) when no port can be had.
#pragma once

namespace afm {

int free_loopback_port();

}  // namespace afm
