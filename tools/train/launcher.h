// `afm-train pretrain --nproc N`: starts N copies of this command on this machine as the ranks
// of one data-parallel job (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set as torchrun sets
// them), waits for all, and stops the others as soon as one fails.
#pragma once

namespace afm::train {

// Returns the job's exit status: 0 when every rank succeeded, else the first failure's.
int launch_local_ranks(int nproc, char** argv);

}  // namespace afm::train
