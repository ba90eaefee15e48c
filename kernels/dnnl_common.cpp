// oneDNN engine, stream, keys, memory descriptors, execution and the
// float16/bfloat16 <-> float32 conversions of the oneDNN-backed kernels.
//
// The conversions are the only per-element loops here; they are vectorized
// with F16C (dispatched at run time, the library is built for baseline
// x86-64) and split across threads like any elementwise kernel.
#include "kernels/dnnl_common.h"

#include <fmt/format.h>
#include <immintrin.h>
#include <omp.h>

#include <cstring>
#include <string_view>

#include "kernels/device.h"
#include "kernels/errors.h"
#include "kernels/parallel.h"

namespace msl::kernels::onednn {

dnnl::engine& engine() {
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

dnnl::stream& stream() {
  // One per thread: data-pipeline workers may run kernels beside the main
  // thread, and a oneDNN stream is not meant to be shared across threads.
  thread_local dnnl::stream s(engine());
  return s;
}

dnnl::memory::data_type dnnl_type(DType t) {
  switch (t) {
    case DType::Float32: return dnnl::memory::data_type::f32;
    case DType::BFloat16: return dnnl::memory::data_type::bf16;
    case DType::Float16: return dnnl::memory::data_type::f16;
    default: throw DTypeError(fmt::format("oneDNN: unsupported dtype {}", dtype_display_name(t)));
  }
}

Scratch::Scratch(size_t bytes) : bytes_(bytes) {
  if (bytes_) data_ = cpu_device()->allocate(bytes_, nullptr);
}

Scratch::~Scratch() {
  if (data_) cpu_device()->deallocate(data_, bytes_, nullptr);
}

Key& Key::add(int64_t v) {
  // Every configuration is a fixed, small number of integers; overflowing
  // the capacity is a programming error in the caller.
  if (n_ == kCapacity) throw std::logic_error("oneDNN cache key capacity exceeded");
  v_[static_cast<size_t>(n_++)] = v;
  return *this;
}

Key& Key::add(const Dims& d) {
  add(d.size());
  for (int64_t x : d) add(x);
  return *this;
}

bool Key::operator==(const Key& o) const {
  return n_ == o.n_ && std::memcmp(v_.data(), o.v_.data(), sizeof(int64_t) * static_cast<size_t>(n_)) == 0;
}

size_t Key::hash() const {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < n_; ++i) {
    h ^= static_cast<uint64_t>(v_[static_cast<size_t>(i)]);
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  return static_cast<size_t>(h);
}

int64_t thread_count() { return omp_get_max_threads(); }

// Also where the kernels' thread count reaches oneDNN: OpenMP's count is
// per calling thread, and the default one (available_cpus) or a cgroup
// quota is not OpenMP's own.
SerialScope::SerialScope(bool serial) {
  if (omp_in_parallel()) return;
  int want = serial || (cores_contended() && !deterministic()) ? 1 : num_threads();
  if (omp_get_max_threads() != want) {
    restore_ = omp_get_max_threads();
    omp_set_num_threads(want);
  }
  if (want > 1) clock_.emplace();
}

SerialScope::~SerialScope() {
  clock_.reset();
  if (restore_) omp_set_num_threads(restore_);
}

dnnl::memory::desc strided_md(const Dims& shape, const Dims& strides, dnnl::memory::data_type dt) {
  int n = shape.size();
  dnnl::memory::dims d(static_cast<size_t>(n)), s(static_cast<size_t>(n));
  int64_t dense = 1;
  for (int i = n - 1; i >= 0; --i) {
    d[static_cast<size_t>(i)] = shape[i];
    s[static_cast<size_t>(i)] = shape[i] == 1 ? dense : strides[i];
    dense = s[static_cast<size_t>(i)] * shape[i];
  }
  return dnnl::memory::desc(d, dt, s);
}

dnnl::memory::desc plain_md(const Dims& shape, dnnl::memory::data_type dt) {
  return strided_md(shape, contiguous_strides(shape), dt);
}

Tensor with_positive_strides(const Tensor& t) {
  for (int i = 0; i < t.ndim(); ++i)
    if (t.dim(i) > 1 && t.strides()[i] <= 0) return t.contiguous();
  return t;
}

dnnl::memory unbound(const dnnl::memory::desc& md) { return dnnl::memory(md, engine(), DNNL_MEMORY_NONE); }

bool is_reference(const dnnl::primitive_desc_base& pd) {
  return std::string_view(pd.impl_info_str()).starts_with("ref");
}

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

void execute(const dnnl::primitive& p, std::initializer_list<std::pair<int, const dnnl::memory*>> args) {
  constexpr int kMaxArgs = 12;
  dnnl_exec_arg_t arr[kMaxArgs];
  int n = 0;
  for (auto& [arg, mem] : args) {
    if (n == kMaxArgs) throw std::logic_error("oneDNN: too many primitive arguments");
    arr[n++] = {arg, mem->get()};
  }
  dnnl_status_t st = dnnl_primitive_execute(p.get(), stream().get(), n, arr);
  if (st != dnnl_success) throw KernelError(fmt::format("oneDNN: primitive execution failed (status {})", int(st)));
  dnnl_stream_wait(stream().get());
}

// ------------------------------------------------------------- conversions

namespace {

constexpr int64_t kConvertGrain = 1 << 16;

__attribute__((target("avx2,f16c"))) void half_to_float_f16c(const uint16_t* s, float* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
  for (; i < n; ++i) d[i] = _cvtsh_ss(s[i]);
}

__attribute__((target("avx2,f16c"))) void float_to_half_f16c(const float* s, uint16_t* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) d[i] = float_to_half(s[i]);
}

bool has_f16c() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return ok;
}

void to_f32_range(const void* src, DType t, float* dst, int64_t b, int64_t e) {
  switch (t) {
    case DType::Float32: std::memcpy(dst + b, static_cast<const float*>(src) + b, sizeof(float) * size_t(e - b)); break;
    case DType::Float64: {
      const double* s = static_cast<const double*>(src);
      for (int64_t i = b; i < e; ++i) dst[i] = static_cast<float>(s[i]);
      break;
    }
    case DType::BFloat16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = b; i < e; ++i) {
        uint32_t u = static_cast<uint32_t>(s[i]) << 16;
        std::memcpy(dst + i, &u, 4);
      }
      break;
    }
    case DType::Float16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      if (has_f16c()) {
        half_to_float_f16c(s + b, dst + b, e - b);
      } else {
        for (int64_t i = b; i < e; ++i) dst[i] = half_to_float(s[i]);
      }
      break;
    }
    default: throw DTypeError(fmt::format("oneDNN: cannot convert {} to float32", dtype_display_name(t)));
  }
}

