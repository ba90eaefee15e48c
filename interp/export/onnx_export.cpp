// The walk over a traced graph that writes the ONNX model (onnx_export.h).
#include "interp/export/onnx_export.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "interp/export/onnx_builder.h"
#include "kernels/primitives.h"

// Set by interp/export/CMakeLists.txt.
#ifndef MSL_VERSION_STRING
#define MSL_VERSION_STRING ""
#endif

namespace msl::onnx_export {

namespace {

using kernels::DType;
using kernels::Tensor;
using kernels::TensorSpec;

// What a node of the trace is in the ONNX graph: one value, or the values
// of a multi-output primitive or a tuple.
struct Mapped {
  std::vector<OnnxValue> values;
  bool is_tuple = false;
};

class Exporter {
 public:
  Exporter(const ExportRequest& r, onnx::GraphProto* g) : r_(r), b_(g) {}

  void run() {
    const ir::FuncGraph& g = *r_.graph;
    if (g.params().size() != r_.inputs.size()) throw ExportError("the traced graph's inputs do not match the inputs given");
    for (size_t i = 0; i < g.params().size(); ++i) {
      OnnxValue v{r_.input_names[i], r_.inputs[i]};
      set_type(b_.graph()->add_input(), v);
      mapped_[g.params()[i]] = Mapped{{v}, false};
    }
    for (ir::Node* n : ir::topo_order(g))
      if (n->is_apply()) apply(n);
    outputs(g.output());
  }

 private:
  // A constant argument: a tensor (an initializer, named after its
  // Parameter) or a Python number (0-d, in the dtype of the operation's
  // first tensor, as the eager call converts it).
  OnnxValue constant(const ir::Node* n, DType like) {
    const ir::ConstValue& v = n->value();
    if (const Tensor* t = std::get_if<Tensor>(&v)) {
      auto key = t->storage();
      std::string pname = r_.parameter_name ? r_.parameter_name(*t) : "";
      std::string cache_key = fmt::format("{}:{}:{}", static_cast<const void*>(key), t->offset(), t->shape().str());
      auto it = constants_.find(cache_key);
      if (it == constants_.end()) {
        it = constants_.emplace(cache_key, b_.initializer(*t, pname)).first;
      }
      return {it->second, t->spec()};
    }
    double x = 0;
    if (auto d = std::get_if<double>(&v)) x = *d;
    else if (auto i = std::get_if<int64_t>(&v)) x = static_cast<double>(*i);
    else if (auto bv = std::get_if<bool>(&v)) x = *bv ? 1 : 0;
    else throw ExportError(fmt::format("a constant of the traced graph is not a tensor or a number (node %{})", n->id()));
    return {b_.scalar(like, x), TensorSpec{like, kernels::Dims{}}};
  }

  const Mapped& value_of(const ir::Node* n) {
    auto it = mapped_.find(n);
    if (it == mapped_.end()) throw ExportError(fmt::format("node %{} is used before it is computed", n->id()));
    return it->second;
  }

  void apply(const ir::Node* n) {
    const ir::Node* callee = n->callee();
    if (const ir::IrOp* op = callee->as_ir_op()) return ir_op(n, *op);
    const ir::PrimRef* p = callee->as_prim();
    if (p == nullptr) throw ExportError(fmt::format("node %{} calls something other than a primitive", n->id()));
    // The dtype Python numbers take: the first tensor argument's.
    DType like = DType::Float32;
    for (size_t i = 0; i < n->num_args(); ++i)
      if (!n->arg(i)->is_constant() || std::holds_alternative<Tensor>(n->arg(i)->value())) {
        like = n->arg(i)->is_constant() ? std::get<Tensor>(n->arg(i)->value()).dtype()
                                        : value_of(n->arg(i)).values.at(0).spec.dtype;
        break;
      }
    std::vector<OnnxValue> in;
    for (size_t i = 0; i < n->num_args(); ++i) {
      const ir::Node* arg = n->arg(i);
      if (arg->is_constant()) {
        in.push_back(constant(arg, like));
      } else {
        const Mapped& m = value_of(arg);
        if (m.is_tuple || m.values.size() != 1)
          throw ExportError(fmt::format("{}: an argument is a tuple", kernels::prim_name(p->prim)));
        in.push_back(m.values[0]);
      }
    }
    std::vector<TensorSpec> in_specs, out_specs;
    for (const OnnxValue& v : in) in_specs.push_back(v.spec);
    kernels::infer(p->prim, in_specs, p->attrs, out_specs);
    Mapped result;
    for (size_t k = 0; k < out_specs.size(); ++k)
      result.values.push_back({b_.fresh(out_specs.size() == 1 ? fmt::format("{}_{}", kernels::prim_name(p->prim), n->id())
                                                               : fmt::format("{}_{}_{}", kernels::prim_name(p->prim), n->id(), k)),
                               out_specs[k]});
    emit_prim(b_, *p, in, result.values);
    for (const OnnxValue& v : result.values) b_.value_info(v);
    result.is_tuple = out_specs.size() > 1;
    mapped_[n] = std::move(result);
  }

