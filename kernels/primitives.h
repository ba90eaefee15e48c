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
//   trait      what passes may assume (PrimTrait): None; Elementwise (one
//              output element per element of its broadcast inputs, all of
//              one dtype, which the output keeps: graph mode runs it on
//              any layout); Random (draws from the Philox stream: never
//              merged, folded or traced); Collective (exchanges data with
//              the other processes of the job, kernels/comm/: never
//              merged or folded, and every process runs the same ones in
//              the same order)
// and, by naming convention, two functions of the group file that implements
// it (elementwise.cpp, reduce.cpp, movement.cpp, ...):
//   void infer_<name>(const InferArgs&)   dtype/shape inference; throws
//                                         ShapeError/DTypeError/ValueError
//   void cpu_<name>(const KernelArgs&)    the CPU kernel
// Later layers add the gradient rule (stdlib/, by name), the GPU kernel and
// the codegen rule against the same entry.
//
// Devices: a primitive has a kernel slot per DeviceType (PrimDef::kernels),
// chosen by its inputs' device: CPU holds cpu_<name>; CUDA is empty until
// the GPU back end fills it; Debug (device_debug.h) reuses the CPU kernel,
// which the dispatcher runs inside a DebugAccess scope. All tensor inputs
// must be on one device, except that a 0-d CPU tensor (a host scalar) goes
// with any device's tensors: a kernel reads such an input on the host
// (a GPU kernel takes it as a launch argument). Outputs are allocated on the
// inputs' device; a primitive without tensor inputs (random_uniform) or with
// host scalars only runs on the default device.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "kernels/attrs.h"
#include "kernels/tensor.h"

