// The native module `msl._checkpoint`: checkpoint files for
// msl.train.serialization (save_checkpoint / load_checkpoint).
//
//   read(path)                      -> [(name, Tensor), ...] in file order
//   read_with_crc(path)             -> ([(name, Tensor), ...], has_crc): whether
//                                   the file carried a CRC32 (then verified)
//   write(path, items, metadata=[], crc=False)
//                                   items: [(name, Tensor), ...]; metadata:
//                                   [(key, value), ...] strings, safetensors
//                                   only; crc: MindSpore's CRC32 (crc_check)
//   read_bytes(path)                -> [int, ...]  the file's bytes
//   write_bytes(path, ints)         writes bytes 0..255 (crash-safe as write)
//   remove_stale_temp(path)         -> bool: removes `.NAME.tmp-XXXXXX` if its
//                                   writer is gone (checkpoint.h)
//   first_non_finite(items)         -> the name of the first tensor with a NaN
//                                   or an infinity, or None
//   read_npy(path) -> Tensor, read_npz(path) -> [(name, Tensor), ...],
//   write_npy(path, tensor), write_npz(path, items, compress)
//                                   NumPy's files, for numpy.load/save/savez
//
// The format follows the extension: .ckpt (MindSpore protobuf) or
// .safetensors. The byte functions exist because MSL has no bytes type:
// they let scripts build, inspect and truncate checkpoint files byte by byte
// (tests of the file formats and of corrupt input).
//
// Errors: a failed system call is the OSError subclass Python raises
// (FileNotFoundError, IsADirectoryError, ...); a file that is not a valid
// checkpoint, or tensors that cannot be saved, a ValueError whose message
// names the file and the problem (checkpoint.h).
#include <fmt/format.h>

#include "interp/builtins/builtins.h"
#include "interp/checkpoint/checkpoint.h"
#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"

