// The collectives on the GPU through NCCL (libnccl.so.2, loaded with dlopen
// on the first GPU collective): all_reduce, all_gather, reduce_scatter and
// broadcast of device tensors, queued on the device's compute stream like
// every other kernel, so they order with the kernels around them and the
// host waits only where it reads a result.
//
// One NCCL communicator per group, made on first use: rank 0 of the group
// makes the unique id and the group's MPI back end broadcasts it
// (kernels/comm/communicator.h); a one-member world needs no MPI. So
// `mpirun -n N` with one GPU per rank (device_id = DEVICE_ID, the rank on
// the machine) runs NCCL between the GPUs, and a single process runs the
// same kernels on a world of one.
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "kernels/comm/communicator.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/device_cuda.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/toolkit_library.h"
#include "kernels/primitives.h"

#if __has_include(<nccl.h>)
#include <nccl.h>
#define MSL_HAVE_NCCL 1
#endif

namespace msl::kernels::cuda {

namespace {

#ifdef MSL_HAVE_NCCL

// The NCCL functions MSL calls, from the library found at run time.
struct Nccl {
  ncclResult_t (*get_unique_id)(ncclUniqueId*);
  ncclResult_t (*comm_init_rank)(ncclComm_t*, int, ncclUniqueId, int);
  ncclResult_t (*all_reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*all_gather)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*reduce_scatter)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                 cudaStream_t);
  ncclResult_t (*broadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  const char* (*error_string)(ncclResult_t);
};

const Nccl& nccl() {
  static const Nccl lib = [] {
    void* h = open_toolkit_library("libnccl.so.2");
    if (h == nullptr)
      throw comm::CommError(
          "GPU collectives need NCCL (libnccl.so.2), which is not on the library path, in the CUDA toolkit or in "
          "$CUDA_HOME/lib64");
    Nccl n{};
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (!fn) throw comm::CommError(fmt::format("the NCCL library has no {}", name));
    };
    sym(n.get_unique_id, "ncclGetUniqueId");
    sym(n.comm_init_rank, "ncclCommInitRank");
    sym(n.all_reduce, "ncclAllReduce");
    sym(n.all_gather, "ncclAllGather");
    sym(n.reduce_scatter, "ncclReduceScatter");
    sym(n.broadcast, "ncclBroadcast");
    sym(n.error_string, "ncclGetErrorString");
    return n;
  }();
  return lib;
}

void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw comm::CommError(fmt::format("{}: NCCL error: {}", what, nccl().error_string(r)));
}

// The group's communicator on `dev`, made on first use (every rank of the
// group reaches its first GPU collective in the same order, as with MPI).
ncclComm_t communicator(CudaDevice& dev, const std::string& group) {
  static std::mutex mu;
  static std::map<std::pair<int, std::string>, ncclComm_t> comms;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(dev.info().ordinal, group);
  if (auto it = comms.find(key); it != comms.end()) return it->second;
  int rank = comm::rank(group), size = comm::size(group);
  ncclUniqueId id{};
  if (rank == 0) check(nccl().get_unique_id(&id), "ncclGetUniqueId");
  if (size > 1) {
    Tensor bytes(DType::UInt8, Dims{static_cast<int64_t>(sizeof id)});
    std::memcpy(bytes.raw(), &id, sizeof id);
    comm::broadcast(bytes, bytes, 0, group);
    std::memcpy(&id, bytes.raw(), sizeof id);
  }
  dev.make_current();
  ncclComm_t c = nullptr;
  check(nccl().comm_init_rank(&c, size, id, rank), "ncclCommInitRank");
  comms.emplace(key, c);
  return c;
}

ncclDataType_t nccl_type(DType d, const char* prim) {
  switch (d) {
    case DType::Int8: return ncclInt8;
    case DType::UInt8:
    case DType::Bool: return ncclUint8;
    case DType::Int32: return ncclInt32;
    case DType::Int64: return ncclInt64;
    case DType::Float16: return ncclFloat16;
    case DType::BFloat16: return ncclBfloat16;
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
  }
  throw DTypeError(fmt::format("{}: unsupported dtype {}", prim, dtype_name(d)));
}

