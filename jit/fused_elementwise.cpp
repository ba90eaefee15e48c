// A fused elementwise cluster's run-time entry (fused_elementwise.h).
#include "jit/fused_elementwise.h"

#include <fmt/format.h>

#include "jit/codegen/cuda_unit.h"
#include "kernels/device_debug.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/trace.h"
#include "lang/ir/func_graph.h"

namespace msl::jit {

std::vector<kernels::Tensor> FusedElementwise::run(std::vector<kernels::Tensor> inputs) const {
  kernels::TraceSpan span(name(), "kernel");  // the profiler's timeline: a fused loop is one kernel
  if (inputs.size() != static_cast<size_t>(program_.num_inputs))
    throw kernels::ValueError(
        fmt::format("{}: {} inputs given, {} expected", name(), inputs.size(), program_.num_inputs));
  if (sum_shapes_.size() != program_.reductions.size())
    throw kernels::ValueError(
        fmt::format("{}: {} shapes for {} sums", name(), sum_shapes_.size(), program_.reductions.size()));
  for (size_t k = 0; k < sum_shapes_.size(); ++k)
    if (sum_shapes_[k].product() != program_.reductions[k].how.elements())
      throw kernels::ShapeError(fmt::format("{}: sum {} has shape {} but {} elements", name(), k, sum_shapes_[k].str(),
                                            program_.reductions[k].how.elements()));
  // A host kernel of the inputs' device (run_host_kernel): its outputs go there.
  kernels::Device* dev = kernels::common_device(name().c_str(), inputs);
  std::vector<kernels::Tensor> dense, outs;
  std::vector<const float*> ptrs;
  std::vector<float*> out_ptrs;
  // Inputs whose buffer nothing but `inputs` holds (the executor released
  // them here), with the cluster's elements in order: results go there
  // instead of into new buffers (memory_plan.h).
  std::vector<size_t> reusable;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const kernels::Tensor& t = inputs[k];
    bool once = true;
    for (size_t j = 0; j < k; ++j) once &= !inputs[j].shares_storage(t);
    for (size_t j = k + 1; j < inputs.size(); ++j) once &= !inputs[j].shares_storage(t);
    if (once && program_.input_indexing(static_cast<int>(k)).full() && t.defined() &&
        t.storage()->refcount.load() == 1 && t.dtype() == kernels::DType::Float32 && t.offset() == 0 &&
        t.is_contiguous() && t.numel() == shape_.product())
      reusable.push_back(k);
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    const kernels::Tensor& t = inputs[k];
    // A full input has the cluster's elements; a broadcast one its own
    // count * lane, read contiguously in its own shape.
    codegen::EwIndexing how = program_.input_indexing(static_cast<int>(k));
    int64_t want = how.full() ? shape_.product() : how.elements();
    if (t.dtype() != kernels::DType::Float32 || t.numel() != want)
      throw kernels::ShapeError(fmt::format("{}: input {} is {} {}, expected float32 with {} elements", name(), k,
                                              kernels::dtype_name(t.dtype()), t.shape().str(), want));
    dense.push_back(t.is_contiguous() ? t : t.contiguous());
  }
  for (size_t k = 0; k < program_.outputs.size(); ++k) {
    if (k < reusable.size())
      outs.push_back(kernels::Tensor::view(inputs[reusable[k]], shape_, kernels::contiguous_strides(shape_), 0));
    else
      outs.emplace_back(kernels::DType::Float32, shape_, dev);
  }
  for (const kernels::Dims& d : sum_shapes_) outs.emplace_back(kernels::DType::Float32, d, dev);
  if (dev->type() == kernels::DeviceType::CUDA) {
    run_on_gpu(dense, outs);
    return outs;
  }
  for (const kernels::Tensor& t : dense) ptrs.push_back(t.data<float>());
  for (const kernels::Tensor& t : outs) out_ptrs.push_back(t.data<float>());
  std::call_once(compiled_, [&] { fn_ = codegen::ElementwiseJit::instance().compile(program_); });
  kernels::run_host_kernel(name().c_str(), dev, dense, outs, [&] {
    codegen::ElementwiseJit::run(fn_, program_, ptrs.data(), out_ptrs.data(), shape_.product());
  });
  return outs;
}

void FusedElementwise::use_unit(std::shared_ptr<const kernels::cuda::ProgramUnit> unit) const {
  std::lock_guard lock(unit_mu_);
  unit_ = std::move(unit);
}

std::shared_ptr<const kernels::cuda::ProgramUnit> FusedElementwise::unit() const {
  std::lock_guard lock(unit_mu_);
  return unit_;
}

void FusedElementwise::run_on_gpu(const std::vector<kernels::Tensor>& dense,
                                  const std::vector<kernels::Tensor>& outs) const {
  std::shared_ptr<const kernels::cuda::ProgramUnit> u = unit();
  if (!u) {
    const kernels::EwProgram* self = &program_;
    u = codegen::compile_cuda_unit(codegen::render_cuda_unit({&self, 1}), name());
    use_unit(u);
  }
  // A constant made on the host (a folded tensor) joins the GPU's inputs.
  std::vector<kernels::Tensor> on_device;
  for (const kernels::Tensor& t : dense)
    on_device.push_back(t.device() == outs[0].device() ? t : t.to_device(outs[0].device()));
  kernels::cuda::launch_unit_kernel(*u, kernel_name_, shape_.product(), on_device, outs, sum_shapes_.size(),
                                    name().c_str());
}

std::string fused_cuda_listing(const ir::FuncGraph& g) {
  std::vector<const FusedElementwise*> nodes = fused_nodes(g);
  if (nodes.empty() || !nodes[0]->unit()) return "";
  const auto& unit = *nodes[0]->unit();
  std::string head = "// CUDA program of @" + g.name() + ": " + std::to_string(nodes.size()) + " fused kernels, " +
                     (unit.ptx ? "PTX for compute_" : "cubin for sm_") + std::to_string(unit.arch) + "\n";
  for (const FusedElementwise* f : nodes)
    head += "//   " + f->kernel_name() + ": " + f->name() + ", shape " + f->shape().str() + "\n";
  return head + unit.source + "\n";
}

std::vector<const FusedElementwise*> fused_nodes(const ir::FuncGraph& g) {
  std::vector<const FusedElementwise*> out;
  for (ir::Node* n : ir::topo_order(g)) {
    if (!n->is_apply() || !n->callee()->is_constant()) continue;
    if (auto f = dynamic_cast<const FusedElementwise*>(n->callee()->as_host())) out.push_back(f);
  }
  return out;
}

std::string fused_llvm_listing(const ir::FuncGraph& g) {
  std::string out;
  for (const FusedElementwise* f : fused_nodes(g)) {
    std::string text = "; " + f->name() + " of @" + g.name() + ", shape " + f->shape().str() + "\n";
    std::string program = f->program().text();
    for (size_t start = 0; start < program.size();) {
      size_t end = program.find('\n', start);
      text += "; " + program.substr(start, end - start) + "\n";
      start = end == std::string::npos ? program.size() : end + 1;
    }
    out += text + codegen::ElementwiseJit::instance().llvm_ir(f->program()) + "\n";
  }
  return out;
}

}  // namespace msl::jit