namespace msl {

namespace {

std::string path_arg(Interp& I, const Value& v, const char* fname) {
  if (!v.is(Kind::Str)) raise_type_error(I, fmt::format("{}: path must be a str, not {}", fname, I.type_name(v)));
  const std::string& s = v.as<Str>()->s;
  if (s.find('\0') != std::string::npos)
    raise_value_error(I, fmt::format("{}: embedded null character in path", fname));
  return s;
}

// Runs f() translating checkpoint exceptions into MSL ones.
template <class F>
auto checkpoint_call(Interp& I, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const checkpoint::SystemError& e) {
    raise_os_error(I, e.err, e.path);
  } catch (const checkpoint::FormatError& e) {
    raise_value_error(I, e.what());
  } catch (...) {
    raise_current_kernel_error(I);
  }
}

const std::vector<Value>& sequence_items(Interp& I, const Value& v, const char* what) {
  if (v.is(Kind::List)) return v.as<List>()->items;
  if (v.is(Kind::Tuple)) return v.as<Tuple>()->items;
  raise_type_error(I, fmt::format("{} must be a list or tuple, not {}", what, I.type_name(v)));
}

// A (str, str-or-Tensor) pair of a list argument.
std::pair<Value, Value> pair_item(Interp& I, const Value& v, const char* fname, size_t index) {
  if (v.is(Kind::Tuple) || v.is(Kind::List)) {
    const auto& items = sequence_items(I, v, fname);
    if (items.size() == 2 && items[0].is(Kind::Str)) return {items[0], items[1]};
  }
  raise_type_error(
      I, fmt::format("{}: item {} must be a (name, value) pair with a str name, not {}", fname, index, I.repr(v)));
}

Value tensor_list(std::vector<checkpoint::NamedTensor>& tensors, Object* tensor_cls) {
  std::vector<Value> out;
  out.reserve(tensors.size());
  for (auto& nt : tensors)
    out.push_back(new_tuple({str_value(nt.name), wrap_tensor(static_cast<Class*>(tensor_cls),
                                                             nt.tensor.to_device(kernels::default_device()))}));
  return new_list(std::move(out));
}

Value f_read(Interp& I, Args& a, Object* data) {
  Value v[1];
  bind_args(I, "read", a, {"path"}, 1, v);
  std::string path = path_arg(I, v[0], "read");
  auto tensors = checkpoint_call(I, [&] { return checkpoint::read_checkpoint(path); });
  return tensor_list(tensors, data);
}

Value f_read_with_crc(Interp& I, Args& a, Object* data) {
  Value v[1];
  bind_args(I, "read_with_crc", a, {"path"}, 1, v);
  std::string path = path_arg(I, v[0], "read_with_crc");
  bool has_crc = false;
  auto tensors = checkpoint_call(I, [&] { return checkpoint::read_checkpoint(path, &has_crc); });
  return new_tuple({tensor_list(tensors, data), Value::boolean(has_crc)});
}

// The (name, Tensor) pairs of `items` (`fname` names the caller in errors).
std::vector<checkpoint::NamedTensor> named_tensors(Interp& I, const Value& items, const char* fname) {
  std::vector<checkpoint::NamedTensor> tensors;
  size_t index = 0;
  for (const Value& item : sequence_items(I, items, fmt::format("{}() items", fname).c_str())) {
    auto [name, value] = pair_item(I, item, fname, index++);
    if (is_tracer(value))
      raise_type_error(I, fmt::format("{}: '{}' is a tensor being traced or compiled; save checkpoints outside "
                                      "compiled code",
                                      fname, name.as<Str>()->s));
    if (!is_tensor(value))
      raise_type_error(I, fmt::format("{}: the value of '{}' must be a Tensor or Parameter, not {}", fname,
                                      name.as<Str>()->s, I.type_name(value)));
    tensors.push_back({name.as<Str>()->s, tensor_of(value)});
  }
  return tensors;
}

Value f_write(Interp& I, Args& a, Object*) {
  Value v[4];
  bind_args(I, "write", a, {"path", "items", "metadata", "crc"}, 2, v);
  std::string path = path_arg(I, v[0], "write");
  std::vector<checkpoint::NamedTensor> tensors = named_tensors(I, v[1], "write");
  size_t index = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
  if (!v[2].is_undef() && !v[2].is_none()) {
    index = 0;
    for (const Value& item : sequence_items(I, v[2], "write() metadata")) {
      auto [key, value] = pair_item(I, item, "write metadata", index++);
      if (!value.is(Kind::Str))
        raise_type_error(I, fmt::format("write: metadata value of '{}' must be a str, not {}", key.as<Str>()->s,
                                        I.type_name(value)));
      metadata.emplace_back(key.as<Str>()->s, value.as<Str>()->s);
    }
  }
  bool crc = !v[3].is_undef() && I.truthy(v[3]);
  checkpoint_call(I, [&] { checkpoint::write_checkpoint(path, tensors, metadata, crc); });
  return Value::none();
}

Value f_read_bytes(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "read_bytes", a, 1, 1, v);
  std::string path = path_arg(I, v[0], "read_bytes");
  std::string bytes = checkpoint_call(I, [&] { return checkpoint::read_whole_file(path); });
  check_result_size(I, bytes.size(), kMaxResultItems);
  std::vector<Value> out;
  out.reserve(bytes.size());
  for (char c : bytes) out.push_back(Value::integer(static_cast<unsigned char>(c)));
  return new_list(std::move(out));
}

Value f_write_bytes(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "write_bytes", a, 2, 2, v);
  std::string path = path_arg(I, v[0], "write_bytes");
  std::string bytes;
  for (const Value& b : sequence_items(I, v[1], "write_bytes() data")) {
    if (!b.is_int() || b.as_int() < 0 || b.as_int() > 255)
      raise_value_error(I, fmt::format("write_bytes: bytes must be ints in range(0, 256), got {}", I.repr(b)));
    bytes += static_cast<char>(b.as_int());
  }
  checkpoint_call(I, [&] { checkpoint::write_file_atomically(path, bytes); });
  return Value::none();
}

