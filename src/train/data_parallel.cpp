#include "train/data_parallel.h"

#include <cstdlib>

#include "base/error.h"

#if __has_include(<gloo/context.h>) && __has_include(<torch/csrc/distributed/c10d/TCPStore.hpp>)
#define AFM_HAVE_GLOO 1
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
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

#ifdef AFM_HAVE_GLOO
struct DataParallel::Group {
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
};

bool DataParallel::transport_available() { return true; }

DataParallel::DataParallel(const RankLayout& layout) : layout_(layout) {
  if (layout_.world_size == 1) return;
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(layout_.master_port);
  store_options.isServer = layout_.rank == 0;
  store_options.numWorkers = static_cast<size_t>(layout_.world_size);
  auto store = c10::make_intrusive<c10d::TCPStore>(layout_.master_addr, store_options);
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->devices.push_back(
      c10d::ProcessGroupGloo::createDeviceForHostname(layout_.master_addr));
  group_ = std::make_unique<Group>();
  group_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(store, layout_.rank,
                                                             layout_.world_size, options);
}

void DataParallel::all_reduce_sum(torch::Tensor& flat) {
  std::vector<torch::Tensor> tensors{flat};
  group_->gloo->allreduce(tensors)->wait();
}

void DataParallel::broadcast(const std::vector<torch::Tensor>& tensors) {
  if (layout_.world_size == 1) return;
  torch::NoGradGuard no_grad;
  through_flat_buffer(tensors, [&](torch::Tensor& flat) {
    std::vector<torch::Tensor> v{flat};
    group_->gloo->broadcast(v)->wait();  // root 0 by default
  });
}
#else
struct DataParallel::Group {};

bool DataParallel::transport_available() { return false; }

DataParallel::DataParallel(const RankLayout& layout) : layout_(layout) {
  if (layout_.world_size > 1)
    throw_error(ErrorCode::kUnsupported,
                "WORLD_SIZE=" + std::to_string(layout_.world_size) +
                    ": this afm-train was built without Gloo (libgloo-dev), one process only");
}

void DataParallel::all_reduce_sum(torch::Tensor&) {}
void DataParallel::broadcast(const std::vector<torch::Tensor>&) {}
#endif

DataParallel::~DataParallel() = default;

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

double DataParallel::average(double value) {
  if (layout_.world_size == 1) return value;
  torch::Tensor t = torch::tensor({value}, torch::kFloat64);
  all_reduce_sum(t);
  return t.item<double>() / layout_.world_size;
}

}  // namespace afm::train
