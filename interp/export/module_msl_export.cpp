// The native module `msl._export`: what msl.export needs from the ONNX
// exporter (interp/export/onnx_export.h).
//
//   onnx(fn, inputs, params, path)
//       traces fn(*inputs) (a network in inference mode) at the inputs'
//       shapes and dtypes and writes the ONNX model to `path` (temporary
//       file, fsync, rename); params is a list of (name, Parameter) pairs
//       naming the initializers.
#include <fmt/format.h>

#include <map>

#include "interp/builtins/builtins.h"
#include "interp/checkpoint/checkpoint.h"
#include "interp/core/native_args.h"
#include "interp/export/onnx_export.h"
#include "interp/tensor/tensor_object.h"
#include "interp/tensor/trace.h"
#include "lang/ir/ir_module.h"

namespace msl {

namespace {

Value f_onnx(Interp& I, Args& a, Object*) {
  Value v[4];
  bind_positional(I, "onnx", a, 4, 4, v);
  const Value& fn = v[0];
  std::vector<Value> inputs = I.to_vector(v[1]);
  std::string path = arg_str(I, v[3], "onnx() argument 'path'")->s;
  onnx_export::ExportRequest req;
  std::vector<trace::TraceInput> trace_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!is_tensor(inputs[i]))
      raise_type_error(I, fmt::format("export: input {} must be a Tensor, got {}", i, I.type_name(inputs[i])));
    const kernels::Tensor& t = tensor_of(inputs[i]);
    trace_inputs.push_back(trace::TraceInput::tensor(t.dtype(), t.shape(), t.spec().device));
    req.inputs.push_back(t.spec());
    req.input_names.push_back(inputs.size() == 1 ? "input" : fmt::format("input_{}", i));
  }
  // Parameters by storage: a trace captures them as tensor constants.
  std::map<const kernels::Storage*, std::string> names;
  for (const Value& pair : I.to_vector(v[2])) {
    std::vector<Value> item = I.to_vector(pair);
    if (item.size() != 2 || !item[0].is(Kind::Str) || !is_tensor(item[1]))
      raise_type_error(I, "export: params must be (name, Parameter) pairs");
    const kernels::Tensor& t = tensor_of(item[1]);
    names.emplace(t.storage(), static_cast<Str*>(item[0].obj())->s);
  }
  req.parameter_name = [&](const kernels::Tensor& t) -> std::string {
    auto it = names.find(t.storage());
    return it != names.end() && t.offset() == 0 ? it->second : "";
  };
  ir::IrModule module;
  req.graph = trace::trace_function(I, module, fn, trace_inputs, {}, "export", /*freeze_parameters=*/true);
  req.graph_name = I.type_name(fn);
  std::string bytes;
  try {
    bytes = onnx_export::export_model(req);
  } catch (const onnx_export::ExportError& e) {
    raise_value_error(I, fmt::format("export to ONNX: {}", e.what()));
  } catch (...) {
    raise_current_kernel_error(I);
  }
  try {
    checkpoint::write_file_atomically(path, bytes);
  } catch (const checkpoint::SystemError& e) {
    raise_os_error(I, e.err, e.path);
  }
  return Value::none();
}

}  // namespace

void init_module_msl_export(Interp& I, Module& m) { I.def_native(&m, "onnx", f_onnx); }

}  // namespace msl
