// Collective communication between the processes of a data-parallel job:
// the world, named groups, and the four collectives the primitives
// all_reduce, all_gather, reduce_scatter and broadcast run
// (kernels/collective.cpp).
//
// A process is one of several when a launcher started it (`msl launch`,
// `mpirun`, which set OMPI_COMM_WORLD_SIZE or PMI_SIZE); init() then
// opens the MPI back end (comm_backend.h, a plug-in loaded with dlopen).
// A process started on its own is the one-member world MindSpore's
// single-device runs see: rank 0 of 1, every collective a copy, no MPI
// loaded.
//
// Groups have names, as in MindSpore: the world is "nccl_world_group" (and
// "hccl_world_group", "world", and "" for a primitive's default
// attribute); create_group(name, ranks) adds one. Every
// collective waits for its peers at most timeout_seconds() (MSL_COMM_TIMEOUT,
// default 300 s); past that it prints which rank waited in which
// collective and ends the whole job, so a rank that died or took another
// path never leaves the others hanging.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/errors.h"
#include "kernels/tensor.h"

namespace msl::kernels::comm {

// A communication failure (no back end, an MPI error, a group that does
// not exist): RuntimeError in MSL.
struct CommError : KernelError {
  using KernelError::KernelError;
};

enum class ReduceOp : uint8_t { Sum, Prod, Max, Min, Mean };
// "sum" "prod" "max" "min" "mean" (MindSpore's ReduceOp values, lower
// case); throws ValueError naming the valid ones.
ReduceOp reduce_op_from_name(const std::string& name);

// Starts communication: `backend` is "mpi", "nccl", "hccl" or "" (the
// launcher's). Under a launcher with more than one process, opens the MPI
// back end; otherwise the one-member world. Calling it again is a no-op.
void init(const std::string& backend);
bool initialized();
// Frees the groups and finalizes the back end (MPI_Finalize): the normal
// end of a job. The interpreter calls it at exit with the exit status;
// after a failure it skips MPI_Finalize (whose barrier would wait for
// ranks that are still computing) so the launcher ends the others.
void release();
void finish(int exit_status);

// The backend's name in use: "mpi", or "local" for the one-member world.
std::string backend_name();
int rank(const std::string& group);
int size(const std::string& group);
// This process's rank among the group's processes on this machine, and
// their number.
int local_rank(const std::string& group);
int local_size(const std::string& group);
void create_group(const std::string& name, const std::vector<int>& ranks);
void destroy_group(const std::string& name);
// The group's size for shape inference, 1 before init().
int inference_size(const std::string& group);

double timeout_seconds();

// Under an MPI launcher, sets the variables MindSpore's launchers give each
// process and its scripts read before init() (`int(os.environ["DEVICE_ID"])`):
// RANK_ID (world rank), RANK_SIZE, DEVICE_ID (rank on this machine), where
// they are not set already. msl calls it at start.
void export_launcher_environment();

// The collectives over contiguous host tensors of one dtype (`out` is
// allocated by the caller; shapes were checked by inference):
//   all_reduce      out = op over ranks of in (same shape)
//   all_gather      out = the ranks' in concatenated along axis 0
//   reduce_scatter  out = block `rank` (axis 0 split in size parts) of op over ranks of in
//   broadcast       out = in of rank `root`
void all_reduce(const Tensor& in, const Tensor& out, ReduceOp op, const std::string& group);
void all_gather(const Tensor& in, const Tensor& out, const std::string& group);
void reduce_scatter(const Tensor& in, const Tensor& out, ReduceOp op, const std::string& group);
void broadcast(const Tensor& in, const Tensor& out, int root, const std::string& group);

}  // namespace msl::kernels::comm
