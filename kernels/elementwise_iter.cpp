// The elementwise driver: from tensors of any geometry to calls of the
// contiguous inner loops.
//
// Speed comes from giving the loops long contiguous runs. The common cases
// skip all bookkeeping: same-shape contiguous inputs already in the compute
// dtype (or single elements, passed as scalars) call the loop on the whole
// range, with no heap allocation, no per-dimension work and, for tiny
// tensors, no thread start. Everything else is the general path:
//  - dimensions contiguous across every operand are merged and size-1 ones
//    dropped, so a [N, C] + [C] add runs rows of C and a transposed pair is
//    one run;
//  - rows shorter than kSmallRow are grouped into 2-D blocks of whole rows
//    (the broadcast operand gathered into a block that stays in L1), so a
//    [N, 4] + [4] add makes one loop call per kBlock elements, not per row;
//  - an input read across its layout (a transposed view) is walked in tiles
//    of kTileB x kTileA, so its cache lines and pages are reused before they
//    are evicted instead of every element missing;
//  - strided inputs, dtype conversions and broadcasts a loop cannot take go
//    through stack blocks of kBlock elements.
// Outputs of memory-bound loops larger than the caches are written with
// non-temporal stores from a block in L1, whatever the dtype: that saves the
// read-for-ownership of each output line, a quarter of an add's memory
// traffic (measured: 16M-element float32 add and mul 25-40% faster). Threads split the
// flat output range (tiles, in tiled mode); each thread restarts the odometer
// at its first element, so any shape splits evenly.
#include <atomic>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#endif

#include "kernels/elementwise.h"
#include "kernels/parallel.h"
#include "kernels/shape_util.h"