namespace msl::kernels {

enum class PrimKind : uint8_t { Compute, View, InPlace };
enum class PrimTrait : uint8_t { None, Elementwise, Random, Collective };

// clang-format off
#define MSL_PRIMITIVES(X) \
  /* elementwise unary */ \
  X(neg,          1, 1, Compute, "", Elementwise) \
  X(abs,          1, 1, Compute, "", Elementwise) \
  X(sign,         1, 1, Compute, "", Elementwise) \
  X(exp,          1, 1, Compute, "", Elementwise) \
  X(log,          1, 1, Compute, "", Elementwise) \
  X(sqrt,         1, 1, Compute, "", Elementwise) \
  X(rsqrt,        1, 1, Compute, "", Elementwise) \
  X(reciprocal,   1, 1, Compute, "", Elementwise) \
  X(sin,          1, 1, Compute, "", Elementwise) \
  X(cos,          1, 1, Compute, "", Elementwise) \
  X(tanh,         1, 1, Compute, "", Elementwise) \
  X(sigmoid,      1, 1, Compute, "", Elementwise) \
  X(relu,         1, 1, Compute, "", Elementwise) \
  X(relu_grad,    2, 1, Compute, "", Elementwise) \
  X(erf,          1, 1, Compute, "", Elementwise) \
  X(floor,        1, 1, Compute, "", Elementwise) \
  X(logical_not,  1, 1, Compute, "", None) \
  X(cast,         1, 1, Compute, "dtype:dtype", None) \
  /* elementwise binary, broadcasting */ \
  X(add,          2, 1, Compute, "", Elementwise) \
  X(sub,          2, 1, Compute, "", Elementwise) \
  X(mul,          2, 1, Compute, "", Elementwise) \
  X(div,          2, 1, Compute, "", Elementwise) \
  X(floordiv,     2, 1, Compute, "", Elementwise) \
  X(mod,          2, 1, Compute, "", Elementwise) \
  X(pow,          2, 1, Compute, "", Elementwise) \
  X(maximum,      2, 1, Compute, "", Elementwise) \
  X(minimum,      2, 1, Compute, "", Elementwise) \
  X(equal,        2, 1, Compute, "", None) \
  X(not_equal,    2, 1, Compute, "", None) \
  X(less,         2, 1, Compute, "", None) \
  X(less_equal,   2, 1, Compute, "", None) \
  X(greater,      2, 1, Compute, "", None) \
  X(greater_equal,2, 1, Compute, "", None) \
  X(logical_and,  2, 1, Compute, "", None) \
  X(logical_or,   2, 1, Compute, "", None) \
  X(select,       3, 1, Compute, "", Elementwise) \
  /* reductions */ \
  X(reduce_sum,   1, 1, Compute, "axes:ints keep_dims:bool", None) \
  X(reduce_max,   1, 1, Compute, "axes:ints keep_dims:bool", None) \
  X(reduce_min,   1, 1, Compute, "axes:ints keep_dims:bool", None) \
  X(argmax,       1, 1, Compute, "axis:int keep_dims:bool", None) \
  X(argmin,       1, 1, Compute, "axis:int keep_dims:bool", None) \
  /* movement */ \
  X(reshape,      1, 1, View,    "shape:ints", None) \
  X(transpose,    1, 1, View,    "perm:ints", None) \
  X(broadcast_to, 1, 1, View,    "shape:ints", None) \
  X(strided_slice,1, 1, View,    "begin:ints end:ints strides:ints", None) \
  X(concat,      -1, 1, Compute, "axis:int", None) \
  X(pad,          1, 1, Compute, "paddings:ints value:float", None) \
  X(gather,       2, 1, Compute, "axis:int", None) \
  X(scatter_add,  3, 1, Compute, "axis:int", None) \
  X(one_hot,      1, 1, Compute, "depth:int on_value:float off_value:float axis:int dtype:dtype", None) \
  /* NumPy-style indexing (movement_scatter.cpp); nonzero's length is data-dependent */ \
  X(gather_nd,    2, 1, Compute, "", None) \
  X(tensor_scatter_update, 3, 1, Compute, "", None) \
  X(tensor_scatter_add, 3, 1, Compute, "", None) \
  X(nonzero,      1, 1, Compute, "", None) \
  X(masked_fill,  3, 1, Compute, "", None) \
  X(strided_slice_update, 2, 1, Compute, "begin:ints end:ints strides:ints", None) \
  /* sorting along the last axis (sort.cpp): values and int32 positions */ \
  X(sort,         1, 2, Compute, "descending:bool", None) \
  /* channel-blocked activations (blocked_layout.h; made by graph mode, no gradient) */ \
  X(to_blocked,   1, 1, Compute, "block:int", None) \
  X(from_blocked, 1, 1, Compute, "", None) \
  /* contractions (oneDNN) */ \
  X(matmul,       2, 1, Compute, "transpose_a:bool transpose_b:bool", None) \
  X(conv2d,       2, 1, Compute, "stride:ints padding:ints dilation:ints groups:int pad_mode:str layout:str", None) \
  X(conv2d_backprop_input,  2, 1, Compute, "input_shape:ints stride:ints padding:ints dilation:ints groups:int pad_mode:str layout:str", None) \
  X(conv2d_backprop_filter, 2, 1, Compute, "filter_shape:ints stride:ints padding:ints dilation:ints groups:int pad_mode:str layout:str dtype:dtype", None) \
  X(max_pool2d,   1, 1, Compute, "kernel_size:ints stride:ints padding:ints pad_mode:str layout:str", None) \
  X(max_pool2d_grad, 2, 1, Compute, "kernel_size:ints stride:ints padding:ints pad_mode:str layout:str", None) \
  X(avg_pool2d,   1, 1, Compute, "kernel_size:ints stride:ints padding:ints pad_mode:str count_include_pad:bool", None) \
  X(avg_pool2d_grad, 1, 1, Compute, "input_shape:ints kernel_size:ints stride:ints padding:ints pad_mode:str count_include_pad:bool", None) \
  X(batch_norm,   5, 3, Compute, "training:bool epsilon:float layout:str", None) \
  X(batch_norm_grad, 5, 3, Compute, "epsilon:float layout:str", None) \
  /* fused contractions: made by graph mode's epilogue fusion (no gradient) */ \
  X(matmul_bias,  3, 1, Compute, "transpose_a:bool transpose_b:bool activation:str", None) \
  X(conv2d_bias,  3, 1, Compute, "stride:ints padding:ints dilation:ints groups:int pad_mode:str activation:str layout:str", None) \
  X(conv2d_bn,    6, 1, Compute, "stride:ints padding:ints dilation:ints groups:int pad_mode:str epsilon:float activation:str layout:str", None) \
  X(conv2d_bn_add,7, 1, Compute, "stride:ints padding:ints dilation:ints groups:int pad_mode:str epsilon:float activation:str layout:str", None) \
  /* normalization and losses */ \
  X(softmax,      1, 1, Compute, "axis:int", None) \
  X(log_softmax,  1, 1, Compute, "axis:int", None) \
  X(softmax_grad, 2, 1, Compute, "axis:int", None) \
  X(log_softmax_grad, 2, 1, Compute, "axis:int", None) \
  X(softmax_cross_entropy, 2, 2, Compute, "", None) \
  X(sparse_softmax_cross_entropy, 2, 2, Compute, "", None) \
  /* random (Philox counter, see philox.h) */ \
  X(dropout,      1, 2, Compute, "keep_prob:float seed:int offset:int", Random) \
  X(random_uniform, 0, 1, Compute, "shape:ints dtype:dtype seed:int offset:int", Random) \
  X(random_normal,  0, 1, Compute, "shape:ints dtype:dtype seed:int offset:int", Random) \
  /* collectives across the job's processes (collective.cpp, kernels/comm/) */ \
  X(all_reduce,   1, 1, Compute, "op:str group:str", Collective) \
  X(all_gather,   1, 1, Compute, "group:str", Collective) \
  X(reduce_scatter, 1, 1, Compute, "op:str group:str", Collective) \
  X(broadcast,    1, 1, Compute, "root:int group:str", Collective) \
  /* effects: optimizer updates (also write input 1), assign */ \
  X(apply_momentum, 5, 1, InPlace, "use_nesterov:bool gradient_scale:float weight_decay:float", None) \
  X(apply_adam,   8, 1, InPlace, "gradient_scale:float weight_decay:float decoupled:bool", None) \
  X(assign,       2, 1, InPlace, "", None)
// clang-format on

enum class Prim : uint16_t {
#define MSL_X(name, ni, no, kind, attrs, trait) name,
  MSL_PRIMITIVES(MSL_X)
#undef MSL_X
};

#define MSL_X(name, ni, no, kind, attrs, trait) +1
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
  PrimTrait trait;
  InferFn infer;
  KernelFn kernels[kNumDeviceTypes];  // by DeviceType; null: no kernel on that device
};

