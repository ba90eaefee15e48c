#include "kernels/tensor.h"

#include <fmt/format.h>

#include <cstring>
#include <new>

#include "kernels/errors.h"
#include "kernels/primitives.h"

namespace msl::kernels {

// ------------------------------------------------------------------ Dims

Dims::Dims(std::initializer_list<int64_t> v) : Dims(std::span<const int64_t>(v.begin(), v.size())) {}

Dims::Dims(std::span<const int64_t> v) {
  if (v.size() > static_cast<size_t>(kMaxDims))
    throw ShapeError(fmt::format("tensors have at most {} dimensions, got {}", kMaxDims, v.size()));
  for (int64_t x : v) d_[n_++] = x;
}

void Dims::push_back(int64_t v) {
  if (n_ == kMaxDims) throw ShapeError(fmt::format("tensors have at most {} dimensions", kMaxDims));
  d_[n_++] = v;
}

void Dims::resize(int n, int64_t fill) {
  if (n > kMaxDims) throw ShapeError(fmt::format("tensors have at most {} dimensions, got {}", kMaxDims, n));
  for (int i = n_; i < n; ++i) d_[i] = fill;
  n_ = n;
}

int64_t Dims::product() const {
  int64_t p = 1;
  for (int i = 0; i < n_; ++i) p *= d_[i];
  return p;
}

bool Dims::operator==(const Dims& o) const {
  if (n_ != o.n_) return false;
  for (int i = 0; i < n_; ++i)
    if (d_[i] != o.d_[i]) return false;
  return true;
}

std::string Dims::str() const {
  std::string s = "(";
  for (int i = 0; i < n_; ++i) {
    if (i) s += ", ";
    s += std::to_string(d_[i]);
  }
  if (n_ == 1) s += ",";
  return s + ")";
}

Dims contiguous_strides(const Dims& shape) {
  Dims s;
  s.resize(shape.size());
  int64_t acc = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    s[i] = acc;
    acc *= shape[i] > 0 ? shape[i] : 1;
  }
  return s;
}

// --------------------------------------------------------------- Storage

namespace {
// Charges `n` bytes to the current budget (before anything is allocated).
MemoryBudget* charge(size_t n) {
  MemoryBudget* b = current_budget();
  if (!b) return nullptr;
  if (!b->try_charge(n)) throw std::bad_alloc();
  b->retain();
  return b;
}
}  // namespace

Storage::Storage(Device* dev, size_t n, Stream s) : device(dev), stream(s), data(nullptr), bytes(n), budget(charge(n)) {
  try {
    data = dev->allocate(n, s);
  } catch (...) {
    if (budget) {
      budget->release(n);
      budget->drop();
    }
    throw;
  }
}
Storage::~Storage() {
  device->deallocate(data, bytes, stream);
  if (budget) {
    budget->release(bytes);
    budget->drop();
  }
}

// ---------------------------------------------------------------- Tensor

namespace {
constexpr int64_t kMaxElements = int64_t(1) << 40;
}

Tensor::Tensor(DType dtype, const Dims& shape, Device* dev) : dtype_(dtype), shape_(shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw ShapeError(fmt::format("negative dimension in shape {}", shape.str()));
    if (d > 0 && n > kMaxElements / d) throw ShapeError(fmt::format("shape {} is too large", shape.str()));
    n *= d;
  }
  strides_ = contiguous_strides(shape);
  storage_ = new Storage(dev ? dev : cpu_device(), static_cast<size_t>(n) * dtype_size(dtype));
  storage_->refcount.store(1, std::memory_order_relaxed);
}

Tensor Tensor::zeros(DType dtype, const Dims& shape, Device* dev) {
  Tensor t(dtype, shape, dev);
  if (t.device()->type() == DeviceType::CPU) {
    std::memset(t.raw(), 0, t.nbytes());
  } else {
    std::vector<char> z(t.nbytes());
    t.device()->copy_from_host(t.raw(), z.data(), z.size());
  }
  return t;
}

Tensor Tensor::scalar(DType dtype, double v) {
  Tensor t(dtype, Dims{});
  store_from_double(t.raw(), dtype, 0, v);
  return t;
}

Tensor Tensor::view(const Tensor& base, const Dims& shape, const Dims& strides, int64_t offset) {
  Tensor t;
  t.storage_ = base.storage_;
  if (t.storage_) t.storage_->refcount.fetch_add(1, std::memory_order_relaxed);
  t.dtype_ = base.dtype_;
  t.shape_ = shape;
  t.strides_ = strides;
  t.offset_ = offset;
  return t;
}

Tensor::Tensor(const Tensor& o)
    : storage_(o.storage_), dtype_(o.dtype_), shape_(o.shape_), strides_(o.strides_), offset_(o.offset_) {
  if (storage_) storage_->refcount.fetch_add(1, std::memory_order_relaxed);
}

Tensor::Tensor(Tensor&& o) noexcept
    : storage_(o.storage_), dtype_(o.dtype_), shape_(o.shape_), strides_(o.strides_), offset_(o.offset_) {
  o.storage_ = nullptr;
}

Tensor& Tensor::operator=(const Tensor& o) {
  if (this != &o) {
    if (o.storage_) o.storage_->refcount.fetch_add(1, std::memory_order_relaxed);
    release();
    storage_ = o.storage_;
    dtype_ = o.dtype_;
    shape_ = o.shape_;
    strides_ = o.strides_;
    offset_ = o.offset_;
  }
  return *this;
}

