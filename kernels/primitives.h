// The primitive registry: the one closed list of operations that everything
// in msl.ops and msl.nn composes from.
//
// Each entry of MSL_PRIMITIVES defines, once:
//   name       the primitive's name (also its IR name and MSL functional name)
//   inputs     number of tensor inputs (-1: variadic, e.g. concat)
//   outputs    number of tensor outputs
//   kind       Compute: outputs are new contiguous tensors the kernel fills;
//              View: the kernel makes outputs that alias input 0 (no copy);
//              InPlace: the kernel writes into input 0, which is output 0
//   attrs      the attribute names and kinds, "name:kind" separated by spaces
//              (kinds: bool int float ints str dtype)
// and, by naming convention, two functions of the group file that implements
// it (elementwise.cpp, reduce.cpp, movement.cpp, ...):
//   void infer_<name>(const InferArgs&)   dtype/shape inference; throws
//                                         ShapeError/DTypeError/ValueError
//   void cpu_<name>(const KernelArgs&)    the CPU kernel
// Later layers add the gradient rule (stdlib/, by name), the GPU kernel and
// the codegen rule against the same entry.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "kernels/attrs.h"
#include "kernels/tensor.h"

namespace msl::kernels {

enum class PrimKind : uint8_t { Compute, View, InPlace };

// clang-format off
#define MSL_PRIMITIVES(X) \
  /* elementwise unary */ \
  X(neg,          1, 1, Compute, "") \
  X(abs,          1, 1, Compute, "") \
  X(sign,         1, 1, Compute, "") \
  X(exp,          1, 1, Compute, "") \
  X(log,          1, 1, Compute, "") \
  X(sqrt,         1, 1, Compute, "") \
  X(rsqrt,        1, 1, Compute, "") \
  X(reciprocal,   1, 1, Compute, "") \
  X(sin,          1, 1, Compute, "") \
  X(cos,          1, 1, Compute, "") \
  X(tanh,         1, 1, Compute, "") \
  X(sigmoid,      1, 1, Compute, "") \
  X(relu,         1, 1, Compute, "") \
  X(relu_grad,    2, 1, Compute, "") \
  X(erf,          1, 1, Compute, "") \
  X(floor,        1, 1, Compute, "") \
  X(logical_not,  1, 1, Compute, "") \
  X(cast,         1, 1, Compute, "dtype:dtype") \
  /* elementwise binary, broadcasting */ \
  X(add,          2, 1, Compute, "") \
  X(sub,          2, 1, Compute, "") \
  X(mul,          2, 1, Compute, "") \
  X(div,          2, 1, Compute, "") \
  X(floordiv,     2, 1, Compute, "") \
  X(mod,          2, 1, Compute, "") \
  X(pow,          2, 1, Compute, "") \
  X(maximum,      2, 1, Compute, "") \
  X(minimum,      2, 1, Compute, "") \
  X(equal,        2, 1, Compute, "") \
  X(not_equal,    2, 1, Compute, "") \
  X(less,         2, 1, Compute, "") \
  X(less_equal,   2, 1, Compute, "") \
  X(greater,      2, 1, Compute, "") \
  X(greater_equal,2, 1, Compute, "") \
  X(logical_and,  2, 1, Compute, "") \
  X(logical_or,   2, 1, Compute, "") \
  X(select,       3, 1, Compute, "") \
  /* reductions */ \
  X(reduce_sum,   1, 1, Compute, "axes:ints keep_dims:bool") \
  X(reduce_max,   1, 1, Compute, "axes:ints keep_dims:bool") \
  X(reduce_min,   1, 1, Compute, "axes:ints keep_dims:bool") \
  X(argmax,       1, 1, Compute, "axis:int keep_dims:bool") \
  X(argmin,       1, 1, Compute, "axis:int keep_dims:bool") \
  /* movement */ \
  X(reshape,      1, 1, View,    "shape:ints") \
  X(transpose,    1, 1, View,    "perm:ints") \
  X(broadcast_to, 1, 1, View,    "shape:ints") \
  X(strided_slice,1, 1, View,    "begin:ints end:ints strides:ints") \
  X(concat,      -1, 1, Compute, "axis:int") \
  X(pad,          1, 1, Compute, "paddings:ints value:float") \
  X(gather,       2, 1, Compute, "axis:int") \
  X(scatter_add,  3, 1, Compute, "axis:int") \
  X(one_hot,      1, 1, Compute, "depth:int on_value:float off_value:float axis:int dtype:dtype") \
  /* channel-blocked activations (blocked_layout.h; made by graph mode, no gradient) */ \
  X(to_blocked,   1, 1, Compute, "block:int") \
  X(from_blocked, 1, 1, Compute, "") \
  /* contractions (oneDNN) */ \
  X(matmul,       2, 1, Compute, "transpose_a:bool transpose_b:bool") \
  X(conv2d,       2, 1, Compute, "stride:ints padding:ints dilation:ints groups:int pad_mode:str layout:str") \
  X(conv2d_backprop_input,  2, 1, Compute, "input_shape:ints stride:ints padding:ints dilation:ints groups:int pad_mode:str layout:str") \
  X(conv2d_backprop_filter, 2, 1, Compute, "filter_shape:ints stride:ints padding:ints dilation:ints groups:int pad_mode:str layout:str") \
  X(max_pool2d,   1, 1, Compute, "kernel_size:ints stride:ints padding:ints pad_mode:str layout:str") \
  X(max_pool2d_grad, 2, 1, Compute, "kernel_size:ints stride:ints padding:ints pad_mode:str layout:str") \
  X(avg_pool2d,   1, 1, Compute, "kernel_size:ints stride:ints padding:ints pad_mode:str count_include_pad:bool") \
  X(avg_pool2d_grad, 1, 1, Compute, "input_shape:ints kernel_size:ints stride:ints padding:ints pad_mode:str count_include_pad:bool") \
  X(batch_norm,   5, 3, Compute, "training:bool epsilon:float layout:str") \
  X(batch_norm_grad, 5, 3, Compute, "epsilon:float layout:str") \
  /* fused contractions: made by graph mode's epilogue fusion (no gradient) */ \
  X(matmul_bias,  3, 1, Compute, "transpose_a:bool transpose_b:bool activation:str") \
  X(conv2d_bias,  3, 1, Compute, "stride:ints padding:ints dilation:ints groups:int pad_mode:str activation:str layout:str") \
  X(conv2d_bn,    6, 1, Compute, "stride:ints padding:ints dilation:ints groups:int pad_mode:str epsilon:float activation:str layout:str") \
  X(conv2d_bn_add,7, 1, Compute, "stride:ints padding:ints dilation:ints groups:int pad_mode:str epsilon:float activation:str layout:str") \
  /* normalization and losses */ \
  X(softmax,      1, 1, Compute, "axis:int") \
  X(log_softmax,  1, 1, Compute, "axis:int") \
  X(softmax_grad, 2, 1, Compute, "axis:int") \
  X(log_softmax_grad, 2, 1, Compute, "axis:int") \
  X(softmax_cross_entropy, 2, 2, Compute, "") \
  X(sparse_softmax_cross_entropy, 2, 2, Compute, "") \
  /* random (Philox counter, see philox.h) */ \
  X(dropout,      1, 2, Compute, "keep_prob:float seed:int offset:int") \
  X(random_uniform, 0, 1, Compute, "shape:ints dtype:dtype seed:int offset:int") \
  X(random_normal,  0, 1, Compute, "shape:ints dtype:dtype seed:int offset:int") \
  /* effects: optimizer updates (also write input 1), assign */ \
  X(apply_momentum, 5, 1, InPlace, "use_nesterov:bool gradient_scale:float weight_decay:float") \
  X(apply_adam,   8, 1, InPlace, "gradient_scale:float weight_decay:float decoupled:bool") \
  X(assign,       2, 1, InPlace, "")
// clang-format on

enum class Prim : uint16_t {
#define MSL_X(name, ni, no, kind, attrs) name,
  MSL_PRIMITIVES(MSL_X)
#undef MSL_X
};

#define MSL_X(name, ni, no, kind, attrs) +1
constexpr int kNumPrims = 0 MSL_PRIMITIVES(MSL_X);
#undef MSL_X

struct InferArgs {
  Prim prim;
  std::span<const TensorSpec> in;
  const Attrs& attrs;
  std::span<TensorSpec> out;  // sized to the entry's output count
};

struct KernelArgs {
  Prim prim;
  std::span<const Tensor> in;
  const Attrs& attrs;
  std::span<Tensor> out;  // Compute: allocated to the inferred specs; View: to be set
};

using InferFn = void (*)(const InferArgs&);
using KernelFn = void (*)(const KernelArgs&);

struct AttrSpec {
  std::string name;
  std::string kind;  // bool int float ints str dtype
};

struct PrimDef {
  const char* name;
  int inputs;  // -1: variadic
  int outputs;
  PrimKind kind;
  const char* attr_decl;
  InferFn infer;
  KernelFn cpu;
};

const PrimDef& prim_def(Prim p);
inline const char* prim_name(Prim p) { return prim_def(p).name; }
bool find_prim(std::string_view name, Prim& out);
// The parsed attribute declarations of a primitive.
const std::vector<AttrSpec>& prim_attrs(Prim p);

// Infers the output specs of `p` (checking arity and attribute names first).
void infer(Prim p, std::span<const TensorSpec> in, const Attrs& attrs, std::vector<TensorSpec>& out);

// Runs `p` eagerly on the CPU: infers, allocates outputs, runs the kernel.
// Nothing is computed or allocated when inference fails.
// `out` receives the outputs (resized to the output count).
void execute(Prim p, std::span<const Tensor> in, const Attrs& attrs, std::vector<Tensor>& out);
// Single-output convenience, the hot path of eager dispatch.
Tensor execute1(Prim p, std::span<const Tensor> in, const Attrs& attrs = {});

// Declarations of every infer_/cpu_ function named by the list.
#define MSL_X(name, ni, no, kind, attrs) \
  void infer_##name(const InferArgs&);   \
  void cpu_##name(const KernelArgs&);
MSL_PRIMITIVES(MSL_X)
#undef MSL_X

}  // namespace msl::kernels
