// The node a fused elementwise cluster becomes (passes/fuse_elementwise.h
// forms the clusters): its program and the run-time entry the executor
// calls (ir::CompiledKernel). On the CPU the program runs as the loop the
// generated-loop compiler makes of it on first use (codegen/elementwise_jit.h);
// on a GPU as its kernel in the compiled unit of its graph
// (codegen/cuda_unit.h), which the CUDA target attaches (target_cuda.cpp).
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "jit/codegen/elementwise_jit.h"
#include "kernels/cuda/elementwise_cuda.h"
#include "kernels/cuda/program_unit.h"
#include "kernels/tensor.h"
#include "lang/ir/func_graph.h"
#include "lang/ir/node.h"

namespace msl::jit {

// The callee of a fused cluster: out = program(inputs...) over `shape`,
// then the program's sums, sum k of shape sum_shapes[k].
class FusedElementwise final : public ir::CompiledKernel {
 public:
  FusedElementwise(codegen::EwProgram program, kernels::Dims shape, size_t ops,
                   std::vector<kernels::Dims> sum_shapes = {})
      : program_(std::move(program)),
        shape_(std::move(shape)),
        ops_(ops),
        sum_shapes_(std::move(sum_shapes)),
        kernel_name_(kernels::cuda::cuda_kernel_name(program_)) {}
  std::string name() const override { return "fused_elementwise_" + std::to_string(ops_) + "ops"; }
  size_t ops() const { return ops_; }  // primitives the cluster replaced (names the node)
  const codegen::EwProgram& program() const { return program_; }
  const kernels::Dims& shape() const { return shape_; }
  // The shapes of the program's sums' results (their keep_dims differ).
  const std::vector<kernels::Dims>& sum_shapes() const { return sum_shapes_; }
  // Runs the loop on the cluster's inputs (float32, any strides; `shape`,
  // or for a broadcast input the elements its EwIndexing counts, read in
  // its own shape): one tensor per output of the program, then one per
  // sum. ShapeError for an input of another size or dtype. An input buffer
  // nothing but `inputs` holds (the executor released it at this node)
  // receives a result of `shape` instead of a new buffer.
  std::vector<kernels::Tensor> run(std::vector<kernels::Tensor> inputs) const override;

  // The GPU code: the unit of the node's graph holding its kernel, and the
  // kernel's name there. A node without a unit that runs on a GPU compiles
  // a unit of its own kernel first (a graph the CUDA target did not see).
  // Set once the graph is compiled, before it runs: the node is shared,
  // immutable otherwise, like the CPU loop compiled on first use.
  void use_unit(std::shared_ptr<const kernels::cuda::ProgramUnit> unit) const;
  std::shared_ptr<const kernels::cuda::ProgramUnit> unit() const;
  const std::string& kernel_name() const { return kernel_name_; }

 private:
  codegen::EwProgram program_;
  kernels::Dims shape_;
  size_t ops_;
  std::vector<kernels::Dims> sum_shapes_;
  // Compiled on the first run, then reused: a training step runs the same
  // node every step.
  mutable std::once_flag compiled_;
  mutable codegen::EwFunction fn_ = nullptr;
  std::string kernel_name_;
  mutable std::mutex unit_mu_;
  mutable std::shared_ptr<const kernels::cuda::ProgramUnit> unit_;

  void run_on_gpu(const std::vector<kernels::Tensor>& dense, const std::vector<kernels::Tensor>& outs) const;
};

// msl --emit=llvm: each fused cluster of `g` as its program and the
// optimized LLVM IR of its loop.
std::string fused_llvm_listing(const ir::FuncGraph& g);
// msl --emit=cuda and save_graphs: the CUDA program of `g`'s fused nodes
// (the unit the CUDA target compiled for it), with a header naming the
// graph; "" when `g` has none.
std::string fused_cuda_listing(const ir::FuncGraph& g);
// The fused nodes of `g` (its root graph), in order.
std::vector<const FusedElementwise*> fused_nodes(const ir::FuncGraph& g);

}  // namespace msl::jit
