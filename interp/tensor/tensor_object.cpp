// The tensor value itself: allocation of TensorObj wrappers, translation of
// kernel exceptions, and conversions between MSL values and tensors (nested
// lists in, nested lists and Python scalars out).
//
// Building a tensor from nested lists takes two walks over the data: the
// first checks that the nesting is rectangular and infers the dtype, the
// second stores the values. Checking first means a ragged list fails before
// anything is allocated, with the position of the first offending item.
// Integers are stored without a detour through double, so int64 values keep
// all 64 bits. A tracer is never converted: a concrete tensor cannot hold
// traced values (interp/tensor/trace.h), which is a trace error.
#include "interp/tensor/tensor_object.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <new>
#include <stdexcept>

#include "interp/core/native_args.h"
#include "interp/tensor/trace.h"
#include "kernels/errors.h"

namespace msl {

using kernels::Dims;
using kernels::DType;
using kernels::Tensor;

// ---------------------------------------------------------------- allocation

namespace {

// Recently freed TensorObj blocks of this thread, reused before malloc.
struct FreeBlocks {
  void* head = nullptr;
  int count = 0;
  ~FreeBlocks() {
    while (head) {
      void* next = *static_cast<void**>(head);
      ::operator delete(head);
      head = next;
    }
  }
};
thread_local FreeBlocks tl_free_blocks;
constexpr int kMaxFreeBlocks = 4096;

}  // namespace

void* TensorObj::operator new(size_t n) {
  FreeBlocks& f = tl_free_blocks;
  if (n == sizeof(TensorObj) && f.head) {
    void* p = f.head;
    f.head = *static_cast<void**>(p);
    --f.count;
    return p;
  }
  return ::operator new(n);
}

void TensorObj::operator delete(void* p, size_t n) {
  FreeBlocks& f = tl_free_blocks;
  if (n == sizeof(TensorObj) && f.count < kMaxFreeBlocks) {
    *static_cast<void**>(p) = f.head;
    f.head = p;
    ++f.count;
    return;
  }
  ::operator delete(p);
}

// -------------------------------------------------------------------- errors

void raise_current_kernel_error(Interp& I) {
  try {
    throw;
  } catch (const MslError&) {
    throw;
  } catch (const MslExit&) {
    throw;
  } catch (const kernels::ShapeError& e) {
    raise_exc(I, "ShapeError", e.what());
  } catch (const kernels::DTypeError& e) {
    raise_type_error(I, e.what());
  } catch (const kernels::ValueError& e) {
    raise_value_error(I, e.what());
  } catch (const kernels::IndexError& e) {
    raise_exc(I, "IndexError", e.what());
  } catch (const kernels::ZeroDivisionError& e) {
    raise_exc(I, "ZeroDivisionError", e.what());
  } catch (const kernels::KernelError& e) {
    raise_exc(I, "RuntimeError", e.what());
  } catch (const kernels::OutOfMemory& e) {
    raise_exc(I, "MemoryError", e.what());
  } catch (const std::bad_alloc&) {
    raise_exc(I, "MemoryError", "out of memory");
  } catch (const std::length_error&) {
    raise_exc(I, "MemoryError", "out of memory");
  } catch (const std::exception& e) {
    raise_exc(I, "RuntimeError", e.what());
  }
}

// ---------------------------------------------------------------------- dtype

DType dtype_arg(Interp& I, const Value& v, const char* fname) {
  if (is_dtype_obj(v)) return static_cast<DTypeObj*>(v.obj())->dtype;
  if (v.is(Kind::Str)) {
    DType d;
    if (kernels::parse_dtype(v.as<Str>()->s, d)) return d;
    raise_value_error(I, fmt::format("{}: unknown dtype '{}'", fname, v.as<Str>()->s));
  }
  raise_type_error(I, fmt::format("{}: dtype must be a dtype such as msl.float32, not {}", fname, I.type_name(v)));
}

// ------------------------------------------------------------- from values

namespace {

bool is_number_value(const Value& v) { return v.is_int() || v.is_float() || v.is_bool(); }
bool is_seq(const Value& v) { return v.is(Kind::List) || v.is(Kind::Tuple); }
const std::vector<Value>& seq_items(const Value& v) {
  return v.is(Kind::List) ? v.as<List>()->items : v.as<Tuple>()->items;
}

// Stores a Python number into element i of a buffer of dtype t (ints exactly).
void store_number(void* base, DType t, int64_t i, const Value& v) {
  if (v.is_int() && t == DType::Int64) {
    static_cast<int64_t*>(base)[i] = v.as_int();
    return;
  }
  double d = v.is_float() ? v.as_float() : v.is_int() ? static_cast<double>(v.as_int()) : (v.as_bool() ? 1.0 : 0.0);
  kernels::store_from_double(base, t, i, d);
}

std::string path_str(const std::vector<int64_t>& path) { return fmt::format("[{}]", fmt::join(path, ", ")); }

const char* describe(Interp& I, const Value& v, std::string& buf) {
  if (is_seq(v)) {
    buf = fmt::format("a sequence of length {}", seq_items(v).size());
  } else if (is_number_value(v)) {
    buf = "a number";
  } else if (is_tensor(v)) {
    buf = fmt::format("a tensor of shape {}", tensor_of(v).shape().str());
  } else {
    buf = I.type_name(v);
  }
  return buf.c_str();
}

struct ListBuilder {
  ListBuilder(Interp& interp, const char* name) : I(interp), fname(name) {}
  Interp& I;
  const char* fname;
  Dims shape;
  bool any_bool = false, any_int = false, any_float = false, any_tensor = false;
  DType tensor_dtype = DType::Bool;
  std::vector<int64_t> path;
  uint64_t visited = 0;