Tensor& Tensor::operator=(Tensor&& o) noexcept {
  if (this != &o) {
    release();
    storage_ = o.storage_;
    dtype_ = o.dtype_;
    shape_ = o.shape_;
    strides_ = o.strides_;
    offset_ = o.offset_;
    o.storage_ = nullptr;
  }
  return *this;
}

Tensor::~Tensor() { release(); }

void Tensor::release() {
  if (storage_ && storage_->refcount.fetch_sub(1, std::memory_order_acq_rel) == 1) delete storage_;
  storage_ = nullptr;
}

bool Tensor::is_contiguous() const {
  int64_t expect = 1;
  for (int i = shape_.size() - 1; i >= 0; --i) {
    if (shape_[i] == 1) continue;
    if (shape_[i] == 0) return true;
    if (strides_[i] != expect) return false;
    expect *= shape_[i];
  }
  return true;
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_, device());
  copy_tensor(*this, t);
  return t;
}

double Tensor::item_at(int64_t i) const {
  int64_t at = offset_ + strided_offset(shape_, strides_, i);
  if (on_cpu()) return load_as_double(storage_->data, dtype_, at);
  alignas(8) char buf[16];
  storage_->device->copy_to_host(buf, static_cast<char*>(storage_->data) + at * static_cast<int64_t>(itemsize()),
                                 itemsize());
  return load_as_double(buf, dtype_, 0);
}

Tensor Tensor::to_host() const {
  if (!storage_ || on_cpu()) return *this;
  // The element range [lo, hi] the view reaches, copied to a CPU storage of
  // its own; the host tensor keeps the strides.
  int64_t lo = offset_, hi = offset_;
  if (numel() == 0) hi = lo - 1;
  else
    for (int i = 0; i < shape_.size(); ++i) {
      int64_t reach = (shape_[i] - 1) * strides_[i];
      (reach < 0 ? lo : hi) += reach;
    }
  int64_t n = hi - lo + 1;
  Tensor host(dtype_, Dims{n});
  if (n > 0)
    storage_->device->copy_to_host(host.raw(), static_cast<char*>(storage_->data) + lo * static_cast<int64_t>(itemsize()),
                                   static_cast<size_t>(n) * itemsize());
  return view(host, shape_, strides_, offset_ - lo);
}

Tensor Tensor::to_device(Device* dev) const {
  if (device() == dev) return *this;
  if (dev->type() == DeviceType::CPU) return to_host().contiguous();
  Tensor src = to_host().contiguous();
  Tensor t(dtype_, shape_, dev);
  if (t.nbytes()) dev->copy_from_host(t.raw(), src.raw(), t.nbytes());
  return t;
}

double Tensor::item() const {
  if (numel() != 1)
    throw ValueError(fmt::format("only a tensor with one element can be converted to a scalar, got shape {}",
                                 shape_.str()));
  return item_at(0);
}

int64_t strided_offset(const Dims& shape, const Dims& strides, int64_t flat) {
  int64_t off = 0;
  for (int i = shape.size() - 1; i >= 0; --i) {
    int64_t d = shape[i];
    if (d == 0) return 0;
    off += (flat % d) * strides[i];
    flat /= d;
  }
  return off;
}

void copy_tensor(const Tensor& src, const Tensor& dst) {
  if (dst.on_cpu()) {
    copy_strided(src.to_host(), dst);
    return;
  }
  if (src.shape() != dst.shape())
    throw ShapeError(fmt::format("copy: shapes {} and {} differ", src.shape().str(), dst.shape().str()));
  Tensor in[2] = {dst, src.to_device(dst.device())};
  execute1(Prim::assign, in);
}

void copy_strided(const Tensor& src, const Tensor& dst) {
  if (src.shape() != dst.shape())
    throw ShapeError(fmt::format("copy: shapes {} and {} differ", src.shape().str(), dst.shape().str()));
  int64_t n = src.numel();
  if (n == 0) return;
  if (src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous()) {
    std::memmove(dst.raw(), src.raw(), src.nbytes());
    return;
  }
  // Generic path: walk both geometries with an odometer.
  const Dims& shape = src.shape();
  int nd = shape.size();
  Dims idx;
  idx.resize(nd);
  int64_t so = src.offset(), doff = dst.offset();
  void* sbase = src.storage()->data;
  void* dbase = dst.storage()->data;
  bool same = src.dtype() == dst.dtype();
  size_t sz = src.itemsize();
  for (int64_t k = 0; k < n; ++k) {
    if (same)
      std::memcpy(static_cast<char*>(dbase) + doff * static_cast<int64_t>(sz),
                  static_cast<char*>(sbase) + so * static_cast<int64_t>(sz), sz);
    else
      store_from_double(dbase, dst.dtype(), doff, load_as_double(sbase, src.dtype(), so));
    for (int i = nd - 1; i >= 0; --i) {
      if (++idx[i] < shape[i]) {
        so += src.strides()[i];
        doff += dst.strides()[i];
        break;
      }
      so -= src.strides()[i] * (shape[i] - 1);
      doff -= dst.strides()[i] * (shape[i] - 1);
      idx[i] = 0;
    }
  }
}

}  // namespace msl::kernels