ncclRedOp_t nccl_op(const Attrs& attrs) {
  switch (comm::reduce_op_from_name(attrs.get_str("op", "sum"))) {
    case comm::ReduceOp::Prod: return ncclProd;
    case comm::ReduceOp::Max: return ncclMax;
    case comm::ReduceOp::Min: return ncclMin;
    case comm::ReduceOp::Mean: return ncclAvg;
    default: return ncclSum;
  }
}

Tensor packed(const Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

cudaStream_t stream_of(CudaDevice& dev) { return reinterpret_cast<cudaStream_t>(dev.stream()); }

void cuda_all_reduce(const KernelArgs& a) {
  Tensor x = packed(a.in[0]);
  CudaDevice& dev = device_of(x);
  if (x.numel() == 0) return;
  check(nccl().all_reduce(x.raw(), a.out[0].raw(), static_cast<size_t>(x.numel()), nccl_type(x.dtype(), "all_reduce"),
                          nccl_op(a.attrs), communicator(dev, a.attrs.get_str("group")), stream_of(dev)),
        "all_reduce");
}

void cuda_all_gather(const KernelArgs& a) {
  Tensor x = packed(a.in[0]);
  CudaDevice& dev = device_of(x);
  std::string group = a.attrs.get_str("group");
  if (a.out[0].dim(0) != x.dim(0) * comm::size(group))
    throw ValueError(fmt::format("all_gather: inferred for another group size than '{}' has", group));
  check(nccl().all_gather(x.raw(), a.out[0].raw(), static_cast<size_t>(x.numel()), nccl_type(x.dtype(), "all_gather"),
                          communicator(dev, group), stream_of(dev)),
        "all_gather");
}

void cuda_reduce_scatter(const KernelArgs& a) {
  Tensor x = packed(a.in[0]);
  CudaDevice& dev = device_of(x);
  std::string group = a.attrs.get_str("group");
  if (a.out[0].dim(0) * comm::size(group) != x.dim(0))
    throw ValueError(fmt::format("reduce_scatter: inferred for another group size than '{}' has", group));
  check(nccl().reduce_scatter(x.raw(), a.out[0].raw(), static_cast<size_t>(a.out[0].numel()),
                              nccl_type(x.dtype(), "reduce_scatter"), nccl_op(a.attrs), communicator(dev, group),
                              stream_of(dev)),
        "reduce_scatter");
}

void cuda_broadcast(const KernelArgs& a) {
  Tensor x = packed(a.in[0]);
  CudaDevice& dev = device_of(x);
  std::string group = a.attrs.get_str("group");
  int root = static_cast<int>(a.attrs.get_int("root"));
  if (root >= comm::size(group))
    throw ValueError(fmt::format("broadcast: root_rank {} is not in group '{}' of {} processes", root, group,
                                 comm::size(group)));
  check(nccl().broadcast(x.raw(), a.out[0].raw(), static_cast<size_t>(x.numel()), nccl_type(x.dtype(), "broadcast"),
                         root, communicator(dev, group), stream_of(dev)),
        "broadcast");
}

#else  // a toolkit without NCCL's header

[[noreturn]] void no_nccl(const KernelArgs& a) {
  throw comm::CommError(fmt::format("{}: MSL was built without NCCL (nccl.h was not found with the CUDA toolkit)",
                                    prim_name(a.prim)));
}
void cuda_all_reduce(const KernelArgs& a) { no_nccl(a); }
void cuda_all_gather(const KernelArgs& a) { no_nccl(a); }
void cuda_reduce_scatter(const KernelArgs& a) { no_nccl(a); }
void cuda_broadcast(const KernelArgs& a) { no_nccl(a); }

#endif

}  // namespace

void register_collective_kernels() {
  set_device_kernel(Prim::all_reduce, DeviceType::CUDA, &cuda_all_reduce);
  set_device_kernel(Prim::all_gather, DeviceType::CUDA, &cuda_all_gather);
  set_device_kernel(Prim::reduce_scatter, DeviceType::CUDA, &cuda_reduce_scatter);
  set_device_kernel(Prim::broadcast, DeviceType::CUDA, &cuda_broadcast);
}

}  // namespace msl::kernels::cuda