Value f_remove_stale_temp(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "remove_stale_temp", a, 1, 1, v);
  return Value::boolean(checkpoint::remove_stale_temp_file(path_arg(I, v[0], "remove_stale_temp")));
}

Value f_first_non_finite(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "first_non_finite", a, 1, 1, v);
  std::vector<checkpoint::NamedTensor> tensors = named_tensors(I, v[0], "first_non_finite");
  const std::string* name = checkpoint_call(I, [&] { return checkpoint::first_non_finite(tensors); });
  return name ? str_value(*name) : Value::none();
}

// numpy.load / numpy.save / numpy.savez: the arrays as tensors; the numpy
// module wraps them in ndarrays.
Value f_read_npy(Interp& I, Args& a, Object* data) {
  Value v[1];
  bind_positional(I, "read_npy", a, 1, 1, v);
  std::string path = path_arg(I, v[0], "read_npy");
  kernels::Tensor t = checkpoint_call(I, [&] { return checkpoint::parse_npy(checkpoint::read_whole_file(path), path); });
  return wrap_tensor(static_cast<Class*>(data), std::move(t));
}

Value f_read_npz(Interp& I, Args& a, Object* data) {
  Value v[1];
  bind_positional(I, "read_npz", a, 1, 1, v);
  std::string path = path_arg(I, v[0], "read_npz");
  auto tensors = checkpoint_call(I, [&] { return checkpoint::parse_npz(checkpoint::read_whole_file(path), path); });
  return tensor_list(tensors, data);
}

Value f_write_npy(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "write_npy", a, 2, 2, v);
  std::string path = path_arg(I, v[0], "write_npy");
  if (!is_tensor(v[1])) raise_type_error(I, fmt::format("write_npy: expected a Tensor, not {}", I.type_name(v[1])));
  const kernels::Tensor& t = tensor_of(v[1]);
  checkpoint_call(I, [&] { checkpoint::write_file_atomically(path, checkpoint::serialize_npy(t)); });
  return Value::none();
}

Value f_write_npz(Interp& I, Args& a, Object*) {
  Value v[3];
  bind_positional(I, "write_npz", a, 3, 3, v);
  std::string path = path_arg(I, v[0], "write_npz");
  std::vector<checkpoint::NamedTensor> tensors = named_tensors(I, v[1], "write_npz");
  bool compress = I.truthy(v[2]);
  checkpoint_call(I, [&] { checkpoint::write_file_atomically(path, checkpoint::serialize_npz(tensors, compress)); });
  return Value::none();
}

}  // namespace

void init_module_msl_checkpoint(Interp& I, Module& m) {
  Ref<Module> core = I.import_module("msl._core", nullptr);
  Value tensor = core->get(I.intern("Tensor"));
  if (!tensor.is(Kind::Class)) raise_type_error(I, "msl._checkpoint: msl._core.Tensor is not a class");
  Ref<Object> tensor_cls(tensor.obj());
  I.def_native(&m, "read", f_read, tensor_cls);
  I.def_native(&m, "read_with_crc", f_read_with_crc, tensor_cls);
  I.def_native(&m, "write", f_write);
  I.def_native(&m, "read_bytes", f_read_bytes);
  I.def_native(&m, "write_bytes", f_write_bytes);
  I.def_native(&m, "remove_stale_temp", f_remove_stale_temp);
  I.def_native(&m, "first_non_finite", f_first_non_finite);
  I.def_native(&m, "read_npy", f_read_npy, tensor_cls);
  I.def_native(&m, "read_npz", f_read_npz, tensor_cls);
  I.def_native(&m, "write_npy", f_write_npy);
  I.def_native(&m, "write_npz", f_write_npz);
}

}  // namespace msl
