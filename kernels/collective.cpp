// The collective primitives (all_reduce, all_gather, reduce_scatter,
// broadcast): inference and CPU kernels over kernels/comm/communicator.h.
// The attribute `group` names a communication group ("", the default, is
// the world: kernels/comm/communicator.h);
// inference needs the group's size, so an all_gather traced before init()
// is inferred as a one-member world's and the kernel then refuses it.
#include <fmt/format.h>

#include "kernels/comm/communicator.h"
#include "kernels/primitives.h"

namespace msl::kernels {

namespace {

comm::ReduceOp reduce_attr(const char* prim, const TensorSpec& x, const Attrs& attrs) {
  comm::ReduceOp op = comm::reduce_op_from_name(attrs.get_str("op", "sum"));
  switch (x.dtype) {
    case DType::Int32:
    case DType::Int64:
      if (op == comm::ReduceOp::Mean)
        throw DTypeError(fmt::format("{}: op 'mean' needs a floating-point tensor, got {}", prim, dtype_name(x.dtype)));
      break;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32:
    case DType::Float64: break;
    default:
      throw DTypeError(fmt::format("{}: unsupported dtype {} (expected int32, int64 or a float type)", prim,
                                   dtype_name(x.dtype)));
  }
  return op;
}

// The tensor a collective reads: contiguous, as the back end takes one
// buffer.
Tensor packed(const Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

}  // namespace

void infer_all_reduce(const InferArgs& a) {
  reduce_attr("all_reduce", a.in[0], a.attrs);
  a.out[0] = {a.in[0].dtype, a.in[0].shape};
}

void cpu_all_reduce(const KernelArgs& a) {
  comm::all_reduce(packed(a.in[0]), a.out[0], reduce_attr("all_reduce", a.in[0].spec(), a.attrs),
                   a.attrs.get_str("group"));
}

void infer_all_gather(const InferArgs& a) {
  const TensorSpec& x = a.in[0];
  if (x.shape.size() == 0) throw ShapeError("all_gather: the input must have at least one dimension");
  Dims shape = x.shape;
  int64_t n = 0;
  if (__builtin_mul_overflow(shape[0], static_cast<int64_t>(comm::inference_size(a.attrs.get_str("group"))), &n) ||
      n > (int64_t{1} << 40))
    throw ShapeError(fmt::format("all_gather: gathering {} from every process is too large", x.shape.str()));
  shape[0] = n;
  a.out[0] = {x.dtype, shape};
}

void cpu_all_gather(const KernelArgs& a) {
  std::string group = a.attrs.get_str("group");
  int n = comm::size(group);
  if (a.out[0].dim(0) != a.in[0].dim(0) * n)
    throw ValueError(fmt::format("all_gather: inferred for a group of {} processes, but '{}' has {} (call "
                                 "msl.communication.init() before compiling the graph)",
                                 a.out[0].dim(0) / std::max<int64_t>(1, a.in[0].dim(0)), group, n));
  comm::all_gather(packed(a.in[0]), a.out[0], group);
}

void infer_reduce_scatter(const InferArgs& a) {
  const TensorSpec& x = a.in[0];
  reduce_attr("reduce_scatter", x, a.attrs);
  if (x.shape.size() == 0) throw ShapeError("reduce_scatter: the input must have at least one dimension");
  int n = comm::inference_size(a.attrs.get_str("group"));
  if (x.shape[0] % n != 0)
    throw ShapeError(fmt::format("reduce_scatter: the first dimension of {} is not divisible by the group's {} "
                                 "processes",
                                 x.shape.str(), n));
  Dims shape = x.shape;
  shape[0] /= n;
  a.out[0] = {x.dtype, shape};
}

void cpu_reduce_scatter(const KernelArgs& a) {
  std::string group = a.attrs.get_str("group");
  if (a.out[0].dim(0) * comm::size(group) != a.in[0].dim(0))
    throw ValueError(fmt::format("reduce_scatter: inferred for another group size than '{}' has (call "
                                 "msl.communication.init() before compiling the graph)",
                                 group));
  comm::reduce_scatter(packed(a.in[0]), a.out[0], reduce_attr("reduce_scatter", a.in[0].spec(), a.attrs), group);
}

void infer_broadcast(const InferArgs& a) {
  if (a.attrs.get_int("root") < 0)
    throw ValueError(fmt::format("broadcast: root_rank must be >= 0, got {}", a.attrs.get_int("root")));
  a.out[0] = {a.in[0].dtype, a.in[0].shape};
}

void cpu_broadcast(const KernelArgs& a) {
  comm::broadcast(packed(a.in[0]), a.out[0], static_cast<int>(a.attrs.get_int("root")), a.attrs.get_str("group"));
}

}  // namespace msl::kernels