namespace msl::kernels::ew {

namespace {

constexpr int kMaxIn = 3;
// Elements per stack block: five blocks of 8-byte elements fit in L1.
constexpr int64_t kBlock = 512;
// Outputs at least this large bypass the caches (they cannot stay in them)
// when the loop is memory-bound.
constexpr int64_t kStreamBytes = int64_t(8) << 20;
// Rows shorter than this are processed several at a time.
constexpr int64_t kSmallRow = 128;
// Tiles of the transposed walk: kTileB rows of kTileA elements. A float32
// cache line holds 16 elements of a transposed input's row, all used within
// the tile.
constexpr int64_t kTileA = 128, kTileB = 16;

inline void* data_of(const Tensor& t) {  // Tensor::raw() without the dtype_size call
  return static_cast<char*>(t.storage()->data) + t.offset() * static_cast<int64_t>(size_of(t.dtype()));
}

// Orders non-temporal stores before the output is read (by another thread
// after the parallel region, or by the caller).
inline void store_fence() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_sfence();
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// memcpy with non-temporal stores for the aligned middle (SSE2, baseline on
// x86-64: the store width does not matter once lines are combined).
void stream_copy(void* dst, const void* src, size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
  if (head >= bytes) {
    std::memcpy(d, s, bytes);
    return;
  }
  std::memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  for (; bytes >= 64; d += 64, s += 64, bytes -= 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
  }
  std::memcpy(d, s, bytes);
#else
  std::memcpy(dst, src, bytes);
#endif
}

// Per-thread scratch blocks (on the stack of the thread's range function).
// An input that is the same for every row of a block of rows (the [C] of a
// [N, C] + [C]) is gathered once and its block reused while its source and
// row count stay the same.
struct Scratch {
  const char* kept_src[kMaxIn] = {};
  int64_t kept_rows[kMaxIn] = {};
  alignas(64) char in[kMaxIn][kBlock * 8];
  alignas(64) char scalar[kMaxIn][8];
  alignas(64) char out[kBlock * 8];
  alignas(64) char out2[kBlock * 8];
  alignas(64) char tmp[kBlock * 8];
};

// Copies n elements of dtype `from` at `src` (stride in elements: any sign,
// 0 repeats one element) into `dst` as dtype `to`, through `tmp` when the
// read is strided and converts.
void gather(const char* src, int64_t stride, DType from, void* dst, DType to, int64_t n, void* tmp,
            const LoopTable& lt) {
  const size_t sz = size_of(from);
  if (stride == 1) {
    if (from == to) {
      std::memcpy(dst, src, static_cast<size_t>(n) * sz);
    } else {
      const void* p = src;
      lt.convert[static_cast<int>(from)][static_cast<int>(to)](&p, dst, n, 0);
    }
    return;
  }
  void* out = from == to ? dst : tmp;
  switch (sz) {
    case 1: {
      auto* s = reinterpret_cast<const uint8_t*>(src);
      auto* d = static_cast<uint8_t*>(out);
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
      break;
    }
    case 2: {
      auto* s = reinterpret_cast<const uint16_t*>(src);
      auto* d = static_cast<uint16_t*>(out);
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
      break;
    }
    case 4: {
      auto* s = reinterpret_cast<const uint32_t*>(src);
      auto* d = static_cast<uint32_t*>(out);
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
      break;
    }
    default: {
      auto* s = reinterpret_cast<const uint64_t*>(src);
      auto* d = static_cast<uint64_t*>(out);
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
      break;
    }
  }
  if (from != to) {
    const void* p = tmp;
    lt.convert[static_cast<int>(from)][static_cast<int>(to)](&p, dst, n, 0);
  }
}

// The collapsed geometry: per-input strides in elements over the output's
// dimensions; the output itself is contiguous in this order.
struct Geometry {
  int nd = 0;
  int64_t shape[kMaxDims];
  int64_t stride[kMaxIn][kMaxDims];
};

struct Call {
  LoopFn fn;
  unsigned scalar_ok;
  int nin;
  const char* base[kMaxIn];  // element 0 of each input
  DType dt[kMaxIn];          // as stored
  DType ct[kMaxIn];          // as the loop reads it
  int64_t isz[kMaxIn];
  int64_t csz[kMaxIn];
  char* out;
  DType odt;  // as stored
  DType kt;   // as the loop writes it
  int64_t osz;
  bool stream;
  const LoopTable* lt;
};

// Output elements [pos, pos + nr * len), contiguous, seen as nr rows of len;
// input k's element (r, j) is at in[k] + r * sr[k] + j * sl[k] (strides in
// elements). nr > 1 only when nr * len <= kBlock.
void run_block(const Call& c, Scratch& sc, const char* const* in, const int64_t* sr, const int64_t* sl, int64_t nr,
               int64_t len, int64_t pos) {
  enum Mode : uint8_t { kDirect, kScalar, kGather };
  Mode mode[kMaxIn];
  const void* p[kMaxIn];
  unsigned flags = 0;
  int nscalar = 0;
  bool blocked = c.kt != c.odt || c.stream;
  for (int k = 0; k < c.nin; ++k) {
    const bool constant = sl[k] == 0 && (nr == 1 || sr[k] == 0);
    const bool contiguous = sl[k] == 1 && (nr == 1 || sr[k] == len);
    p[k] = in[k];
    if (constant && (c.scalar_ok >> k & 1u)) {
      mode[k] = kScalar;
      ++nscalar;
      flags |= 1u << k;
      if (c.dt[k] != c.ct[k]) {
        c.lt->convert[static_cast<int>(c.dt[k])][static_cast<int>(c.ct[k])](&p[k], sc.scalar[k], 1, 0);
        p[k] = sc.scalar[k];
      }
    } else if (contiguous && c.dt[k] == c.ct[k]) {
      mode[k] = kDirect;
    } else {
      mode[k] = kGather;
      blocked = true;
    }
  }
  if (nscalar == c.nin) {  // loops need one operand that varies: broadcast input 0 into a block
    mode[0] = kGather;
    flags &= ~1u;
    p[0] = in[0];
    blocked = true;
  }
  char* dst = c.out + pos * c.osz;
  const int64_t total = nr * len;
  if (!blocked) {
    c.fn(p, dst, total, flags);
    return;
  }
  for (int64_t j = 0; j < total; j += kBlock) {
    const int64_t m = total - j < kBlock ? total - j : kBlock;
    const void* q[kMaxIn];
    for (int k = 0; k < c.nin; ++k) {
      const char* src = static_cast<const char*>(p[k]);
      if (mode[k] == kScalar) {
        q[k] = src;
      } else if (mode[k] == kDirect) {
        q[k] = src + j * c.isz[k];
      } else if (nr == 1) {
        gather(src + j * sl[k] * c.isz[k], sl[k], c.dt[k], sc.in[k], c.ct[k], m, sc.tmp, *c.lt);
        q[k] = sc.in[k];
        sc.kept_src[k] = nullptr;
      } else {  // a block of whole rows (m == total)
        q[k] = sc.in[k];
        if (sr[k] == 0 && sc.kept_src[k] == src && sc.kept_rows[k] == nr) continue;
        for (int64_t r = 0; r < nr; ++r)
          gather(src + r * sr[k] * c.isz[k], sl[k], c.dt[k], sc.in[k] + r * len * c.csz[k], c.ct[k], len, sc.tmp,
                 *c.lt);
        sc.kept_src[k] = sr[k] == 0 ? src : nullptr;
        sc.kept_rows[k] = nr;
      }
    }
    char* o = dst + j * c.osz;
    if (c.kt == c.odt && !c.stream) {
      c.fn(q, o, m, flags);
      continue;
    }
    c.fn(q, sc.out, m, flags);
    const void* r = sc.out;
    if (c.kt != c.odt) {
      void* to = c.stream ? static_cast<void*>(sc.out2) : static_cast<void*>(o);
      c.lt->convert[static_cast<int>(c.kt)][static_cast<int>(c.odt)](&r, to, m, 0);
      r = to;
    }
    if (c.stream) stream_copy(o, r, static_cast<size_t>(m * c.osz));
  }
}

// Moves the odometer `cnt` steps along dimension d, carrying into the outer
// dimensions when d wraps.
void advance(const Geometry& g, int nin, int d, int64_t cnt, int64_t* idx, int64_t* off) {
  idx[d] += cnt;
  for (int k = 0; k < nin; ++k) off[k] += cnt * g.stride[k][d];
  while (d > 0 && idx[d] == g.shape[d]) {
    for (int k = 0; k < nin; ++k) off[k] -= g.shape[d] * g.stride[k][d];
    idx[d] = 0;
    --d;
    ++idx[d];
    for (int k = 0; k < nin; ++k) off[k] += g.stride[k][d];
  }
}

// Output elements [b, e) in row-major order.
void run_range(const Call& c, const Geometry& g, int64_t b, int64_t e) {
  Scratch sc;
  const int last = g.nd - 1;
  const int64_t row = g.shape[last];
  int64_t idx[kMaxDims];
  int64_t off[kMaxIn] = {};
  int64_t rem = b;
  for (int d = last; d >= 0; --d) {
    idx[d] = rem % g.shape[d];
    rem /= g.shape[d];
    for (int k = 0; k < c.nin; ++k) off[k] += idx[d] * g.stride[k][d];
  }
  int64_t sl[kMaxIn], sr[kMaxIn] = {};
  for (int k = 0; k < c.nin; ++k) {
    sl[k] = g.stride[k][last];
    if (last > 0) sr[k] = g.stride[k][last - 1];
  }
  const bool grouped = last > 0 && row < kSmallRow;
  const int64_t max_rows = kBlock / row;
  int64_t pos = b;
  while (pos < e) {
    if (grouped && idx[last] == 0 && e - pos >= row) {
      int64_t nr = (e - pos) / row;
      if (nr > max_rows) nr = max_rows;
      if (nr > g.shape[last - 1] - idx[last - 1]) nr = g.shape[last - 1] - idx[last - 1];
      const char* src[kMaxIn];
      for (int k = 0; k < c.nin; ++k) src[k] = c.base[k] + off[k] * c.isz[k];
      run_block(c, sc, src, sr, sl, nr, row, pos);
      pos += nr * row;
      if (pos < e) advance(g, c.nin, last - 1, nr, idx, off);
    } else {
      int64_t len = row - idx[last];
      if (len > e - pos) len = e - pos;
      const char* src[kMaxIn];
      for (int k = 0; k < c.nin; ++k) src[k] = c.base[k] + off[k] * c.isz[k];
      run_block(c, sc, src, sr, sl, 1, len, pos);
      pos += len;
      if (pos < e) advance(g, c.nin, last, len, idx, off);
    }
  }
}

// Copies the [lb, la] tile at `src` of an input that is contiguous along B
// (stride sb = +-1) and strided along A into `dst` row-major: each of its
// cache lines is read once, whole, instead of once per output row (power-of-
// two strides would also map a tile's lines to a few cache sets).
// The next tile's lines are prefetched meanwhile: the hardware prefetchers do
// not follow a hundred short streams.
template <class T>
void transpose_tile(const char* src, int64_t sa, int64_t sb, int64_t lb, int64_t la, char* dst) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  const uintptr_t next = reinterpret_cast<uintptr_t>(src) + static_cast<uintptr_t>(lb * sb * int64_t{sizeof(T)});
  for (int64_t a = 0; a < la; ++a) {
    __builtin_prefetch(reinterpret_cast<const void*>(next + static_cast<uintptr_t>(a * sa * int64_t{sizeof(T)})));
    for (int64_t b = 0; b < lb; ++b) d[b * la + a] = s[a * sa + b * sb];
  }
}

// Tiles [t0, t1) of the transposed walk: the last two dimensions (B, A) in
// tiles of kTileB x kTileA, tile B-index fastest so that consecutive tiles
// read the next lines of the same pages of a transposed input.
void run_tiles(const Call& c, const Geometry& g, int64_t t0, int64_t t1) {
  Scratch sc;
  alignas(64) char tile[kMaxIn][kTileA * kTileB * 8];
  const int A = g.nd - 1, B = g.nd - 2;
  const int64_t na = g.shape[A], nb = g.shape[B];
  const int64_t ta = (na + kTileA - 1) / kTileA, tb = (nb + kTileB - 1) / kTileB;
  bool transposed[kMaxIn];
  int64_t sr[kMaxIn] = {}, sl[kMaxIn], tsl[kMaxIn];
  for (int k = 0; k < c.nin; ++k) {
    const int64_t a = g.stride[k][A], b = g.stride[k][B];
    transposed[k] = (a > 1 || a < -1) && (b == 1 || b == -1);
    sl[k] = a;
    tsl[k] = transposed[k] ? 1 : a;
  }
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t outer = t / (ta * tb), in_outer = t % (ta * tb);
    const int64_t a0 = in_outer / tb * kTileA, b0 = in_outer % tb * kTileB;
    const int64_t lb = nb - b0 < kTileB ? nb - b0 : kTileB, la = na - a0 < kTileA ? na - a0 : kTileA;
    int64_t base[kMaxIn] = {};
    int64_t rem = outer;
    for (int d = B - 1; d >= 0; --d) {  // the outer dimensions' offsets
      const int64_t i = rem % g.shape[d];
      rem /= g.shape[d];
      for (int k = 0; k < c.nin; ++k) base[k] += i * g.stride[k][d];
    }
    for (int k = 0; k < c.nin; ++k) {
      if (!transposed[k]) continue;
      const char* src = c.base[k] + (base[k] + b0 * g.stride[k][B] + a0 * sl[k]) * c.isz[k];
      switch (c.isz[k]) {
        case 1: transpose_tile<uint8_t>(src, sl[k], g.stride[k][B], lb, la, tile[k]); break;
        case 2: transpose_tile<uint16_t>(src, sl[k], g.stride[k][B], lb, la, tile[k]); break;
        case 4: transpose_tile<uint32_t>(src, sl[k], g.stride[k][B], lb, la, tile[k]); break;
        default: transpose_tile<uint64_t>(src, sl[k], g.stride[k][B], lb, la, tile[k]); break;
      }
    }
    for (int64_t bb = 0; bb < lb; ++bb) {
      const char* src[kMaxIn];
      for (int k = 0; k < c.nin; ++k) {
        src[k] = transposed[k] ? tile[k] + bb * la * c.isz[k]
                               : c.base[k] + (base[k] + (b0 + bb) * g.stride[k][B] + a0 * sl[k]) * c.isz[k];
        if (!transposed[k] && sl[k] == 1) {  // the same row of the next tile
          const uintptr_t next =
              reinterpret_cast<uintptr_t>(src[k]) + static_cast<uintptr_t>(kTileB * g.stride[k][B] * c.isz[k]);
          for (int64_t x = 0; x < la * c.isz[k]; x += 64) __builtin_prefetch(reinterpret_cast<const void*>(next + x));
        }
      }
      run_block(c, sc, src, sr, tsl, 1, la, outer * na * nb + (b0 + bb) * na + a0);
    }
  }
}