void from_f32_range(const float* src, void* dst, DType t, int64_t b, int64_t e) {
  switch (t) {
    case DType::Float32: std::memcpy(static_cast<float*>(dst) + b, src + b, sizeof(float) * size_t(e - b)); break;
    case DType::Float64: {
      double* d = static_cast<double*>(dst);
      for (int64_t i = b; i < e; ++i) d[i] = src[i];
      break;
    }
    case DType::BFloat16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      for (int64_t i = b; i < e; ++i) d[i] = float_to_bf16(src[i]);
      break;
    }
    case DType::Float16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      if (has_f16c()) {
        float_to_half_f16c(src + b, d + b, e - b);
      } else {
        for (int64_t i = b; i < e; ++i) d[i] = float_to_half(src[i]);
      }
      break;
    }
    default: throw DTypeError(fmt::format("oneDNN: cannot convert float32 to {}", dtype_display_name(t)));
  }
}

}  // namespace

void convert_to_float32(const Tensor& src, float* dst) {
  Tensor c = src.contiguous();
  const void* s = c.numel() ? c.raw() : nullptr;
  DType t = c.dtype();
  parallel_for(c.numel(), kConvertGrain, [&](int64_t b, int64_t e) { to_f32_range(s, t, dst, b, e); });
}

Tensor to_float32(const Tensor& src) {
  if (src.dtype() == DType::Float32) return src.contiguous();
  Tensor out(DType::Float32, src.shape());
  if (out.numel()) convert_to_float32(src, out.data<float>());
  return out;
}

void convert_from_float32(const float* src, const Tensor& dst) {
  if (!dst.numel()) return;
  void* d = dst.raw();
  DType t = dst.dtype();
  parallel_for(dst.numel(), kConvertGrain, [&](int64_t b, int64_t e) { from_f32_range(src, d, t, b, e); });
}

}  // namespace msl::kernels::onednn
