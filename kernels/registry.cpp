// The primitive table built from MSL_PRIMITIVES, and eager execution.
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "kernels/device_debug.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/dump.h"
#include "kernels/profile.h"
#include "kernels/trace.h"

namespace msl::kernels {

namespace {

// Not const: a device's back end fills its kernel slots when it is first
// opened (set_device_kernel).
PrimDef kPrimDefs[] = {
#define MSL_X(name, ni, no, kind, attrs, trait) \
  {#name, ni, no, PrimKind::kind, attrs, PrimTrait::trait, &infer_##name, {&cpu_##name, nullptr, &cpu_##name}},
    MSL_PRIMITIVES(MSL_X)
#undef MSL_X
};
static_assert(sizeof(kPrimDefs) / sizeof(kPrimDefs[0]) == kNumPrims);
// The kernel table's order.
static_assert(static_cast<int>(DeviceType::CPU) == 0 && static_cast<int>(DeviceType::CUDA) == 1 &&
              static_cast<int>(DeviceType::Debug) == 2 && kNumDeviceTypes == 3);

constexpr int kMaxOutputs = 3;
#define MSL_X(name, ni, no, kind, attrs, trait) static_assert(no <= kMaxOutputs);
MSL_PRIMITIVES(MSL_X)
#undef MSL_X

const std::vector<std::vector<AttrSpec>>& all_attr_specs() {
  static const std::vector<std::vector<AttrSpec>> specs = [] {
    std::vector<std::vector<AttrSpec>> out(kNumPrims);
    for (int i = 0; i < kNumPrims; ++i) {
      std::istringstream in(kPrimDefs[i].attr_decl);
      std::string item;
      while (in >> item) {
        size_t colon = item.find(':');
        out[i].push_back({item.substr(0, colon), item.substr(colon + 1)});
      }
    }
    return out;
  }();
  return specs;
}

void check_call(Prim p, size_t n_in, const Attrs& attrs) {
  const PrimDef& d = prim_def(p);
  if (d.inputs >= 0 && static_cast<size_t>(d.inputs) != n_in)
    throw ValueError(fmt::format("{}: expected {} input{}, got {}", d.name, d.inputs, d.inputs == 1 ? "" : "s", n_in));
  if (attrs.empty()) return;
  const auto& specs = prim_attrs(p);
  for (auto& [name, v] : attrs.items()) {
    bool known = false;
    for (auto& s : specs) known |= s.name == name;
    if (!known) throw ValueError(fmt::format("{}: unknown attribute '{}'", d.name, name));
  }
}

}  // namespace

const PrimDef& prim_def(Prim p) { return kPrimDefs[static_cast<int>(p)]; }

void set_device_kernel(Prim p, DeviceType d, KernelFn fn) {
  kPrimDefs[static_cast<int>(p)].kernels[static_cast<int>(d)] = fn;
}

bool find_prim(std::string_view name, Prim& out) {
  static const std::unordered_map<std::string_view, Prim> by_name = [] {
    std::unordered_map<std::string_view, Prim> m;
    for (int i = 0; i < kNumPrims; ++i) m.emplace(kPrimDefs[i].name, static_cast<Prim>(i));
    return m;
  }();
  auto it = by_name.find(name);
  if (it == by_name.end()) return false;
  out = it->second;
  return true;
}

const std::vector<AttrSpec>& prim_attrs(Prim p) { return all_attr_specs()[static_cast<int>(p)]; }

[[noreturn]] void throw_mixed_devices(const char* prim, DeviceType a, DeviceType b) {
  throw ValueError(fmt::format("{}: input tensors are on different devices, {} and {} (move one with to_device)", prim,
                               device_type_name(a), device_type_name(b)));
}

Device* common_device(const char* prim, std::span<const Tensor> in) {
  Device* dev = nullptr;
  bool by_scalar = false;  // chosen by 0-d CPU tensors only: any other device replaces it
  for (const Tensor& t : in) {
    if (!t.defined()) continue;
    Device* d = t.device();
    bool host_scalar = d->type() == DeviceType::CPU && t.ndim() == 0;
    if (d == dev) {
      by_scalar = by_scalar && host_scalar;
      continue;
    }
    if (!dev || (by_scalar && !host_scalar)) {
      dev = d;
      by_scalar = host_scalar;
      continue;
    }
    if (!host_scalar) throw_mixed_devices(prim, dev->type(), d->type());
  }
  // Host scalars alone (ops.fill(1.0), a broadcast of a Python number) compute
  // on the default device, as new tensors do.
  return dev && !by_scalar ? dev : default_device();
}

DeviceType common_device_type(const char* prim, std::span<const TensorSpec> in) {
  bool any = false, by_scalar = false;
  DeviceType dev = DeviceType::CPU;
  for (const TensorSpec& t : in) {
    bool host_scalar = t.device == DeviceType::CPU && t.shape.empty();
    if (any && t.device == dev) {
      by_scalar = by_scalar && host_scalar;
      continue;
    }
    if (!any || (by_scalar && !host_scalar)) {
      any = true;
      dev = t.device;
      by_scalar = host_scalar;
      continue;
    }
    if (!host_scalar) throw_mixed_devices(prim, dev, t.device);
  }
  return any && !by_scalar ? dev : default_device()->type();
}

void infer(Prim p, std::span<const TensorSpec> in, const Attrs& attrs, std::vector<TensorSpec>& out) {
  check_call(p, in.size(), attrs);
  const PrimDef& d = prim_def(p);
  DeviceType dev = common_device_type(d.name, in);
  out.assign(static_cast<size_t>(d.outputs), TensorSpec{});
  d.infer(InferArgs{p, in, attrs, out});
  for (TensorSpec& s : out) s.device = dev;
}

namespace {

void run(Prim p, std::span<const Tensor> in, const Attrs& attrs, std::span<Tensor> out);

bool all_host_scalars(std::span<const Tensor> in) {
  for (const Tensor& t : in)
    if (t.ndim() != 0 || t.device()->type() != DeviceType::CPU) return false;
  return true;
}

// A view of a host scalar on another device (broadcast_to of a Python
// number): the scalar moves there first, so the view is on that device.
[[gnu::noinline]] void run_view_on(Device* dev, Prim p, std::span<const Tensor> in, const Attrs& attrs,
                                   std::span<Tensor> out) {
  std::vector<Tensor> moved(in.begin(), in.end());
  moved[0] = moved[0].to_device(dev);
  run(p, moved, attrs, out);
}

// Runs inference and the kernel with outputs in a caller-provided array, so
// the single-output path never touches the heap for bookkeeping.
void run(Prim p, std::span<const Tensor> in, const Attrs& attrs, std::span<Tensor> out) {
  check_call(p, in.size(), attrs);
  const PrimDef& d = prim_def(p);
  TensorSpec specs_buf[kMaxOutputs];
  TensorSpec in_buf[4];
  std::vector<TensorSpec> in_heap;
  std::span<const TensorSpec> in_specs;
  if (in.size() <= 4) {
    for (size_t i = 0; i < in.size(); ++i) in_buf[i] = in[i].spec();
    in_specs = std::span<const TensorSpec>(in_buf, in.size());
  } else {
    for (auto& t : in) in_heap.push_back(t.spec());
    in_specs = in_heap;
  }
  // Every input defined, and the device: the fast path is every input on
  // the first one's; mixed devices, no inputs and, when the default device
  // is not the CPU, host scalars only ask common_device.
  Device* dev = in.empty() ? nullptr : in[0].device();
  bool mixed = dev == nullptr;
  for (auto& t : in) {
    if (!t.defined()) throw ValueError(fmt::format("{}: an input tensor is empty (undefined)", d.name));
    mixed |= t.device() != dev;
  }
  if (mixed || (detail::default_device_off_cpu && all_host_scalars(in))) dev = common_device(d.name, in);
  KernelFn kernel = d.kernels[static_cast<int>(dev->type())];
  if (!kernel) throw ValueError(fmt::format("{}: no kernel for device {}", d.name, dev->name()));
  std::span<TensorSpec> specs(specs_buf, static_cast<size_t>(d.outputs));
  d.infer(InferArgs{p, in_specs, attrs, specs});
  switch (d.kind) {
    case PrimKind::Compute:
      for (int i = 0; i < d.outputs; ++i) out[i] = Tensor(specs[i].dtype, specs[i].shape, dev);
      break;
    case PrimKind::InPlace: out[0] = in[0]; break;
    case PrimKind::View:
      if (in[0].device() != dev) [[unlikely]] {
        run_view_on(dev, p, in, attrs, out);
        return;
      }
      break;
  }
  // Inputs are written before the kernel runs: an in-place kernel (an
  // optimizer's update) overwrites its first input.
  int64_t dump_seq = dumping() ? dump_inputs(p, in) : -1;
  if (dev->type() == DeviceType::Debug) {
    // The CPU kernel, "inside" the device: its memory is readable meanwhile.
    DebugAccess scope(in, out);
    kernel(KernelArgs{p, in, attrs, out});
  } else if (!profiling() && !tracing()) {
    kernel(KernelArgs{p, in, attrs, out});
  } else {
    int64_t start = trace_clock_ns();
    kernel(KernelArgs{p, in, attrs, out});
    int64_t end = trace_clock_ns();
    if (profiling()) profile_record(p, end - start);
    if (tracing()) trace_kernel(p, in, start, end);
  }
  if (dump_seq >= 0) dump_outputs(dump_seq, p, out);
}

}  // namespace

void execute(Prim p, std::span<const Tensor> in, const Attrs& attrs, std::vector<Tensor>& out) {
  Tensor buf[kMaxOutputs];
  const PrimDef& d = prim_def(p);
  run(p, in, attrs, std::span<Tensor>(buf, static_cast<size_t>(d.outputs)));
  out.clear();
  for (int i = 0; i < d.outputs; ++i) out.push_back(std::move(buf[i]));
}

Tensor execute1(Prim p, std::span<const Tensor> in, const Attrs& attrs) {
  const PrimDef& d = prim_def(p);
  if (d.outputs != 1) throw ValueError(fmt::format("{} has {} outputs, not one", d.name, d.outputs));
  Tensor out;
  run(p, in, attrs, std::span<Tensor>(&out, 1));
  return out;
}

}  // namespace msl::kernels
