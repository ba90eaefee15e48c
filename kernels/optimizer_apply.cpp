// Fused optimizer updates (MindSpore's ApplyMomentum): one pass over a
// parameter and its optimizer state instead of a chain of elementwise ops.
//
// Written as separate ops, a Momentum step reads and writes each parameter
// sized array about ten times and allocates as many temporaries; these
// updates are memory bound, so for a small network they cost as much as
// the matmuls. The kernel reads gradient, accumulation and variable once and
// writes accumulation and variable once.
//
// apply_momentum(variable, accumulation, learning_rate, gradient, momentum)
// is an InPlace primitive: it writes `variable` (input 0, which is the
// output, as for assign) and, as MindSpore's kernel does, `accumulation`
// (input 1). Both are optimizer-owned Parameters that nothing else in the
// step reads, which is what makes the second write safe to leave out of the
// effect bookkeeping (which tracks input 0 only). Weight decay is folded in
// (MindSpore adds it to the gradient in a separate op first): two fewer
// passes over every weight, which for a ResNet's convolutions are tens of
// megabytes per step.
//     g     = (gradient + weight_decay * var) * gradient_scale
//     accum = momentum * accum + g
//     var  -= lr * (g + momentum * accum)      use_nesterov
//     var  -= lr * accum                       otherwise
#include <fmt/format.h>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "kernels/primitives.h"

namespace msl::kernels {

namespace {

void check_scalar(const TensorSpec& s, const char* what) {
  if (s.shape.product() != 1)
    throw ShapeError(fmt::format("apply_momentum: {} must hold one value, got shape {}", what, s.shape.str()));
  if (!is_floating(s.dtype))
    throw DTypeError(fmt::format("apply_momentum: {} must be a float tensor, got {}", what, dtype_name(s.dtype)));
}

template <class T>
void momentum_loop(T* var, T* accum, const T* grad, int64_t n, T lr, T mom, T scale, T decay, bool nesterov) {
  parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    if (nesterov) {
      for (int64_t i = b; i < e; ++i) {
        T g = (grad[i] + decay * var[i]) * scale;
        T a = mom * accum[i] + g;
        accum[i] = a;
        var[i] -= lr * (g + mom * a);
      }
    } else {
      for (int64_t i = b; i < e; ++i) {
        T a = mom * accum[i] + (grad[i] + decay * var[i]) * scale;
        accum[i] = a;
        var[i] -= lr * a;
      }
    }
  });
}

}  // namespace

void infer_apply_momentum(const InferArgs& a) {
  const TensorSpec &var = a.in[0], &accum = a.in[1], &grad = a.in[3];
  if (var.dtype != DType::Float32 && var.dtype != DType::Float64)
    throw DTypeError(fmt::format("apply_momentum: the parameter must be float32 or float64, got {}",
                                 dtype_name(var.dtype)));
  if (accum.dtype != var.dtype || grad.dtype != var.dtype)
    throw DTypeError(fmt::format("apply_momentum: parameter {}, accumulation {} and gradient {} must have one dtype",
                                 dtype_name(var.dtype), dtype_name(accum.dtype), dtype_name(grad.dtype)));
  if (accum.shape != var.shape || grad.shape != var.shape)
    throw ShapeError(fmt::format("apply_momentum: parameter {}, accumulation {} and gradient {} must have one shape",
                                 var.shape.str(), accum.shape.str(), grad.shape.str()));
  check_scalar(a.in[2], "the learning rate");
  check_scalar(a.in[4], "momentum");
  a.out[0] = var;
}

void cpu_apply_momentum(const KernelArgs& a) {
  const Tensor &var = a.in[0], &accum = a.in[1];
  if (!var.is_contiguous() || !accum.is_contiguous())
    throw ValueError("apply_momentum: the parameter and its accumulation must be contiguous");
  if (var.shares_storage(accum)) throw ValueError("apply_momentum: the parameter and its accumulation share memory");
  Tensor grad = a.in[3].is_contiguous() ? a.in[3] : a.in[3].contiguous();
  double lr = a.in[2].item(), mom = a.in[4].item(), scale = a.attrs.get_float("gradient_scale", 1.0);
  double decay = a.attrs.get_float("weight_decay", 0.0);
  bool nesterov = a.attrs.get_bool("use_nesterov");
  int64_t n = var.numel();
  if (var.dtype() == DType::Float32)
    momentum_loop<float>(var.data<float>(), accum.data<float>(), grad.data<float>(), n, static_cast<float>(lr),
                         static_cast<float>(mom), static_cast<float>(scale), static_cast<float>(decay), nesterov);
  else
    momentum_loop<double>(var.data<double>(), accum.data<double>(), grad.data<double>(), n, lr, mom, scale, decay,
                          nesterov);
}

}  // namespace msl::kernels
