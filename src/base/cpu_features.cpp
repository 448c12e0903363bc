#include "base/cpu_features.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace afm {
namespace {

#if defined(__x86_64__)
struct Regs {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Regs cpuid(unsigned leaf, unsigned subleaf) {
  Regs r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

unsigned long long xgetbv0() {
  unsigned eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}

constexpr int kArchGetXcompPerm = 0x1022;
constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureXtiledata = 18;

bool amx_permission_granted() {
  unsigned long bitmask = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &bitmask) != 0) return false;
  return (bitmask & (1ul << kXfeatureXtiledata)) != 0;
}
#endif

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__)
  const unsigned max_leaf = cpuid(0, 0).eax;
  if (max_leaf < 7) return f;
  const Regs l1 = cpuid(1, 0);
  const Regs l7 = cpuid(7, 0);
  const Regs l7_1 = cpuid(7, 1);
  const bool osxsave = (l1.ecx >> 27) & 1;
  if (!osxsave) return f;
  const unsigned long long xcr0 = xgetbv0();
  const bool ymm_os = (xcr0 & 0x6) == 0x6;
  const bool zmm_os = (xcr0 & 0xe6) == 0xe6;
  const bool fma = (l1.ecx >> 12) & 1, f16c = (l1.ecx >> 29) & 1;
  f.avx2 = ymm_os && fma && f16c && ((l7.ebx >> 5) & 1);
  const bool f512 = (l7.ebx >> 16) & 1, dq = (l7.ebx >> 17) & 1, bw = (l7.ebx >> 30) & 1,
             vl = (l7.ebx >> 31) & 1;
  f.avx512 = f.avx2 && zmm_os && f512 && dq && bw && vl;
  f.avx512_vnni = f.avx512 && ((l7.ecx >> 11) & 1);
  f.avx512_bf16 = f.avx512 && ((l7_1.eax >> 5) & 1);
  f.avx512_fp16 = f.avx512 && ((l7.edx >> 23) & 1);
  f.amx_tile = ((l7.edx >> 24) & 1) && ((l7.edx >> 25) & 1) && ((l7.edx >> 22) & 1);
  f.amx_usable = f.amx_tile && amx_permission_granted();
#endif
  return f;
}

void apply_cap(CpuFeatures& f) {
  const char* cap = std::getenv("AFM_CPU");
  if (cap == nullptr) return;
  if (std::strcmp(cap, "scalar") == 0) {
    f = CpuFeatures{};
  } else if (std::strcmp(cap, "avx2") == 0) {
    const bool avx2 = f.avx2;
    f = CpuFeatures{};
    f.avx2 = avx2;
  }
}

}  // namespace

bool request_amx_permission() {
#if defined(__x86_64__)
  static const bool granted = [] {
    const Regs l7 = cpuid(7, 0);
    if (!((l7.edx >> 24) & 1)) return false;
    if (amx_permission_granted()) return true;
    if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
    return amx_permission_granted();
  }();
  return granted;
#else
  return false;
#endif
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    CpuFeatures f = detect();
    apply_cap(f);
    return f;
  }();
  return features;
}

std::string describe(const CpuFeatures& f) {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(f.avx2, "avx2");
  add(f.avx512, "avx512");
  add(f.avx512_vnni, "vnni");
  add(f.avx512_bf16, "avx512_bf16");
  add(f.avx512_fp16, "avx512_fp16");
  add(f.amx_usable, "amx");
  return s.empty() ? "scalar" : s;
}

}  // namespace afm
