// Tensors: a dtype, a shape, strides and an offset over reference-counted
// storage that lives on a device.
//
// Shapes and strides are fixed-capacity inline arrays (kMaxDims), so making a
// tensor or a view never touches the heap apart from its storage; that keeps
// per-op dispatch on tiny tensors cheap. Strides and offset count elements,
// not bytes. A view (transpose, slice, broadcast, reshape of a contiguous
// tensor) shares the storage; writes through one are seen by the other, as in
// NumPy and PyTorch.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "kernels/device.h"
#include "kernels/dtype.h"
#include "kernels/memory_budget.h"

namespace msl::kernels {

constexpr int kMaxDims = 8;

// A small fixed-capacity list of int64 (a shape, strides, or axes).
class Dims {
 public:
  Dims() = default;
  Dims(std::initializer_list<int64_t> v);
  explicit Dims(std::span<const int64_t> v);
  int size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int64_t operator[](int i) const { return d_[i]; }
  int64_t& operator[](int i) { return d_[i]; }
  void push_back(int64_t v);  // throws ShapeError beyond kMaxDims
  void resize(int n, int64_t fill = 0);
  const int64_t* begin() const { return d_; }
  const int64_t* end() const { return d_ + n_; }
  int64_t* data() { return d_; }
  std::vector<int64_t> vec() const { return {d_, d_ + n_}; }
  int64_t product() const;
  bool operator==(const Dims& o) const;
  bool operator!=(const Dims& o) const { return !(*this == o); }
  // "(3, 4)": how shapes appear in error messages (Python tuple syntax).
  std::string str() const;

 private:
  int64_t d_[kMaxDims] = {};
  int n_ = 0;
};

// Row-major strides of a contiguous tensor of `shape`.
Dims contiguous_strides(const Dims& shape);

// The buffer behind one or more tensors. Thread-safe reference count: data
// pipeline workers make tensors too. `stream` is the stream of the device its
// memory was allocated on and is freed on (the default stream for now).
struct Storage {
  Storage(Device* dev, size_t bytes, Stream stream = nullptr);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  std::atomic<int32_t> refcount{0};
  Device* device;
  Stream stream;
  void* data;
  size_t bytes;
  // The budget the bytes were charged to (kernels/memory_budget.h): the
  // current one when the storage was made; given back when it is freed.
  MemoryBudget* budget;
};

// The dtype, shape and device of a tensor without its data: what shape
// inference consumes and produces (the device is the inputs' device).
struct TensorSpec {
  TensorSpec() = default;
  TensorSpec(DType d, const Dims& s, DeviceType dev = DeviceType::CPU) : dtype(d), device(dev), shape(s) {}
  DType dtype = DType::Float32;
  // Beside dtype, in what was padding: the spec keeps its size, and the
  // copies inference makes on every eager call stay as fast.
  DeviceType device = DeviceType::CPU;
  Dims shape;
};

class Tensor {
 public:
  Tensor() = default;
  // A new contiguous tensor (uninitialized data) on `dev` (CPU by default).
  Tensor(DType dtype, const Dims& shape, Device* dev = nullptr);
  static Tensor zeros(DType dtype, const Dims& shape, Device* dev = nullptr);
  // A 0-d tensor holding `v` converted to `dtype`.
  static Tensor scalar(DType dtype, double v);
  // A view: shares `base`'s storage with the given geometry.
  static Tensor view(const Tensor& base, const Dims& shape, const Dims& strides, int64_t offset);

  Tensor(const Tensor& o);
  Tensor(Tensor&& o) noexcept;
  Tensor& operator=(const Tensor& o);
  Tensor& operator=(Tensor&& o) noexcept;
  ~Tensor();

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Dims& shape() const { return shape_; }
  const Dims& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int ndim() const { return shape_.size(); }
  int64_t dim(int i) const { return shape_[i]; }
  int64_t numel() const { return shape_.product(); }
  size_t itemsize() const { return dtype_size(dtype_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(); }
  TensorSpec spec() const { return {dtype_, shape_, storage_ ? storage_->device->type() : DeviceType::CPU}; }
  Device* device() const { return storage_ ? storage_->device : nullptr; }
  Storage* storage() const { return storage_; }
  bool is_contiguous() const;
  // True when both share storage (a write to one may change the other).
  bool shares_storage(const Tensor& o) const { return storage_ && storage_ == o.storage_; }

  bool on_cpu() const { return storage_->device->type() == DeviceType::CPU; }

  // Address of element 0 (storage data + offset). Host code may read or
  // write through it only for CPU tensors (or inside a kernel of the
  // tensor's device); anything else goes through to_host / to_device.
  void* raw() const { return static_cast<char*>(storage_->data) + offset_ * static_cast<int64_t>(itemsize()); }
  template <class T>
  T* data() const { return static_cast<T*>(raw()); }

  // A contiguous tensor with the same values (this tensor itself when it is
  // already contiguous).
  Tensor contiguous() const;
  // A new contiguous copy, never sharing storage.
  Tensor clone() const;
  // Element at flat (row-major) index i of the logical tensor, as double
  // (read through the device's copy_to_host off the CPU).
  double item_at(int64_t i) const;
  double item() const;  // the only element; ValueError unless numel()==1

  // The one path between devices and the host. to_host: this tensor itself
  // on the CPU, else a CPU copy with the same geometry (only the elements
  // the view reaches are copied). to_device: a contiguous copy on `dev`
  // (this tensor itself when it is already there).
  Tensor to_host() const;
  Tensor to_device(Device* dev) const;

 private:
  void release();
  Storage* storage_ = nullptr;
  DType dtype_ = DType::Float32;
  Dims shape_;
  Dims strides_;
  int64_t offset_ = 0;
};

// Storage offset (in elements) of the element at row-major index `flat`.
int64_t strided_offset(const Dims& shape, const Dims& strides, int64_t flat);

// Copies src into dst elementwise (same shape; any strides and dtypes, with
// conversion). The generic fallback that movement and cast kernels use: it
// reads and writes memory directly, so it runs on CPU tensors or inside a
// kernel of their device (DebugAccess); host code with tensors of any device
// calls copy_tensor.
void copy_strided(const Tensor& src, const Tensor& dst);
// copy_strided for tensors on any devices (src is moved to dst's device
// first; a non-CPU dst is written by the assign primitive).
void copy_tensor(const Tensor& src, const Tensor& dst);

}  // namespace msl::kernels