  // The shape implied by the first element of every level.
  void find_shape(const Value& v) {
    const Value* cur = &v;
    while (is_seq(*cur)) {
      const auto& items = seq_items(*cur);
      if (shape.size() == kernels::kMaxDims)
        raise_exc(I, "ShapeError", fmt::format("{}: tensors have at most {} dimensions", fname, kernels::kMaxDims));
      shape.push_back(static_cast<int64_t>(items.size()));
      if (items.empty()) return;
      cur = &items[0];
    }
    if (is_tensor(*cur)) {
      if (shape.size() + tensor_of(*cur).ndim() > kernels::kMaxDims)
        raise_exc(I, "ShapeError", fmt::format("{}: tensors have at most {} dimensions", fname, kernels::kMaxDims));
      for (int64_t d : tensor_of(*cur).shape()) shape.push_back(d);
    }
  }

  [[noreturn]] void inconsistent(const Value& got, int depth) {
    std::string expected;
    if (depth == shape.size()) {
      expected = "a number";
    } else if (is_tensor(got)) {
      Dims rest;
      for (int i = depth; i < shape.size(); ++i) rest.push_back(shape[i]);
      expected = fmt::format("a tensor of shape {}", rest.str());
    } else {
      expected = fmt::format("a sequence of length {}", shape[depth]);
    }
    std::string buf;
    raise_value_error(I, fmt::format("{}: inconsistent shape at {}: expected {}, got {}", fname, path_str(path),
                                     expected, describe(I, got, buf)));
  }

  // Checks that v has the shape shape[depth:] (lists and tensors may mix).
  void check(const Value& v, int depth) {
    if (is_seq(v)) {
      const auto& items = seq_items(v);
      if (depth == shape.size() || static_cast<int64_t>(items.size()) != shape[depth]) inconsistent(v, depth);
      path.push_back(0);
      for (size_t i = 0; i < items.size(); ++i) {
        path.back() = static_cast<int64_t>(i);
        check(items[i], depth + 1);
      }
      path.pop_back();
      if ((++visited & 0x3FF) == 0) tick(I);
      return;
    }
    if (is_tracer(v))
      trace::cannot_trace(I, v, fmt::format("{}: a list holding a traced tensor cannot become a tensor", fname));
    if (is_tensor(v)) {
      const Tensor& t = tensor_of(v);
      bool ok = t.ndim() == shape.size() - depth;
      for (int i = 0; ok && i < t.ndim(); ++i) ok = t.dim(i) == shape[depth + i];
      if (!ok) inconsistent(v, depth);
      tensor_dtype = any_tensor ? kernels::promote_types(tensor_dtype, t.dtype()) : t.dtype();
      any_tensor = true;
      return;
    }
    if (is_number_value(v)) {
      if (depth != shape.size()) inconsistent(v, depth);
      if (v.is_bool())
        any_bool = true;
      else if (v.is_int())
        any_int = true;
      else
        any_float = true;
      return;
    }
    raise_type_error(I, fmt::format("{}: unsupported element type '{}' at {}", fname, I.type_name(v), path_str(path)));
  }