const PrimDef& prim_def(Prim p);
// Fills `d`'s kernel slot of `p`: the GPU back end registers its kernels
// when its device is first opened (before any tensor can be on it).
void set_device_kernel(Prim p, DeviceType d, KernelFn fn);
inline const char* prim_name(Prim p) { return prim_def(p).name; }
inline bool is_elementwise(Prim p) { return prim_def(p).trait == PrimTrait::Elementwise; }
inline bool is_random(Prim p) { return prim_def(p).trait == PrimTrait::Random; }
inline bool is_collective(Prim p) { return prim_def(p).trait == PrimTrait::Collective; }
bool find_prim(std::string_view name, Prim& out);
// The parsed attribute declarations of a primitive.
const std::vector<AttrSpec>& prim_attrs(Prim p);

// Infers the output specs of `p` (checking arity and attribute names first).
void infer(Prim p, std::span<const TensorSpec> in, const Attrs& attrs, std::vector<TensorSpec>& out);

// The device a primitive with inputs on `in`'s devices runs on (0-d CPU
// tensors go with any device; none or only those: the default device); throws
// ValueError naming both devices when two inputs are on different ones.
Device* common_device(const char* prim, std::span<const Tensor> in);
DeviceType common_device_type(const char* prim, std::span<const TensorSpec> in);

// Runs `p` eagerly on its inputs' device: infers, allocates outputs, runs the kernel.
// Nothing is computed or allocated when inference fails.
// `out` receives the outputs (resized to the output count).
void execute(Prim p, std::span<const Tensor> in, const Attrs& attrs, std::vector<Tensor>& out);
// Single-output convenience, the hot path of eager dispatch.
Tensor execute1(Prim p, std::span<const Tensor> in, const Attrs& attrs = {});

// Declarations of every infer_/cpu_ function named by the list.
#define MSL_X(name, ni, no, kind, attrs, trait) \
  void infer_##name(const InferArgs&);   \
  void cpu_##name(const KernelArgs&);
MSL_PRIMITIVES(MSL_X)
#undef MSL_X

}  // namespace msl::kernels
