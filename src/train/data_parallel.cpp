#include "train/data_parallel.h"

#include <cstdlib>

#include "base/error.h"

// Transports this build has: Gloo when its headers are installed (Debian libgloo-dev), NCCL
// when CMake found nccl.h next to a CUDA libtorch (AFM_WITH_NCCL).
#if __has_include(<gloo/context.h>) && __has_include(<torch/csrc/distributed/c10d/TCPStore.hpp>)
#define AFM_HAVE_GLOO 1
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef AFM_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#if defined(AFM_HAVE_GLOO) || defined(AFM_WITH_NCCL)
#define AFM_HAVE_PROCESS_GROUPS 1
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif

namespace afm::train {
namespace {

int env_int(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < lo || x > hi)
    throw_error(ErrorCode::kInvalidArgument, std::string("environment variable ") + name + "=" +
                                                 v + " is not an integer in " +
                                                 std::to_string(lo) + " .. " + std::to_string(hi));
  return static_cast<int>(x);
}

// Flattens the tensors into one contiguous buffer, applies `op`, and copies the results back.
template <typename Op>
void through_flat_buffer(const std::vector<torch::Tensor>& tensors, Op op) {
  if (tensors.empty()) return;
  std::vector<torch::Tensor> flat_parts;
  for (const torch::Tensor& t : tensors) flat_parts.push_back(t.reshape({-1}));
  torch::Tensor flat = torch::cat(flat_parts);
  op(flat);
  int64_t offset = 0;
  for (const torch::Tensor& t : tensors) {
    t.copy_(flat.slice(0, offset, offset + t.numel()).view_as(t));
    offset += t.numel();
  }
}

}  // namespace

RankLayout rank_layout_from_environment() {
  RankLayout l;
  l.world_size = env_int("WORLD_SIZE", 1, 1, 1 << 16);
  l.rank = env_int("RANK", 0, 0, l.world_size - 1);
  l.master_port = env_int("MASTER_PORT", 29500, 1, 65535);
  if (const char* addr = std::getenv("MASTER_ADDR"); addr != nullptr && *addr != '\0')
    l.master_addr = addr;
  return l;
}

#ifdef AFM_HAVE_PROCESS_GROUPS
// CUDA tensors go through NCCL where this build has it; everything else through Gloo.
struct DataParallel::Group {
#ifdef AFM_HAVE_GLOO
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#endif
#ifdef AFM_WITH_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif
  template <typename Fn>
  void run(torch::Tensor& t, Fn fn) {
    std::vector<torch::Tensor> v{t};
#ifdef AFM_WITH_NCCL
    if (t.is_cuda() && nccl) return fn(*nccl, v);
#endif
#ifdef AFM_HAVE_GLOO
    if (gloo) return fn(*gloo, v);
#endif
    throw_error(ErrorCode::kUnsupported,
                std::string("no transport for ") + (t.is_cuda() ? "CUDA" : "CPU") +
                    " tensors in this build (Gloo needs libgloo-dev; NCCL needs CUDA)");
  }
};

DataParallel::DataParallel(const RankLayout& layout) : layout_(layout) {
  if (layout_.world_size == 1) return;
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(layout_.master_port);
  store_options.isServer = layout_.rank == 0;
  store_options.numWorkers = static_cast<size_t>(layout_.world_size);
  auto store = c10::make_intrusive<c10d::TCPStore>(layout_.master_addr, store_options);
  group_ = std::make_unique<Group>();
#ifdef AFM_HAVE_GLOO
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->devices.push_back(
      c10d::ProcessGroupGloo::createDeviceForHostname(layout_.master_addr));
  group_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(
      c10::make_intrusive<c10d::PrefixStore>("gloo", store), layout_.rank, layout_.world_size,
      options);
#endif
#ifdef AFM_WITH_NCCL
  if (torch::cuda::is_available()) {
    group_->nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(
        c10::make_intrusive<c10d::PrefixStore>("nccl", store), layout_.rank,
        layout_.world_size);
  }
#endif
}

void DataParallel::all_reduce_sum(torch::Tensor& flat) {
  group_->run(flat, [](auto& group, std::vector<torch::Tensor>& v) { group.allreduce(v)->wait(); });
}

void DataParallel::broadcast(const std::vector<torch::Tensor>& tensors) {
  if (layout_.world_size == 1) return;
  torch::NoGradGuard no_grad;
  through_flat_buffer(tensors, [&](torch::Tensor& flat) {
    group_->run(flat, [](auto& group, std::vector<torch::Tensor>& v) {
      group.broadcast(v)->wait();  // root 0 by default
    });
  });
}
#else
struct DataParallel::Group {};

DataParallel::DataParallel(const RankLayout& layout) : layout_(layout) {
  if (layout_.world_size > 1)
    throw_error(ErrorCode::kUnsupported,
                "WORLD_SIZE=" + std::to_string(layout_.world_size) +
                    ": this afm-train has no process-group transport (Gloo needs libgloo-dev, "
                    "NCCL a CUDA libtorch): one process only");
}

void DataParallel::all_reduce_sum(torch::Tensor&) {}
void DataParallel::broadcast(const std::vector<torch::Tensor>&) {}
#endif

DataParallel::~DataParallel() {
#if defined(AFM_WITH_NCCL) && TORCH_VERSION_MAJOR >= 2
  if (group_ && group_->nccl) group_->nccl->shutdown();  // NCCL wants an orderly teardown
#endif
}

void DataParallel::average_gradients(const std::vector<torch::Tensor>& params) {
  if (layout_.world_size == 1) return;
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  through_flat_buffer(grads, [&](torch::Tensor& flat) {
    all_reduce_sum(flat);
    flat.div_(static_cast<double>(layout_.world_size));
  });
}

double DataParallel::average(double value, const torch::Device& device) {
  if (layout_.world_size == 1) return value;
  torch::Tensor t = torch::tensor({value}, torch::kFloat64).to(device);
  all_reduce_sum(t);
  return t.item<double>() / layout_.world_size;
}

}  // namespace afm::train
