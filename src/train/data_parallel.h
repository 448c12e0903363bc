// Data parallelism over processes through torch.distributed's C++ process groups (c10d):
// every rank holds the whole model, draws its own micro-batches, and gradients are averaged
// with one all-reduce per step before clipping and the optimiser step, so all ranks keep
// identical weights. The transport is NCCL for CUDA tensors when the build has it (libtorch
// with CUDA and nccl.h found), otherwise Gloo (CPU tensors, and CUDA tensors staged through
// the host); builds without Gloo's headers support one process only.
//
// The rank layout comes from the environment, as torchrun sets it: RANK, WORLD_SIZE,
// MASTER_ADDR (default 127.0.0.1), MASTER_PORT (default 29500). `afm-train pretrain --nproc N`
// starts N local ranks itself.
//
// Contract: with world size 1 every call is a no-op. Collective calls must be made by every
// rank in the same order; a rank that fails ends the job (the launcher stops the others).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace afm::train {

struct RankLayout {
  int rank = 0, world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

// Reads RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT; throws afm::Error(kInvalidArgument)
// naming a variable that is malformed or out of range.
RankLayout rank_layout_from_environment();

class DataParallel {
 public:
  explicit DataParallel(const RankLayout& layout);
  ~DataParallel();

  int rank() const { return layout_.rank; }
  int world_size() const { return layout_.world_size; }
  bool is_main() const { return layout_.rank == 0; }

  // Gradients of `params` become their mean over ranks (one flat all-reduce).
  void average_gradients(const std::vector<torch::Tensor>& params);
  // The mean of a scalar over ranks (communicated as a tensor on `device`).
  double average(double value, const torch::Device& device);
  // Rank 0's values of `tensors` on every rank.
  void broadcast(const std::vector<torch::Tensor>& tensors);


 private:
  struct Group;
  void all_reduce_sum(torch::Tensor& flat);

  RankLayout layout_;
  std::unique_ptr<Group> group_;
};

}  // namespace afm::train