  void ir_op(const ir::Node* n, ir::IrOp op) {
    if (op == ir::IrOp::make_tuple) {
      Mapped m{{}, true};
      for (size_t i = 0; i < n->num_args(); ++i) {
        const Mapped& item = value_of(n->arg(i));
        m.values.insert(m.values.end(), item.values.begin(), item.values.end());
      }
      mapped_[n] = std::move(m);
      return;
    }
    if (op == ir::IrOp::tuple_getitem && n->arg(1)->is_constant()) {
      const Mapped& t = value_of(n->arg(0));
      const int64_t* k = std::get_if<int64_t>(&n->arg(1)->value());
      if (k == nullptr || *k < 0 || *k >= static_cast<int64_t>(t.values.size()))
        throw ExportError(fmt::format("tuple_getitem of node %{} has no constant index in range", n->id()));
      mapped_[n] = Mapped{{t.values[static_cast<size_t>(*k)]}, false};
      return;
    }
    if (op == ir::IrOp::depend || op == ir::IrOp::stop_gradient) {
      mapped_[n] = value_of(n->arg(0));
      return;
    }
    throw ExportError(fmt::format("the traced graph uses {}, which has no ONNX form", ir::ir_op_name(op)));
  }

  // The graph's outputs: "output" (or output_0, output_1, ... for a
  // tuple), each an Identity of the value it is.
  void outputs(const ir::Node* out) {
    std::vector<OnnxValue> values;
    if (out->is_constant()) throw ExportError("the network's output does not depend on its inputs");
    values = value_of(out).values;
    for (size_t i = 0; i < values.size(); ++i) {
      OnnxValue o{values.size() == 1 ? "output" : fmt::format("output_{}", i), values[i].spec};
      b_.node("Identity", {values[i].name}, {o.name});
      set_type(b_.graph()->add_output(), o);
    }
  }

  const ExportRequest& r_;
  Builder b_;
  std::unordered_map<const ir::Node*, Mapped> mapped_;
  std::unordered_map<std::string, std::string> constants_;
};

// Drops the nodes no output needs (batch norm's pass-through statistics in
// an inference graph) and the value_info of what they made.
void prune_unused(onnx::GraphProto* g) {
  std::unordered_set<std::string> needed;
  for (const onnx::ValueInfoProto& o : g->output()) needed.insert(o.name());
  std::vector<bool> keep(static_cast<size_t>(g->node_size()), false);
  for (int i = g->node_size() - 1; i >= 0; --i) {
    const onnx::NodeProto& n = g->node(i);
    for (const std::string& o : n.output())
      if (needed.count(o)) keep[static_cast<size_t>(i)] = true;
    if (keep[static_cast<size_t>(i)])
      for (const std::string& in : n.input()) needed.insert(in);
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int i = 0; i < g->node_size(); ++i)
    if (keep[static_cast<size_t>(i)]) *nodes.Add() = g->node(i);
  g->mutable_node()->Swap(&nodes);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
  for (const onnx::ValueInfoProto& v : g->value_info())
    if (needed.count(v.name())) *infos.Add() = v;
  g->mutable_value_info()->Swap(&infos);
  google::protobuf::RepeatedPtrField<onnx::TensorProto> inits;
  for (const onnx::TensorProto& t : g->initializer())
    if (needed.count(t.name())) *inits.Add() = t;
  g->mutable_initializer()->Swap(&inits);
}

}  // namespace

std::string export_model(const ExportRequest& request) {
  onnx::ModelProto model;
  model.set_ir_version(7);  // the IR version of opset 13 (ONNX 1.8)
  model.set_producer_name("msl");
  model.set_producer_version(MSL_VERSION_STRING);
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpset);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name(request.graph_name);
  Exporter(request, g).run();
  prune_unused(g);
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw ExportError("the ONNX model could not be serialized (over 2 GB?)");
  return bytes;
}

}  // namespace msl::onnx_export
