// Shared oneDNN plumbing of the contraction, pooling and normalization
// kernels (dnnl_matmul.cpp, dnnl_conv.cpp, dnnl_pool.cpp,
// dnnl_batch_norm.cpp).
//
// Design choices:
// - One CPU engine for the process and one in-order stream per calling
//   thread. oneDNN runs on the OpenMP pool our own loops use (parallel.h),
//   with all its threads.
// - Creating a primitive descriptor costs tens of microseconds and a JIT
//   primitive much more, so every op keeps a PrimitiveCache keyed by its full
//   configuration: shapes, strides, dtypes, attributes and the OpenMP thread
//   count (oneDNN splits work by the thread count at creation time).
// - A cache entry also owns the dnnl::memory objects of its arguments; a call
//   only rebinds their data handles and executes through the C API with an
//   argument array on the stack, so the steady state allocates nothing but
//   the scratch below.
// - Scratchpads are in user mode and, like the buffers of format reorders,
//   come from one Scratch per call, which the CPU caching allocator serves
//   without malloc after the first step. Nothing derived from a weight is
//   kept between calls: weights change every training step.
// - float16 (which oneDNN 2.6 runs only on AVX512-FP16 CPUs) and bfloat16
//   where oneDNN has no fast kernel go through float32 copies; the
//   conversions here use F16C when the CPU has it.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <list>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <unordered_map>
#include <utility>

#include "kernels/contention.h"
#include "kernels/tensor.h"

namespace msl::kernels::onednn {

dnnl::engine& engine();
dnnl::stream& stream();

// oneDNN's data type for f32/bf16/f16 (the dtypes handed to oneDNN).
dnnl::memory::data_type dnnl_type(DType t);

// A buffer from the CPU caching allocator, returned at scope exit. Sized by
// a ScratchLayout so one allocation serves every temporary of a call.
class Scratch {
 public:
  Scratch() = default;
  explicit Scratch(size_t bytes);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  char* at(size_t offset) const { return static_cast<char*>(data_) + offset; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Offsets of 64-byte aligned sub-buffers inside one Scratch.
struct ScratchLayout {
  size_t total = 0;
  size_t add(size_t bytes) {
    size_t off = total;
    total += (bytes + 63) & ~size_t(63);
    return off;
  }
};

// A primitive configuration, as a short list of integers.
class Key {
 public:
  static constexpr int kCapacity = 80;
  Key& add(int64_t v);
  Key& add(const Dims& d);  // the rank, then the entries
  bool operator==(const Key& o) const;
  size_t hash() const;

 private:
  std::array<int64_t, kCapacity> v_{};
  int n_ = 0;
};

struct KeyHash {
  size_t operator()(const Key& k) const { return k.hash(); }
};

// The current OpenMP thread count, part of every key.
int64_t thread_count();

// Multiply-adds (contractions) or elements (pooling, normalization) below
// which a oneDNN call runs on one thread.
constexpr int64_t kSerialMacs = int64_t(1) << 18;
constexpr int64_t kSerialElements = int64_t(1) << 15;

// Runs the enclosed oneDNN calls (plan creation and execution) on the
// kernels' thread count, or on the calling thread alone when `serial`: an
// OpenMP fork/join costs microseconds, more than a small op, and far more
// when another process holds the other cores (so also while
// cores_contended(); a multi-threaded call is timed for that,
// kernels/contention.h). oneDNN sizes its work split by the OpenMP thread
// count, which is why the count is part of every plan key.
class SerialScope {
 public:
  explicit SerialScope(bool serial);
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int restore_ = 0;
  std::optional<CallClock> clock_;
};

// A bounded LRU map from configurations to entries. Entries are shared, so a
// caller keeps one alive while an eviction happens in another thread; each
// entry carries its own mutex for the memory objects it rebinds per call.
template <class Entry>
class PrimitiveCache {
 public:
  explicit PrimitiveCache(size_t capacity = 256) : capacity_(capacity) {}

  template <class Make>
  std::shared_ptr<Entry> get(const Key& key, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);
        return it->second->second;
      }
    }
    // Created outside the lock: JIT generation can take milliseconds.
    std::shared_ptr<Entry> e = make();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) return it->second->second;
    lru_.emplace_front(key, e);
    map_.emplace(key, lru_.begin());
    if (lru_.size() > capacity_) {
      map_.erase(lru_.back().first);
      lru_.pop_back();
    }
    return e;
  }

 private:
  using Item = std::pair<Key, std::shared_ptr<Entry>>;
  size_t capacity_;
  std::mutex mu_;
  std::list<Item> lru_;
  std::unordered_map<Key, typename std::list<Item>::iterator, KeyHash> map_;
};

// A memory descriptor for `shape` with element `strides`. Strides of size-1
// dimensions are replaced by the value a dense layout would have, since
// oneDNN picks its fast kernels by stride patterns and those are arbitrary.
dnnl::memory::desc strided_md(const Dims& shape, const Dims& strides, dnnl::memory::data_type dt);
dnnl::memory::desc plain_md(const Dims& shape, dnnl::memory::data_type dt);
// `t` itself when every dimension longer than 1 has a positive stride, else
// a contiguous copy: oneDNN descriptors cannot express the zero strides of
// broadcast views.
Tensor with_positive_strides(const Tensor& t);
// A memory object without data; bound per call with set_data_handle.
dnnl::memory unbound(const dnnl::memory::desc& md);

// True for oneDNN's reference implementations ("ref:any"): correct but
// slower than copying an operand into a layout a JIT kernel takes.
bool is_reference(const dnnl::primitive_desc_base& pd);

// A scratchpad-in-user-mode attribute.
dnnl::primitive_attr user_scratchpad_attr();

// Runs `p` on the stream with (DNNL_ARG_*, memory) pairs, then waits.
void execute(const dnnl::primitive& p, std::initializer_list<std::pair<int, const dnnl::memory*>> args);
inline void bind(const dnnl::memory& m, const void* data) { m.set_data_handle(const_cast<void*>(data)); }

// dst (float32, numel elements) from a float16/bfloat16/float32/float64
// tensor of any strides.
void convert_to_float32(const Tensor& src, float* dst);
// A contiguous float32 tensor with src's values.
Tensor to_float32(const Tensor& src);
// Writes float32 values into the contiguous tensor dst (any float dtype),
// rounding to nearest even.
void convert_from_float32(const float* src, const Tensor& dst);

}  // namespace msl::kernels::onednn
