#include "base/process_stats.h"

#include <cstdio>
#include <cstring>

namespace afm {
namespace {

size_t status_kib(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  size_t kib = 0;
  const size_t len = std::strlen(field);
  while (std::fgets(line, sizeof(line), f)) {
    if (std::strncmp(line, field, len) == 0 && line[len] == ':') {
      std::sscanf(line + len + 1, "%zu", &kib);
      break;
    }
  }
  std::fclose(f);
  return kib;
}

}  // namespace

size_t resident_set_bytes() { return status_kib("VmRSS") * 1024; }
size_t peak_resident_set_bytes() { return status_kib("VmHWM") * 1024; }

}  // namespace afm
