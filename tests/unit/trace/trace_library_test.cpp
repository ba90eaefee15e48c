// Library coverage: a table of msl.ops functions (elementwise, reductions,
// shape and indexing functions, losses, activations), each traced at one
// input shape and run by the graph executor against the same call made
// eagerly. The functions are composites of primitives with Python logic on
// shapes and arguments, the case tracing exists for.
#include "trace_fixture.h"

using namespace msl;
using namespace msl::trace_test;

TEST_CASE("msl.ops functions trace to graphs that compute what the eager calls compute") {
  Fixture f;
  f.run(
      "idx = _C.Tensor([2, 0], msl.int64)\n"
      "cases = [\n"
      "    ('exp2', lambda x: ops.exp2(x)),\n"
      "    ('log2', lambda x: ops.log2(abs(x) + 1)),\n"
      "    ('ceil', lambda x: ops.ceil(x)),\n"
      "    ('tan', lambda x: ops.tan(x)),\n"
      "    ('softsign', lambda x: ops.softsign(x)),\n"
      "    ('relu6', lambda x: ops.relu6(x * 4)),\n"
      "    ('clip_by_value', lambda x: ops.clip_by_value(x, -0.5, 0.5)),\n"
      "    ('isnan', lambda x: ops.isnan(x)),\n"
      "    ('isfinite', lambda x: ops.isfinite(x)),\n"
      "    ('lerp', lambda x: ops.lerp(x, x * 2, 0.3)),\n"
      "    ('addn', lambda x: ops.addn([x, x, x])),\n"
      "    ('reduce_sum', lambda x: ops.reduce_sum(x, 1)),\n"
      "    ('reduce_max', lambda x: ops.reduce_max(x, (0, 2), True)),\n"
      "    ('reduce_mean', lambda x: ops.reduce_mean(x, -1)),\n"
      "    ('sum', lambda x: ops.sum(x)),\n"
      "    ('mean', lambda x: ops.mean(x, axis=1)),\n"
      "    ('amax', lambda x: ops.amax(x, axis=2)),\n"
      "    ('argmax', lambda x: ops.argmax(x, axis=1)),\n"
      "    ('square_sum_all', lambda x: ops.square_sum_all(x)),\n"
      "    ('norm', lambda x: ops.norm(x)),\n"
      "    ('norm_dim', lambda x: ops.norm(x, dim=1)),\n"
      "    ('softmax', lambda x: ops.softmax(x)),\n"
      "    ('log_softmax', lambda x: ops.log_softmax(x, 1)),\n"
      "    ('gelu', lambda x: ops.gelu(x)),\n"
      "    ('gelu_tanh', lambda x: ops.gelu(x, approximate='tanh')),\n"
      "    ('silu', lambda x: ops.silu(x)),\n"
      "    ('elu', lambda x: ops.elu(x)),\n"
      "    ('leaky_relu', lambda x: ops.leaky_relu(x)),\n"
      "    ('softplus', lambda x: ops.softplus(x)),\n"
      "    ('hardswish', lambda x: ops.hardswish(x)),\n"
      "    ('reshape', lambda x: ops.reshape(x, (4, 6))),\n"
      "    ('transpose', lambda x: ops.transpose(x, (2, 0, 1))),\n"
      "    ('permute', lambda x: ops.permute(x, (1, 2, 0))),\n"
      "    ('swapaxes', lambda x: ops.swapaxes(x, 0, 2)),\n"
      "    ('expand_dims', lambda x: ops.expand_dims(x, 1)),\n"
      "    ('squeeze', lambda x: ops.squeeze(ops.expand_dims(x, 0))),\n"
      "    ('flatten', lambda x: ops.flatten(x)),\n"
      "    ('ravel', lambda x: ops.ravel(x)),\n"
      "    ('broadcast_to', lambda x: ops.broadcast_to(x[0:1], (3, 3, 4))),\n"
      "    ('tile', lambda x: ops.tile(x, (1, 2, 1))),\n"
      "    ('concat', lambda x: ops.concat((x, x * 2), 1)),\n"
      "    ('stack', lambda x: ops.stack([x, -x], 1)),\n"
      "    ('unstack', lambda x: ops.unstack(x, 2)),\n"
      "    ('split', lambda x: ops.split(x, 2, axis=2)),\n"
      "    ('strided_slice', lambda x: ops.strided_slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2))),\n"
      "    ('slice', lambda x: ops.slice(x, (0, 1, 0), (2, 2, 3))),\n"
      "    ('gather', lambda x: ops.gather(x, idx, 1)),\n"
      "    ('pad', lambda x: ops.pad(x, ((0, 0), (1, 0), (0, 2)))),\n"
      "    ('matmul', lambda x: ops.matmul(x, ops.transpose(x, (0, 2, 1)))),\n"
      "    ('bmm', lambda x: ops.bmm(x, ops.swapaxes(x, 1, 2))),\n"
      "    ('mse_loss', lambda x: ops.mse_loss(x, x * 0.5)),\n"
      "    ('l1_loss', lambda x: ops.l1_loss(x, x * 0.5, reduction='sum')),\n"
      "    ('bce_logits', lambda x: ops.binary_cross_entropy_with_logits(x, ops.sigmoid(x * 2))),\n"
      "    ('dense', lambda x: ops.dense(x, ops.ones((5, 4)), ops.ones((5,)))),\n"
      "]\n");
  int64_t n = f.I().len(f.eval("cases"));
  REQUIRE(n > 40);
  Tensor x = sample(DType::Float32, {2, 3, 4});
  for (int64_t i = 0; i < n; ++i) {
    std::string name = f.I().to_str(f.eval("cases[" + std::to_string(i) + "][0]"));
    CAPTURE(name);
    std::string fn = "cases[" + std::to_string(i) + "][1]";
    std::string err = f.trace_error(fn, {spec(DType::Float32, {2, 3, 4})});
    if (err != "no error") {
      FAIL_CHECK(err);
      continue;
    }
    ir::FuncGraph* g = f.trace(fn, {spec(DType::Float32, {2, 3, 4})}, {}, name);
    REQUIRE(g);
    // Traced, not folded: some node of the body reads the parameter.
    CHECK(contains(ir::print_graph(*g), "(%para1_x"));
    run_both(f, g, fn, {f.wrap(x)}, {x});
  }
}
