// sort: the elements of each row (the last axis) in order, with the
// position each came from (MindSpore's Sort: values and int32 indices;
// ops.sort, topk and argsort move their axis last and call it). The sort
// is stable, so equal elements keep their order and the result is the one
// ordering every device gives (kernels/cuda/sort_cuda.h sorts the same
// way). NaN orders above every number, as in NumPy and MindSpore: last
// ascending, first descending.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "kernels/primitives.h"
#include "kernels/strided_iter.h"

namespace msl::kernels {

namespace {

using namespace strided_iter;

template <class K>
bool nan_of(K v) {
  if constexpr (std::is_floating_point_v<K>)
    return v != v;
  else
    return false;
}

// Whether p sorts strictly before q.
template <class K>
bool before(K p, K q, bool descending) {
  if (descending) return p > q || (nan_of(p) && !nan_of(q));
  return p < q || (!nan_of(p) && nan_of(q));
}

template <class T>
void sort_rows(const T* x, T* values, int32_t* indices, int64_t rows, int64_t n, bool descending) {
  int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, n * 8));
  parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
    std::vector<int32_t> order(static_cast<size_t>(n));
    std::vector<Compute<T>> keys(static_cast<size_t>(n));
    for (int64_t r = r0; r < r1; ++r) {
      const T* row = x + r * n;
      for (int64_t k = 0; k < n; ++k) keys[k] = to_compute(row[k]);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int32_t a, int32_t b) { return before(keys[a], keys[b], descending); });
      for (int64_t k = 0; k < n; ++k) {
        values[r * n + k] = row[order[k]];
        indices[r * n + k] = order[k];
      }
    }
  });
}

}  // namespace

void infer_sort(const InferArgs& a) {
  const TensorSpec& x = a.in[0];
  if (x.shape.size() == 0) throw ValueError("sort: the input must have at least one dimension");
  if (x.shape[x.shape.size() - 1] > INT32_MAX)
    throw ValueError(fmt::format("sort: rows of {} elements are more than an int32 index can hold",
                                 x.shape[x.shape.size() - 1]));
  a.out[0] = {x.dtype, x.shape};
  a.out[1] = {DType::Int32, x.shape};
}

void cpu_sort(const KernelArgs& a) {
  const Tensor& x = a.in[0];
  int64_t n = x.dim(x.ndim() - 1);
  if (x.numel() == 0) return;
  Tensor xc = x.is_contiguous() ? x : x.contiguous();
  bool descending = a.attrs.get_bool("descending");
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    sort_rows<T>(xc.data<T>(), a.out[0].data<T>(), a.out[1].data<int32_t>(), x.numel() / n, n, descending);
  });
}

}  // namespace msl::kernels
