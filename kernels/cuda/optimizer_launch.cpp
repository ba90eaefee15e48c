// Launches of the optimizer updates (optimizer_cuda.h).
#include "kernels/cuda/launch.h"
#include "kernels/cuda/optimizer_cuda.h"
#include "kernels/errors.h"

namespace msl::kernels::cuda {

namespace {

// The hyperparameters are read on the host, as the CPU kernel reads them:
// for one on the GPU that is a copy and a synchronization per update (the
// next step is reading them in the kernel).
template <class T>
void launch_update(const KernelArgs& a, CudaDevice& dev, CUfunction f, int64_t n, const Tensor& grad) {
  const char* what = prim_name(a.prim);
  T scale = static_cast<T>(a.attrs.get_float("gradient_scale", 1.0));
  T decay = static_cast<T>(a.attrs.get_float("weight_decay", 0.0));
  void* var = a.in[0].raw();
  void* g = grad.raw();
  if (a.prim == Prim::apply_momentum) {
    void* accum = a.in[1].raw();
    T lr = static_cast<T>(a.in[2].item()), mom = static_cast<T>(a.in[4].item());
    int nesterov = a.attrs.get_bool("use_nesterov") ? 1 : 0;
    void* args[] = {&n, &var, &accum, &g, &lr, &mom, &scale, &decay, &nesterov};
    launch_over(dev, f, n, args, what);
    return;
  }
  void* m = a.in[1].raw();
  void* v = a.in[2].raw();
  T lr = static_cast<T>(a.in[3].item()), b1 = static_cast<T>(a.in[4].item()), b2 = static_cast<T>(a.in[5].item());
  T eps = static_cast<T>(a.in[6].item());
  bool decoupled = a.attrs.get_bool("decoupled");
  T gdecay = decoupled ? T(0) : decay, udecay = decoupled ? decay : T(0);
  void* args[] = {&n, &var, &m, &v, &g, &lr, &b1, &b2, &eps, &scale, &gdecay, &udecay};
  launch_over(dev, f, n, args, what);
}

void cuda_optimizer(const KernelArgs& a) {
  const char* what = prim_name(a.prim);
  const bool adam = a.prim == Prim::apply_adam;
  const Tensor& var = a.in[0];
  const int nstate = adam ? 3 : 2;
  for (int k = 0; k < nstate; ++k)
    if (!a.in[k].is_contiguous())
      throw ValueError(adam ? "apply_adam: the parameter and its moments must be contiguous"
                            : "apply_momentum: the parameter and its accumulation must be contiguous");
  for (int k = 0; k < nstate; ++k)
    for (int j = k + 1; j < nstate; ++j)
      if (a.in[k].shares_storage(a.in[j]))
        throw ValueError(adam ? "apply_adam: the parameter and its moments share memory"
                              : "apply_momentum: the parameter and its accumulation share memory");
  int64_t n = var.numel();
  if (n == 0) return;
  CudaDevice& dev = device_of(var);
  Tensor grad = a.in[adam ? 7 : 3];
  grad = grad.device() == var.device() ? grad.contiguous() : grad.to_device(var.device());  // a 0-d host gradient
  std::string name = optimizer_kernel_name(a.prim, var.dtype());
  CUfunction f = text_kernel(dev, name, name, what, [&] { return optimizer_kernel_text(a.prim, var.dtype()); });
  if (var.dtype() == DType::Float32)
    launch_update<float>(a, dev, f, n, grad);
  else
    launch_update<double>(a, dev, f, n, grad);
}

}  // namespace

void register_optimizer_kernels() {
  set_device_kernel(Prim::apply_momentum, DeviceType::CUDA, &cuda_optimizer);
  set_device_kernel(Prim::apply_adam, DeviceType::CUDA, &cuda_optimizer);
}

}  // namespace msl::kernels::cuda
