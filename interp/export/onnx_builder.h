// The pieces of an ONNX graph the exporter writes (onnx_export.cpp drives,
// onnx_ops.cpp translates primitives): named values, nodes with
// attributes, initializers.
#pragma once

#include <onnx.pb.h>

#include <map>
#include <string>
#include <vector>

#include "kernels/tensor.h"
#include "lang/ir/node.h"

namespace msl::onnx_export {

// A tensor of the ONNX graph: its name and type.
struct OnnxValue {
  std::string name;
  kernels::TensorSpec spec;
};

// ONNX's TensorProto.DataType of `d`.
int onnx_dtype(kernels::DType d);

class Builder {
 public:
  explicit Builder(onnx::GraphProto* g) : g_(g) {}
  // A name not used yet, from `stem`.
  std::string fresh(const std::string& stem);
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out);
  // An initializer holding `t` (named `name`, or fresh from "const").
  std::string initializer(const kernels::Tensor& t, const std::string& name = "");
  std::string int64s(const std::vector<int64_t>& v);
  // A 0-d initializer of dtype `d` holding `v`.
  std::string scalar(kernels::DType d, double v);
  void value_info(const OnnxValue& v);
  onnx::GraphProto* graph() { return g_; }

 private:
  onnx::GraphProto* g_;
  std::map<std::string, int> used_;
};

void attr(onnx::NodeProto* n, const std::string& name, int64_t v);
void attr(onnx::NodeProto* n, const std::string& name, float v);
void attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v);
void attr(onnx::NodeProto* n, const std::string& name, const std::string& v);
void set_type(onnx::ValueInfoProto* info, const OnnxValue& v);

// Emits primitive `p` applied to `in` as ONNX nodes whose results are named
// as `out` (names and the specs kernels::infer gave). ExportError for a
// primitive or attribute ONNX cannot express.
void emit_prim(Builder& b, const ir::PrimRef& p, const std::vector<OnnxValue>& in, const std::vector<OnnxValue>& out);

}  // namespace msl::onnx_export
