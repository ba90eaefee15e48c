// Random arguments for the tests that run a specialized graph before and
// after a back-end pass (fuse_epilogue_test, layout_choice_test,
// master_weights_test): one tensor per abstract argument type, uniform in
// [-1, 1), or in [0.5, 2) for the arguments listed in `positive` (a batch
// norm's variance); and the values of a result, to compare the two runs.
#pragma once

#include <algorithm>
#include <random>
#include <vector>

#include "jit/exec/executor.h"
#include "jit/abstract.h"
#include "kernels/dtype.h"

namespace msl::jit::test {

inline std::vector<exec::RtValue> random_args(const std::vector<AbsValue>& types, const std::vector<int>& positive,
                                              uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<exec::RtValue> args;
  for (size_t i = 0; i < types.size(); ++i) {
    bool pos = std::find(positive.begin(), positive.end(), int(i)) != positive.end();
    std::uniform_real_distribution<double> u(pos ? 0.5 : -1, pos ? 2 : 1);
    const AbsTensor& t = *types[i].get_if<AbsTensor>();
    kernels::Tensor x(t.dtype, t.shape);
    for (int64_t k = 0; k < x.numel(); ++k) kernels::store_from_double(x.raw(), t.dtype, k, u(rng));
    args.push_back(x);
  }
  return args;
}

// Every element of a result (a tensor or a tuple of them), flattened.
inline void collect(const exec::RtValue& v, std::vector<double>& out) {
  if (v.is<kernels::Tensor>()) {
    const kernels::Tensor& t = v.tensor();
    for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.item_at(i));
    return;
  }
  for (const exec::RtValue& item : v.tuple()) collect(item, out);
}

}  // namespace msl::jit::test
