// Fused optimizer updates (MindSpore's ApplyMomentum and Adam): one pass
// over a parameter and its optimizer state instead of a chain of
// elementwise ops.
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
//
// apply_adam(var, m, v, lr, beta1, beta2, epsilon, gradient) writes var, m
// and v (lr already bias-corrected by the optimizer, as nn.Adam's rate
// Cell does):
//     g    = (gradient + weight_decay * var) * gradient_scale   (decay: Adam)
//     m    = beta1 * m + (1 - beta1) * g
//     v    = beta2 * v + (1 - beta2) * g * g
//     var -= lr * (m / (sqrt(v) + epsilon) + weight_decay * var) (decay: decoupled, AdamWeightDecay)
#include <fmt/format.h>

#include <cmath>
#include <span>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "kernels/primitives.h"
#include "kernels/simd_clones.h"

namespace msl::kernels {

namespace {

// A hyperparameter input (learning rate, momentum, betas): one float value.
void check_scalar(const char* op, const TensorSpec& s, const char* what) {
  if (s.shape.product() != 1)
    throw ShapeError(fmt::format("{}: {} must hold one value, got shape {}", op, what, s.shape.str()));
  if (!is_floating(s.dtype))
    throw DTypeError(fmt::format("{}: {} must be a float tensor, got {}", op, what, dtype_name(s.dtype)));
}

// One chunk of each update, as a function of its own: see simd_clones.h.
template <class T>
MSL_SIMD_CLONES void momentum_chunk(T* __restrict var, T* __restrict accum, const T* __restrict grad, int64_t b,
                                    int64_t e, T lr, T mom, T scale, T decay, bool nesterov) {
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
}

template <class T>
MSL_SIMD_CLONES void adam_chunk(T* __restrict var, T* __restrict m, T* __restrict v, const T* __restrict grad,
                                int64_t b, int64_t e, T lr, T b1, T b2, T eps, T scale, T gdecay, T udecay) {
  for (int64_t i = b; i < e; ++i) {
    T g = (grad[i] + gdecay * var[i]) * scale;
    T mi = b1 * m[i] + (T(1) - b1) * g;
    T vi = b2 * v[i] + (T(1) - b2) * g * g;
    m[i] = mi;
    v[i] = vi;
    var[i] -= lr * (mi / (std::sqrt(vi) + eps) + udecay * var[i]);
  }
}

template <class T>
void momentum_loop(T* var, T* accum, const T* grad, int64_t n, T lr, T mom, T scale, T decay, bool nesterov) {
  parallel_for(n, kParallelGrain, [=](int64_t b, int64_t e) {
    momentum_chunk(var, accum, grad, b, e, lr, mom, scale, decay, nesterov);
  });
}

template <class T>
void adam_loop(T* var, T* m, T* v, const T* grad, int64_t n, T lr, T b1, T b2, T eps, T scale, T decay,
               bool decoupled) {
  T gdecay = decoupled ? T(0) : decay, udecay = decoupled ? decay : T(0);
  parallel_for(n, kParallelGrain, [=](int64_t b, int64_t e) {
    adam_chunk(var, m, v, grad, b, e, lr, b1, b2, eps, scale, gdecay, udecay);
  });
}

// The parameter, its state tensors and gradient: one float dtype, one shape.
void check_state(const char* op, std::span<const TensorSpec> tensors, std::span<const char* const> names) {
  const TensorSpec& var = tensors[0];
  if (var.dtype != DType::Float32 && var.dtype != DType::Float64)
    throw DTypeError(fmt::format("{}: the parameter must be float32 or float64, got {}", op, dtype_name(var.dtype)));
  for (size_t i = 1; i < tensors.size(); ++i) {
    if (tensors[i].dtype != var.dtype)
      throw DTypeError(fmt::format("{}: {} is {} but the parameter is {}", op, names[i], dtype_name(tensors[i].dtype),
                                   dtype_name(var.dtype)));
    if (tensors[i].shape != var.shape)
      throw ShapeError(fmt::format("{}: {} has shape {} but the parameter has shape {}", op, names[i],
                                   tensors[i].shape.str(), var.shape.str()));
  }
}

}  // namespace

void infer_apply_adam(const InferArgs& a) {
  const TensorSpec state[] = {a.in[0], a.in[1], a.in[2], a.in[7]};
  const char* const names[] = {"the parameter", "m", "v", "the gradient"};
  check_state("apply_adam", state, names);
  const char* scalars[] = {"the learning rate", "beta1", "beta2", "epsilon"};
  for (size_t i = 0; i < 4; ++i) check_scalar("apply_adam", a.in[3 + i], scalars[i]);
  a.out[0] = a.in[0];
}

void cpu_apply_adam(const KernelArgs& a) {
  const Tensor &var = a.in[0], &m = a.in[1], &v = a.in[2];
  if (!var.is_contiguous() || !m.is_contiguous() || !v.is_contiguous())
    throw ValueError("apply_adam: the parameter and its moments must be contiguous");
  if (var.shares_storage(m) || var.shares_storage(v) || m.shares_storage(v))
    throw ValueError("apply_adam: the parameter and its moments share memory");
  Tensor grad = a.in[7].is_contiguous() ? a.in[7] : a.in[7].contiguous();
  double lr = a.in[3].item(), b1 = a.in[4].item(), b2 = a.in[5].item(), eps = a.in[6].item();
  double scale = a.attrs.get_float("gradient_scale", 1.0), decay = a.attrs.get_float("weight_decay", 0.0);
  bool decoupled = a.attrs.get_bool("decoupled");
  int64_t n = var.numel();
  if (var.dtype() == DType::Float32)
    adam_loop<float>(var.data<float>(), m.data<float>(), v.data<float>(), grad.data<float>(), n, float(lr), float(b1),
                     float(b2), float(eps), float(scale), float(decay), decoupled);
  else
    adam_loop<double>(var.data<double>(), m.data<double>(), v.data<double>(), grad.data<double>(), n, lr, b1, b2, eps,
                      scale, decay, decoupled);
}

void infer_apply_momentum(const InferArgs& a) {
  const TensorSpec state[] = {a.in[0], a.in[1], a.in[3]};
  const char* const names[] = {"the parameter", "the accumulation", "the gradient"};
  check_state("apply_momentum", state, names);
  check_scalar("apply_momentum", a.in[2], "the learning rate");
  check_scalar("apply_momentum", a.in[4], "momentum");
  a.out[0] = a.in[0];
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
