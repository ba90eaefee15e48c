// MindSpore's .ckpt format: one protobuf Checkpoint message
// (checkpoint.proto), compiled by protoc at build time.
//
// Conventions taken from MindSpore's serialization.py, so files move both
// ways: tensor_type is the dtype's MindSpore name ("Float32"), the content
// is the raw row-major bytes, and a 0-d tensor is written with dims [0]. On
// reading, dims [0] with one element's worth of bytes is that 0-d tensor and
// dims [0] with no bytes is an empty vector, which keeps both round trips
// exact. Int16 (which MSL lacks) is widened to Int32; other types MindSpore
// can write (UInt16/32/64, "str" for strings in append_dict, map tensors)
// are clear errors naming the tensor.
//
// Protobuf has no end marker: a file cut exactly between two parameters
// still parses, as the parameters before the cut. Every other truncation
// fails to parse (a length runs past the end or a required field is
// missing) and is reported as not a MindSpore checkpoint.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <climits>

#include "checkpoint.pb.h"
#include "interp/checkpoint.h"

namespace msl::checkpoint {

using kernels::DType;

namespace {

std::string shape_str(const std::vector<int64_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

NamedTensor convert_value(const Checkpoint::Value& v, const std::string& path) {
  const std::string& name = v.tag();
  if (!valid_utf8(name)) throw FormatError(fmt::format("{}: a parameter name is not valid UTF-8", path));
  if (v.has_maptensor())
    throw FormatError(fmt::format("{}: parameter '{}' is a map tensor, which MSL does not support", path, name));
  if (!v.has_tensor()) throw FormatError(fmt::format("{}: parameter '{}' has no tensor", path, name));
  const TensorProto& tp = v.tensor();
  const std::string& type = tp.tensor_type();
  bool widen_int16 = type == "Int16";
  DType dtype = DType::Int32;
  if (!widen_int16) {
    bool found = false;
    for (int d = 0; d < kernels::kNumDTypes; ++d)
      if (type == kernels::dtype_display_name(static_cast<DType>(d))) {
        dtype = static_cast<DType>(d);
        found = true;
      }
    if (!found)
      throw FormatError(fmt::format("{}: parameter '{}' has tensor_type '{}', which MSL does not support", path, name,
                                    type.size() > 40 ? type.substr(0, 40) + "..." : type));
  }
  size_t itemsize = widen_int16 ? 2 : kernels::dtype_size(dtype);
  std::vector<int64_t> dims(tp.dims().begin(), tp.dims().end());
  const std::string& content = tp.tensor_content();
  if (dims.size() == 1 && dims[0] == 0 && content.size() == itemsize) dims.clear();  // MindSpore's 0-d
  uint64_t want = 0;
  if (!byte_size_of(dims, itemsize, want))
    throw FormatError(fmt::format("{}: parameter '{}' has an invalid shape {}", path, name, shape_str(dims)));
  if (want != content.size())
    throw FormatError(fmt::format("{}: parameter '{}' ({} of shape {}) needs {} bytes of data, the file has {}", path,
                                  name, type, shape_str(dims), want, content.size()));
  kernels::Dims shape{std::span<const int64_t>(dims)};
  return {name, widen_int16 ? int16_tensor_from_bytes(shape, content) : tensor_from_bytes(dtype, shape, content)};
}

}  // namespace

std::vector<NamedTensor> parse_ckpt(std::string_view bytes, const std::string& path) {
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    throw FormatError(
        fmt::format("{}: file of {} bytes is larger than a protobuf checkpoint can be (2 GiB)", path, bytes.size()));
  Checkpoint ckpt;
  // ParsePartial + IsInitialized instead of ParseFromArray: the latter
  // logs missing required fields to stderr, and the message belongs in the
  // exception.
  if (!ckpt.ParsePartialFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw FormatError(fmt::format("not a MindSpore checkpoint (protobuf parse failed): {}", path));
  if (!ckpt.IsInitialized())
    throw FormatError(fmt::format("not a MindSpore checkpoint (protobuf parse failed): {}: missing required fields {}",
                                  path, ckpt.InitializationErrorString()));
  std::vector<NamedTensor> out;
  out.reserve(static_cast<size_t>(ckpt.value_size()));
  for (const auto& v : ckpt.value()) out.push_back(convert_value(v, path));
  return out;
}

std::string serialize_ckpt(const std::vector<NamedTensor>& tensors) {
  Checkpoint ckpt;
  size_t total = 0;
  for (const NamedTensor& nt : tensors) {
    Checkpoint::Value* v = ckpt.add_value();
    v->set_tag(nt.name);
    TensorProto* tp = v->mutable_tensor();
    const kernels::Tensor& t = nt.tensor;
    if (t.ndim() == 0)
      tp->add_dims(0);
    else
      for (int64_t d : t.shape()) tp->add_dims(d);
    tp->set_tensor_type(kernels::dtype_display_name(t.dtype()));
    tp->set_tensor_content(tensor_bytes(t));
    total += t.nbytes() + nt.name.size() + 64;
    if (total > static_cast<size_t>(INT_MAX))
      throw FormatError("checkpoint data exceeds 2 GiB, the limit of the protobuf .ckpt format; use .safetensors");
  }
  std::string out;
  if (!ckpt.SerializeToString(&out)) throw FormatError("protobuf serialization of the checkpoint failed");
  return out;
}

}  // namespace msl::checkpoint