  DType inferred() const {
    DType d = any_float ? DType::Float32 : any_int ? DType::Int64 : any_bool ? DType::Bool : DType::Float32;
    if (any_tensor) d = (any_float || any_int || any_bool) ? kernels::promote_types(d, tensor_dtype) : tensor_dtype;
    return d;
  }

  // Stores the leaves of v in row-major order into `out`, from element `pos`.
  void fill(const Value& v, const Tensor& out, int64_t& pos) {
    if (is_seq(v)) {
      for (const Value& x : seq_items(v)) fill(x, out, pos);
      return;
    }
    if (is_tensor(v)) {
      const Tensor& t = tensor_of(v);
      Tensor dst = Tensor::view(out, t.shape(), kernels::contiguous_strides(t.shape()), out.offset() + pos);
      kernels::copy_strided(t.to_host(), dst);
      pos += t.numel();
      return;
    }
    store_number(out.raw(), out.dtype(), pos++, v);
  }
};

constexpr int64_t kMaxListElements = int64_t(1) << 31;

}  // namespace

bool tensor_of_protocol(Interp& I, const Value& v, Tensor& out) {
  if (!v.is(Kind::Instance)) return false;
  Value method = I.getattr_or_undef(v, I.intern("__tensor__"));
  if (method.is_undef()) return false;
  Value t = I.call(method, {});
  if (!is_tensor(t))
    raise_type_error(I, fmt::format("{}.__tensor__() returned {}, not a Tensor", I.type_name(v), I.type_name(t)));
  out = tensor_of(t);
  return true;
}

Tensor tensor_from_value(Interp& I, const Value& v, const DType* dtype, const char* fname) {
  if (Tensor shared; tensor_of_protocol(I, v, shared)) {
    if ((!dtype || *dtype == shared.dtype()) && shared.device() == kernels::default_device()) return shared;
    return kernel_call(I, [&] {
      Tensor t(dtype ? *dtype : shared.dtype(), shared.shape(), kernels::default_device());
      kernels::copy_tensor(shared, t);
      return t;
    });
  }
  if (is_tracer(v))
    trace::cannot_trace(I, v, fmt::format("{}: a traced tensor cannot be copied into a new tensor", fname));
  if (is_tensor(v)) {
    const Tensor& src = tensor_of(v);
    return kernel_call(I, [&] {
      Tensor t(dtype ? *dtype : src.dtype(), src.shape(), kernels::default_device());
      kernels::copy_tensor(src, t);
      return t;
    });
  }
  if (is_number_value(v)) {
    DType d = dtype ? *dtype : v.is_float() ? DType::Float32 : v.is_int() ? DType::Int64 : DType::Bool;
    return kernel_call(I, [&] {
      Tensor t(d, Dims{});
      store_number(t.raw(), d, 0, v);
      return t.to_device(kernels::default_device());
    });
  }
  if (!is_seq(v))
    raise_type_error(I, fmt::format("{}: input_data must be a number, a list/tuple of numbers or a Tensor, not {}",
                                    fname, I.type_name(v)));
  ListBuilder b(I, fname);
  b.find_shape(v);
  int64_t n = 1;
  for (int64_t d : b.shape) {
    if (d != 0 && n > kMaxListElements / d) raise_exc(I, "MemoryError", fmt::format("{}: too many elements", fname));
    n *= d;
  }
  b.check(v, 0);
  DType d = dtype ? *dtype : b.inferred();
  return kernel_call(I, [&] {
    Tensor t(d, b.shape);
    int64_t pos = 0;
    if (n > 0) b.fill(v, t, pos);
    return t.to_device(kernels::default_device());
  });
}

// ---------------------------------------------------------------- operands

Tensor scalar_operand(const Value& v, DType like) {
  using kernels::PyNumber;
  DType d = kernels::python_number_dtype(v.is_float() ? PyNumber::Float : v.is_int() ? PyNumber::Int : PyNumber::Bool,
                                         &like);
  Tensor t(d, Dims{});
  store_number(t.raw(), d, 0, v);
  return t;
}

namespace {

// Recently used scalar operands, by (dtype, value). Entries are never
// written after creation and callers only read them.
struct ScalarCacheEntry {
  DType dtype;
  Tag tag;
  uint64_t bits;
  Tensor t;
};
thread_local ScalarCacheEntry tl_scalar_cache[16];

Tensor shared_scalar(const Value& v, DType like) {
  uint64_t bits = 0;
  if (v.is_float()) {
    double d = v.as_float();
    std::memcpy(&bits, &d, sizeof bits);
  } else {
    bits = static_cast<uint64_t>(v.is_int() ? v.as_int() : v.as_bool());
  }
  size_t h = (bits * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(like) * 31 ^ static_cast<uint64_t>(v.tag())) >> 60;
  ScalarCacheEntry& e = tl_scalar_cache[h];
  if (e.t.defined() && e.bits == bits && e.dtype == like && e.tag == v.tag()) return e.t;
  Tensor t = scalar_operand(v, like);
  e.dtype = like;
  e.tag = v.tag();
  e.bits = bits;
  e.t = t;
  return t;
}

}  // namespace

bool operand_tensor(Interp& I, const Value& v, DType like, Tensor& out, const char* fname, bool shared_scalars) {
  if (is_tensor(v)) {
    out = tensor_of(v);
    return true;
  }
  if (is_number_value(v)) {
    out = kernel_call(I, [&] { return shared_scalars ? shared_scalar(v, like) : scalar_operand(v, like); });
    return true;
  }
  if (is_seq(v)) {
    out = tensor_from_value(I, v, nullptr, fname);
    return true;
  }
  if (!tensor_of_protocol(I, v, out)) return false;
  // A NumPy array lives on the host; it meets tensors on the default device.
  if (out.device() != kernels::default_device()) out = kernel_call(I, [&] { return out.to_device(kernels::default_device()); });
  return true;
}

// ------------------------------------------------------------ to values

namespace {

Value load_value(const void* base, DType t, int64_t off) {
  switch (t) {
    case DType::Bool: return Value::boolean(static_cast<const bool*>(base)[off]);
    case DType::Int8: return Value::integer(static_cast<const int8_t*>(base)[off]);
    case DType::UInt8: return Value::integer(static_cast<const uint8_t*>(base)[off]);
    case DType::Int32: return Value::integer(static_cast<const int32_t*>(base)[off]);
    case DType::Int64: return Value::integer(static_cast<const int64_t*>(base)[off]);
    default: return Value::number(kernels::load_as_double(base, t, off));
  }
}

Value build_list(Interp& I, const Tensor& t, int dim, int64_t off) {
  if (dim == t.ndim()) return load_value(t.storage()->data, t.dtype(), off);
  int64_t n = t.dim(dim), stride = t.strides()[dim];
  std::vector<Value> items;
  items.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) items.push_back(build_list(I, t, dim + 1, off + i * stride));
  if (dim + 1 == t.ndim()) tick(I);
  return make<List>(std::move(items)).value();
}

}  // namespace

Value element_value(const Tensor& t, int64_t flat) {
  int64_t at = t.offset() + kernels::strided_offset(t.shape(), t.strides(), flat);
  if (t.on_cpu()) return load_value(t.storage()->data, t.dtype(), at);
  Tensor h = Tensor::view(t, Dims{}, Dims{}, at).to_host();
  return load_value(h.storage()->data, h.dtype(), h.offset());
}

Value tensor_to_list(Interp& I, const Tensor& t_any) {
  check_result_size(I, static_cast<uint64_t>(t_any.numel()), kMaxResultItems);
  Tensor t = t_any.to_host();
  return build_list(I, t, 0, t.offset());
}

Value tensor_item(Interp& I, const Tensor& t) {
  if (t.numel() != 1)
    raise_value_error(I, fmt::format("item: only a tensor with one element can be converted to a Python scalar, "
                                     "got shape {}",
                                     t.shape().str()));
  return element_value(t, 0);
}

}  // namespace msl