// The general path: every geometry and dtype mix.
__attribute__((noinline)) void run_general(LoopFn fn, unsigned scalar_ok, int nin, const Tensor* const* in,
                                           const DType* ctype, const Tensor& out, DType ktype, int64_t grain,
                                           bool stream) {
  const int64_t n = out.numel();
  Call c;
  c.fn = fn;
  c.scalar_ok = scalar_ok;
  c.nin = nin;
  c.out = static_cast<char*>(data_of(out));
  c.odt = out.dtype();
  c.kt = ktype;
  c.osz = static_cast<int64_t>(size_of(c.odt));
  c.stream = stream;
  c.lt = &loops();
  for (int k = 0; k < nin; ++k) {
    c.base[k] = static_cast<const char*>(data_of(*in[k]));
    c.dt[k] = in[k]->dtype();
    c.ct[k] = ctype[k];
    c.isz[k] = static_cast<int64_t>(size_of(c.dt[k]));
    c.csz[k] = static_cast<int64_t>(size_of(c.ct[k]));
  }
  // Strides of every input over the output's shape; merge dimensions that
  // are contiguous for all operands and drop size-1 ones.
  const Dims& shape = out.shape();
  Dims st[kMaxIn];
  for (int k = 0; k < nin; ++k) st[k] = broadcast_strides(in[k]->shape(), in[k]->strides(), shape);
  Geometry g;
  for (int d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = g.nd > 0;
    for (int k = 0; k < nin && merge; ++k) merge = g.stride[k][g.nd - 1] == st[k][d] * shape[d];
    if (merge) {
      g.shape[g.nd - 1] *= shape[d];
      for (int k = 0; k < nin; ++k) g.stride[k][g.nd - 1] = st[k][d];
    } else {
      g.shape[g.nd] = shape[d];
      for (int k = 0; k < nin; ++k) g.stride[k][g.nd] = st[k][d];
      ++g.nd;
    }
  }
  if (g.nd == 0) {  // a single element
    g.nd = 1;
    g.shape[0] = 1;
    for (int k = 0; k < nin; ++k) g.stride[k][0] = 0;
  }
  // A transposed input (strided along the last dimension, contiguous along
  // the one before) is walked in tiles when rows are long enough to matter.
  bool tiled = false;
  if (g.nd >= 2 && g.shape[g.nd - 1] >= kSmallRow && g.shape[g.nd - 2] > 1) {
    for (int k = 0; k < nin; ++k) {
      int64_t a = g.stride[k][g.nd - 1], b = g.stride[k][g.nd - 2];
      tiled |= (a > 1 || a < -1) && (b == 1 || b == -1);
    }
  }
  if (tiled) {
    const int64_t na = g.shape[g.nd - 1], nb = g.shape[g.nd - 2];
    const int64_t tiles = n / (na * nb) * ((na + kTileA - 1) / kTileA) * ((nb + kTileB - 1) / kTileB);
    int64_t tile_grain = grain / (kTileA * kTileB);
    parallel_for(tiles, tile_grain > 0 ? tile_grain : 1, [&](int64_t b, int64_t e) {
      run_tiles(c, g, b, e);
      if (stream) store_fence();
    });
    return;
  }
  parallel_for(n, grain, [&](int64_t b, int64_t e) {
    run_range(c, g, b, e);
    if (stream) store_fence();
  });
}

}  // namespace

