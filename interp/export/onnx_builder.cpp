// Values, nodes, attributes and initializers of the exported graph
// (onnx_builder.h).
#include "interp/export/onnx_builder.h"

#include <fmt/format.h>

#include <cstring>

#include "interp/export/onnx_export.h"

namespace msl::onnx_export {

using kernels::DType;

int onnx_dtype(DType d) {
  switch (d) {
    case DType::Bool: return onnx::TensorProto::BOOL;
    case DType::Int8: return onnx::TensorProto::INT8;
    case DType::UInt8: return onnx::TensorProto::UINT8;
    case DType::Int32: return onnx::TensorProto::INT32;
    case DType::Int64: return onnx::TensorProto::INT64;
    case DType::Float16: return onnx::TensorProto::FLOAT16;
    case DType::BFloat16: return onnx::TensorProto::BFLOAT16;
    case DType::Float32: return onnx::TensorProto::FLOAT;
    case DType::Float64: return onnx::TensorProto::DOUBLE;
  }
  throw ExportError(fmt::format("no ONNX type for {}", kernels::dtype_name(d)));
}

std::string Builder::fresh(const std::string& stem) {
  int& n = used_[stem];
  std::string name = n == 0 ? stem : fmt::format("{}_{}", stem, n);
  ++n;
  return name;
}

onnx::NodeProto* Builder::node(const std::string& op, const std::vector<std::string>& in,
                               const std::vector<std::string>& out) {
  onnx::NodeProto* n = g_->add_node();
  n->set_op_type(op);
  n->set_name(fresh(op));
  for (const std::string& s : in) n->add_input(s);
  for (const std::string& s : out) n->add_output(s);
  return n;
}

std::string Builder::initializer(const kernels::Tensor& t, const std::string& name) {
  std::string n = name.empty() ? fresh("const") : name;
  onnx::TensorProto* p = g_->add_initializer();
  p->set_name(n);
  p->set_data_type(onnx_dtype(t.dtype()));
  for (int i = 0; i < t.ndim(); ++i) p->add_dims(t.dim(i));
  kernels::Tensor host = t.to_host().contiguous();
  p->set_raw_data(std::string(static_cast<const char*>(host.raw()), host.nbytes()));
  return n;
}

std::string Builder::int64s(const std::vector<int64_t>& v) {
  kernels::Tensor t(DType::Int64, kernels::Dims{static_cast<int64_t>(v.size())});
  if (!v.empty()) std::memcpy(t.raw(), v.data(), v.size() * sizeof(int64_t));
  return initializer(t);
}

std::string Builder::scalar(DType d, double v) { return initializer(kernels::Tensor::scalar(d, v)); }

void set_type(onnx::ValueInfoProto* info, const OnnxValue& v) {
  info->set_name(v.name);
  onnx::TypeProto_Tensor* t = info->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx_dtype(v.spec.dtype));
  onnx::TensorShapeProto* shape = t->mutable_shape();
  for (int i = 0; i < v.spec.shape.size(); ++i) shape->add_dim()->set_dim_value(v.spec.shape[i]);
}

void Builder::value_info(const OnnxValue& v) { set_type(g_->add_value_info(), v); }

void attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void attr(onnx::NodeProto* n, const std::string& name, float v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void attr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

}  // namespace msl::onnx_export
