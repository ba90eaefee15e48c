// ONNX export (msl.export(net, *inputs, file_name=..., file_format="ONNX")):
// a traced inference graph (interp/tensor/trace.h: primitives only, the
// parameters as tensor constants) written as an ONNX ModelProto, the
// protobuf schema of Debian's libonnx-dev (onnx.proto, compiled by protoc at
// build time), opset 13.
//
// Each primitive becomes the ONNX operator(s) that compute it (onnx_ops.cpp
// holds the table); tensor constants become initializers, named after the
// Parameters they are (`conv1.weight`) and otherwise const_N; Python
// numbers mixed into an operation become 0-d initializers of its dtype.
// Shapes come from kernels::infer, node by node, so the exported graph
// carries every intermediate's type (value_info) and onnx.shape_inference
// has nothing to guess. A primitive with no ONNX counterpart (a random one,
// an optimizer update, a collective) is an ExportError naming it.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/tensor.h"
#include "lang/ir/func_graph.h"

namespace msl::onnx_export {

struct ExportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr int kOpset = 13;

struct ExportRequest {
  const ir::FuncGraph* graph = nullptr;       // a trace: its params are the inputs
  std::vector<kernels::TensorSpec> inputs;    // the params' types
  std::vector<std::string> input_names;       // ONNX names of the inputs
  // The name of a tensor constant that is a Parameter, "" otherwise.
  std::function<std::string(const kernels::Tensor&)> parameter_name;
  std::string graph_name = "main";
};

// The serialized ModelProto.
std::string export_model(const ExportRequest& request);

}  // namespace msl::onnx_export