void run_loop(LoopFn fn, unsigned scalar_ok, int nin, const Tensor* const* in, const DType* ctype, const Tensor& out,
              DType ktype, Cost cost) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const int64_t osz = static_cast<int64_t>(size_of(out.dtype()));
  const bool stream = cost == Cost::Memory && n * osz >= kStreamBytes;
  const int64_t grain = cost == Cost::Libm ? kParallelGrain / 8 : kParallelGrain;
  // Fast path: each input is the output's elements in order (contiguous with
  // as many elements) or a single element, already in its compute dtype.
  const void* p[kMaxIn];
  unsigned flags = 0;
  bool fast = ktype == out.dtype();
  for (int k = 0; k < nin && fast; ++k) {
    const Tensor& t = *in[k];
    p[k] = data_of(t);
    if (t.dtype() != ctype[k]) {
      fast = false;
    } else if (const int64_t tn = t.numel(); tn == n && (t.ndim() == 1 ? t.strides()[0] == 1 : t.is_contiguous())) {
    } else if (tn == 1 && (scalar_ok >> k & 1u)) {
      flags |= 1u << k;
    } else {
      fast = false;
    }
  }
  if (!fast || flags == (1u << nin) - 1) {
    run_general(fn, scalar_ok, nin, in, ctype, out, ktype, grain, stream);
    return;
  }
  char* o = static_cast<char*>(data_of(out));
  if (n < grain) {  // the eager path of small tensors: one call, nothing else
    fn(p, o, n, flags);
    return;
  }
  int64_t isz[kMaxIn];
  for (int k = 0; k < nin; ++k) isz[k] = static_cast<int64_t>(size_of(in[k]->dtype()));
  parallel_for(n, grain, [&](int64_t b, int64_t e) {
    const void* q[kMaxIn];
    if (!stream) {
      for (int k = 0; k < nin; ++k) q[k] = (flags >> k & 1u) ? p[k] : static_cast<const char*>(p[k]) + b * isz[k];
      fn(q, o + b * osz, e - b, flags);
      return;
    }
    alignas(64) char buf[kBlock * 8];
    for (int64_t j = b; j < e; j += kBlock) {
      const int64_t m = e - j < kBlock ? e - j : kBlock;
      for (int k = 0; k < nin; ++k) q[k] = (flags >> k & 1u) ? p[k] : static_cast<const char*>(p[k]) + j * isz[k];
      fn(q, buf, m, flags);
      stream_copy(o + j * osz, buf, static_cast<size_t>(m * osz));
    }
    store_fence();
  });
}

}  // namespace msl::kernels::ew
