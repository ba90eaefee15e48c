// Traced graphs: their structure (which primitives, which attributes the
// Python-level logic computed from the shapes) and their numbers: each graph
// is run by the graph executor on real tensors and compared value for value
// with the same MSL function called eagerly on the same tensors.
#include "trace_fixture.h"

using namespace msl;
using namespace msl::trace_test;

TEST_CASE("ops.square traces to one mul of the parameter with itself") {
  Fixture f;
  ir::FuncGraph* g = f.trace("ops.square", {spec(DType::Float32, {2, 3})}, {}, "square");
  REQUIRE(g);
  std::string text = ir::print_graph(*g);
  CHECK(text ==
        "# IR of: square\n"
        "subgraph @square(%para1_x) {\n"
        "  %0 = mul(%para1_x, %para1_x)\n"
        "  return(%0)\n"
        "}\n");
  Tensor x = sample(DType::Float32, {2, 3});
  exec::RtValue r = run_both(f, g, "ops.square", {f.wrap(x)}, {x});
  // Independent check of one element: x[1][2]^2.
  double x5 = x.item_at(5);
  CHECK(r.tensor().item_at(5) == doctest::Approx(x5 * x5).epsilon(1e-6));
}

TEST_CASE("sum_to_shape computes its reduce axes from the shapes at trace time") {
  Fixture f;
  Value shape = f.eval("(2, 1)");
  ir::FuncGraph* g = f.trace("_bprop.sum_to_shape", {spec(DType::Float32, {4, 2, 3}), TraceInput::value(shape)});
  REQUIRE(g);
  std::string text = ir::print_graph(*g);
  // Leading axis 0 and axis 2 (size 1 in the target) are summed, then the kept axis is restored.
  CHECK(contains(text, "%0 = reduce_sum[axes=(0, 2), keep_dims=False](%para1_dx)"));
  CHECK(contains(text, "%1 = reshape[shape=(2, 1)](%0)"));
  CHECK(contains(text, "return(%1)"));
  Tensor dx = sample(DType::Float32, {4, 2, 3});
  exec::RtValue r = run_both(f, g, "_bprop.sum_to_shape", {f.wrap(dx), shape}, {dx});
  // r[j][0] = sum over a in 0..3 and c in 0..2 of dx[a][j][c], in float64.
  CHECK(r.tensor().shape() == Dims{2, 1});
  for (int j = 0; j < 2; ++j) {
    double want = 0;
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) want += dx.item_at(a * 6 + j * 3 + c);
    CHECK(r.tensor().item_at(j) == doctest::Approx(want).epsilon(1e-5));
  }
}

TEST_CASE("sum_to_shape of an equal shape returns the parameter itself") {
  Fixture f;
  ir::FuncGraph* g =
      f.trace("_bprop.sum_to_shape", {spec(DType::Float32, {2, 3}), TraceInput::value(f.eval("[2, 3]"))});
  REQUIRE(g);
  CHECK(g->output() == g->params()[0]);
}

TEST_CASE("a list comprehension over x.shape runs once; the graph keeps only primitives") {
  Fixture f;
  f.run(
      "def squash(x):\n"
      "    dims = [d for d in x.shape]\n"
      "    axes = [i for i in range(len(dims)) if dims[i] > 1 and i > 0]\n"
      "    y = _C.reduce_sum(x * 2.0 - 1, axes=axes, keep_dims=True)\n"
      "    return y.reshape([d for d in y.shape if d != 1] or [1])\n");
  ir::FuncGraph* g = f.trace("squash", {spec(DType::Float32, {3, 1, 4, 2})});
  REQUIRE(g);
  std::string text = ir::print_graph(*g);
  CHECK(contains(text, "mul(%para1_x, Tensor[Float32]()[2.0])"));
  CHECK(contains(text, "sub(%0, Tensor[Float32]()[1.0])"));
  CHECK(contains(text, "reduce_sum[axes=(2, 3), keep_dims=True](%1)"));
  CHECK(contains(text, "reshape[shape=(3,)](%2)"));
  Tensor x = sample(DType::Float32, {3, 1, 4, 2});
  run_both(f, g, "squash", {f.wrap(x)}, {x});
}

TEST_CASE("gradient rules trace at the argument shapes (mul with broadcasting)") {
  Fixture f;
  // rule(x, y, out, dout): y broadcasts along the rows, so its gradient is summed over axis 0.
  std::vector<TraceInput> in = {spec(DType::Float32, {2, 3}), spec(DType::Float32, {3}), spec(DType::Float32, {2, 3}),
                                spec(DType::Float32, {2, 3})};
  ir::FuncGraph* g = f.trace("_bprop.get_bprop('mul')", in, {}, "mul_bprop");
  REQUIRE(g);
  std::string text = ir::print_graph(*g);
  CHECK(contains(text, "mul(%para4_dout, %para2_y)"));
  CHECK(contains(text, "mul(%para4_dout, %para1_x)"));
  CHECK(contains(text, "reduce_sum[axes=(0,), keep_dims=False]"));
  CHECK(contains(text, "make_tuple("));
  Tensor x = sample(DType::Float32, {2, 3}, 0), y = sample(DType::Float32, {3}, 1);
  Tensor out = sample(DType::Float32, {2, 3}, 2), dout = sample(DType::Float32, {2, 3}, 3);
  exec::RtValue r =
      run_both(f, g, "_bprop.get_bprop('mul')", {f.wrap(x), f.wrap(y), f.wrap(out), f.wrap(dout)}, {x, y, out, dout});
  // dy[j] = sum_i dout[i][j] * x[i][j], computed here in float64.
  const Tensor& dy = r.tuple()[1].tensor();
  for (int j = 0; j < 3; ++j)
    CHECK(dy.item_at(j) ==
          doctest::Approx(dout.item_at(j) * x.item_at(j) + dout.item_at(3 + j) * x.item_at(3 + j)).epsilon(1e-5));
}

TEST_CASE("more gradient rules: div, relu, pow, transpose with perm, matmul with flags, reduce_sum, cast") {
  Fixture f;
  auto F = DType::Float32;
  Tensor a = sample(F, {2, 3}, 0), b = sample(F, {2, 3}, 1), o = sample(F, {2, 3}, 2), d = sample(F, {2, 3}, 3);
  std::vector<TraceInput> four = {spec(F, {2, 3}), spec(F, {2, 3}), spec(F, {2, 3}), spec(F, {2, 3})};
  std::vector<TraceInput> three = {spec(F, {2, 3}), spec(F, {2, 3}), spec(F, {2, 3})};

  SUBCASE("div") {
    ir::FuncGraph* g = f.trace("_bprop.get_bprop('div')", four);
    REQUIRE(g);
    run_both(f, g, "_bprop.get_bprop('div')", {f.wrap(a), f.wrap(b), f.wrap(o), f.wrap(d)}, {a, b, o, d});
  }
  SUBCASE("relu: one relu_grad of dout and the output") {
    ir::FuncGraph* g = f.trace("_bprop.get_bprop('relu')", three);
    REQUIRE(g);
    std::string text = ir::print_graph(*g);
    CHECK(contains(text, "relu_grad(%para3_dout, %para2_out)"));
    Tensor y = kernels::execute1(kernels::Prim::relu, std::span<const Tensor>(&a, 1));
    exec::RtValue r = run_both(f, g, "_bprop.get_bprop('relu')", {f.wrap(a), f.wrap(y), f.wrap(d)}, {a, y, d});
    for (int i = 0; i < 6; ++i) CHECK(r.tuple()[0].tensor().item_at(i) == (a.item_at(i) > 0 ? d.item_at(i) : 0.0));
  }
  SUBCASE("pow: ones_like, log of a safe base") {
    Tensor pa = sample(F, {2, 3}, 5);
    ir::FuncGraph* g = f.trace("_bprop.get_bprop('pow')", four);
    REQUIRE(g);
    run_both(f, g, "_bprop.get_bprop('pow')", {f.wrap(pa), f.wrap(b), f.wrap(o), f.wrap(d)}, {pa, b, o, d});
  }
  SUBCASE("transpose: the inverse permutation is computed by a Python loop") {
    Tensor x = sample(F, {2, 3, 4}), dout = sample(F, {4, 2, 3}, 1), out = sample(F, {4, 2, 3}, 2);
    Value perm = f.eval("[2, 0, 1]");
    ir::FuncGraph* g = f.trace("_bprop.get_bprop('transpose')",
                               {spec(F, {2, 3, 4}), spec(F, {4, 2, 3}), spec(F, {4, 2, 3})}, {{"perm", perm}});
    REQUIRE(g);
    CHECK(contains(ir::print_graph(*g), "transpose[perm=(1, 2, 0)](%para3_dout)"));
    run_both(f, g, "_bprop.get_bprop('transpose')", {f.wrap(x), f.wrap(out), f.wrap(dout)}, {x, out, dout},
             {{"perm", perm}});
  }
  SUBCASE("matmul with transpose_b") {
    Tensor x = sample(F, {2, 3}), w = sample(F, {4, 3}, 1), out = sample(F, {2, 4}, 2), dout = sample(F, {2, 4}, 3);
    std::vector<std::pair<std::string, Value>> kw = {{"transpose_b", Value::boolean(true)}};
    ir::FuncGraph* g =
        f.trace("_bprop.get_bprop('matmul')", {spec(F, {2, 3}), spec(F, {4, 3}), spec(F, {2, 4}), spec(F, {2, 4})}, kw);
    REQUIRE(g);
    std::string text = ir::print_graph(*g);
    CHECK(contains(text, "matmul[transpose_a=False, transpose_b=False](%para4_dout, %para2_b)"));
    CHECK(contains(text, "matmul[transpose_a=True, transpose_b=False](%para4_dout, %para1_a)"));
    run_both(f, g, "_bprop.get_bprop('matmul')", {f.wrap(x), f.wrap(w), f.wrap(out), f.wrap(dout)}, {x, w, out, dout},
             kw);
  }
  SUBCASE("reduce_sum: kept shape from norm_axes, broadcast back") {
    Tensor x = sample(F, {2, 3, 4}), out = sample(F, {3}, 1), dout = sample(F, {3}, 2);
    std::vector<std::pair<std::string, Value>> kw = {{"axes", f.eval("[0, -1]")}};
    ir::FuncGraph* g = f.trace("_bprop.get_bprop('reduce_sum')", {spec(F, {2, 3, 4}), spec(F, {3}), spec(F, {3})}, kw);
    REQUIRE(g);
    std::string text = ir::print_graph(*g);
    CHECK(contains(text, "reshape[shape=(1, 3, 1)](%para3_dout)"));
    CHECK(contains(text, "broadcast_to[shape=(2, 3, 4)]"));
    run_both(f, g, "_bprop.get_bprop('reduce_sum')", {f.wrap(x), f.wrap(out), f.wrap(dout)}, {x, out, dout}, kw);
  }
  SUBCASE("cast: a dtype test on x.dtype picks the branch") {
    std::vector<std::pair<std::string, Value>> kw = {{"dtype", f.eval("_C.float64")}};
    ir::FuncGraph* g = f.trace("_bprop.get_bprop('cast')",
                               {spec(F, {2, 3}), spec(DType::Float64, {2, 3}), spec(DType::Float64, {2, 3})}, kw);
    REQUIRE(g);
    CHECK(contains(ir::print_graph(*g), "cast[dtype=Float32](%para3_dout)"));
    Tensor o64 = sample(DType::Float64, {2, 3}, 1), d64 = sample(DType::Float64, {2, 3}, 2);
    run_both(f, g, "_bprop.get_bprop('cast')", {f.wrap(a), f.wrap(o64), f.wrap(d64)}, {a, o64, d64}, kw);
    // An integer x takes the other branch: zeros of x's dtype, no cast at all.
    ir::FuncGraph* gi = f.trace("_bprop.get_bprop('cast')", {spec(DType::Int32, {2}), spec(F, {2}), spec(F, {2})},
                                {{"dtype", f.eval("_C.float32")}});
    REQUIRE(gi);
    std::string text = ir::print_graph(*gi);
    CHECK(contains(text, "zeros_like(%para1_x)"));
    CHECK(!contains(text, "cast"));
  }
}

TEST_CASE("tensor methods, operators and basic indexing on tracers") {
  Fixture f;
  f.run(
      "def methods(x, w, v):\n"
      "    a = x.T.reshape(-1, 2)\n"
      "    b = (2 - x) * -x / 4 + abs(x)\n"
      "    c = x @ v\n"
      "    d = v @ w\n"
      "    e = x[_C.Tensor(1), 1:] + x[:, ::-2].sum(axis=1, keep_dims=True).mean()\n"
      "    g = (x > 0) & (x < 1)\n"
      "    return (a, b.max(axis=0), c, d, e, g.astype(msl.float32), x[None, ..., 0], x.argmax(),\n"
      "            len(x), x.ndim, x.size, x.shape)\n");
  auto F = DType::Float32;
  ir::FuncGraph* g = f.trace("methods", {spec(F, {2, 3}), spec(F, {3, 4}), spec(F, {3})});
  REQUIRE(g);
  std::string text = ir::print_graph(*g);
  CHECK(contains(text, "strided_slice[begin=(1, 1), end=(2, 3), strides=(1, 1)](%para1_x)"));
  CHECK(contains(text, "strided_slice[begin=(0, 2), end=(2, -4), strides=(1, -2)](%para1_x)"));
  Tensor x = sample(F, {2, 3}), w = sample(F, {3, 4}, 1), v = sample(F, {3}, 2);
  std::vector<exec::RtValue> rt = {x, w, v};
  exec::RtValue got = exec::run_graph(*g, rt);
  std::vector<Value> args = {f.wrap(x), f.wrap(w), f.wrap(v)};
  Value want = f.I().call(f.eval("methods"), args);
  std::vector<Value> items = f.I().to_vector(want);
  REQUIRE(got.tuple().size() == 12);
  for (size_t i = 0; i < 8; ++i) {
    CAPTURE(i);
    check_same(got.tuple()[i].tensor(), tensor_of(items[i]));
  }
  // Python values computed from the shapes become constants.
  CHECK(got.tuple()[8].as<int64_t>() == 2);
  CHECK(got.tuple()[9].as<int64_t>() == 2);
  CHECK(got.tuple()[10].as<int64_t>() == 6);
  CHECK(exec::to_string(got.tuple()[11]) == "(2, 3)");
}

TEST_CASE("concrete values: globals become tensor constants, concrete work is folded, outputs may be constants") {
  Fixture f;
  f.run(
      "bias = _C.Tensor([1.0, 2.0, 3.0])\n"
      "def f(x, scale):\n"
      "    k = _C.mul(bias, scale)\n"  // concrete: runs eagerly at trace time
      "    return (x + k, None, 'tag', 3, k)\n");
  ir::FuncGraph* g = f.trace("f", {spec(DType::Float32, {2, 3}), TraceInput::value(Value::number(2.0))});
  REQUIRE(g);
  std::string text = ir::print_graph(*g);
  CHECK(contains(text, "add(%para1_x, Tensor[Float32](3)[2.0, 4.0, 6.0])"));
  CHECK(!contains(text, "= mul"));
  CHECK(g->params().size() == 1);
  Tensor x = sample(DType::Float32, {2, 3});
  exec::RtValue r = exec::run_graph(*g, {exec::RtValue(x)});
  REQUIRE(r.tuple().size() == 5);
  for (int i = 0; i < 6; ++i)
    CHECK(r.tuple()[0].tensor().item_at(i) == doctest::Approx(x.item_at(i) + 2 * (i % 3 + 1)));
  CHECK(r.tuple()[1].is_none());
  CHECK(r.tuple()[2].as<std::string>() == "tag");
  CHECK(r.tuple()[3].as<int64_t>() == 3);
  CHECK(r.tuple()[4].tensor().item_at(2) == 6.0);
}

TEST_CASE("multi-output primitives give a tuple of tracers (tuple_getitem nodes)") {
  Fixture f;
  f.run(
      "def loss(logits, labels):\n"
      "    l, g = _C.softmax_cross_entropy(logits, labels)\n"
      "    return g * l.reshape(-1, 1)\n");
  auto F = DType::Float32;
  ir::FuncGraph* g = f.trace("loss", {spec(F, {2, 3}), spec(F, {2, 3})});
  REQUIRE(g);
  std::string text = ir::print_graph(*g);
  CHECK(contains(text, "tuple_getitem(%0, 0)"));
  CHECK(contains(text, "tuple_getitem(%0, 1)"));
  Tensor logits = sample(F, {2, 3});
  Tensor labels = ir::tensor_from_values(F, {2, 3}, {0, 1, 0, 0, 0, 1});
  run_both(f, g, "loss", {f.wrap(logits), f.wrap(labels)}, {logits, labels});
}

TEST_CASE("ones_like and zeros_like of a tracer with another dtype; numbers take the tensor input's dtype") {
  Fixture f;
  f.run(
      "def fill(x):\n"
      "    return (_C.ones_like(x), _C.zeros_like(x, dtype=msl.float64), _C.ones_like(x, msl.bool_),\n"
      "            _C.add(x, 1), _C.add(2, x), _C.maximum(x, 0.5))\n");
  ir::FuncGraph* g = f.trace("fill", {spec(DType::Int32, {2, 2})});
  REQUIRE(g);
  std::string text = ir::print_graph(*g);
  CHECK(contains(text, "%0 = zeros_like(%para1_x)\n  %1 = add(%0, Tensor[Int32]()[1])"));
  CHECK(contains(text, "%2 = zeros_like(%para1_x)\n  %3 = cast[dtype=Float64](%2)"));
  CHECK(contains(text, "logical_not("));
  CHECK(contains(text, "add(Tensor[Int32]()[2], %para1_x)"));
  // A float next to an integer tensor is float32 (the scalar rule).
  CHECK(contains(text, "maximum(%para1_x, Tensor[Float32]()[0.5])"));
  Tensor x = ir::tensor_from_values(DType::Int32, {2, 2}, {-1, 0, 3, 7});
  run_both(f, g, "fill", {f.wrap(x)}, {x});
}

TEST_CASE("stop_gradient of a tracer is recorded, not traced as the identity") {
  Fixture f;
  f.run(
      "def scaled(x):\n"
      "    s = _C.mul(x, 4.0)\n"
      "    return _C.add(_C.stop_gradient(x), _C.sub(s, _C.stop_gradient(s)))\n");
  auto F = DType::Float32;
  ir::FuncGraph* g = f.trace("scaled", {spec(F, {3})});
  REQUIRE(g);
  std::string text = ir::print_graph(*g);
  CHECK(contains(text, "stop_gradient(%para1_x)"));
  size_t first = text.find("stop_gradient(");
  CHECK(first != std::string::npos);
  CHECK(text.find("stop_gradient(", first + 1) != std::string::npos);  // both, of x and of s
  Tensor x = sample(F, {3});
  run_both(f, g, "scaled", {f.wrap(x)}, {x});
}

TEST_CASE("traces nest: a function traced while another trace runs records into its own graph") {
  Fixture f;
  // A native that traces ops.square whenever MSL calls it, as autodiff
  // does when it meets a library call inside a traced function.
  static Fixture* current = nullptr;
  current = &f;
  f.I().def_native(f.I().main_module().get(), "trace_square", [](Interp& I, Args& a, Object*) -> Value {
    const kernels::TensorSpec& s = tracer_obj(a.pos[0])->spec;
    ir::FuncGraph* inner = trace::trace_function(I, current->module, current->eval("ops.square"),
                                                 {TraceInput::tensor(s.dtype, s.shape)}, {}, "inner");
    return Value::integer(static_cast<int64_t>(topo_order(*inner).size()));
  });
  f.run(
      "def outer(x):\n"
      "    n = trace_square(x)\n"
      "    return x * n\n");
  ir::FuncGraph* g = f.trace("outer", {spec(DType::Float32, {3})}, {}, "outer");
  REQUIRE(g);
  // The inner graph is its own (a parameter, the mul and its primitive
  // constant); the outer graph used that node count, 3, as a constant.
  ir::FuncGraph* inner = f.module.find_graph("inner");
  REQUIRE(inner);
  CHECK(ir::print_graph(*inner) ==
        "# IR of: inner\nsubgraph @inner(%para1_x) {\n  %0 = mul(%para1_x, %para1_x)\n  return(%0)\n}\n");
  CHECK(contains(ir::print_graph(*g), "mul(%para1_x, Tensor[Float32]()[3.0])"));
}

TEST_CASE("concat of tracers and tensors, a concrete tensor on the left of operators, iteration") {
  Fixture f;
  f.run(
      "k = _C.Tensor([[0.5, -1.0, 2.0]])\n"
      "def mix(x):\n"
      "    rows = [r * 2 for r in x]\n"
      "    y = _C.concat([k, x, rows[1].reshape(1, 3)], axis=0)\n"
      "    return (k * y, k < y, k @ x.T)\n");
  ir::FuncGraph* g = f.trace("mix", {spec(DType::Float32, {2, 3})});
  REQUIRE(g);
  std::string text = ir::print_graph(*g);
  CHECK(contains(text, "concat[axis=0](Tensor[Float32](1, 3)[0.5, -1.0, 2.0], %para1_x, %"));
  CHECK(contains(text, "less(Tensor[Float32](1, 3)[0.5, -1.0, 2.0], %"));
  Tensor x = sample(DType::Float32, {2, 3});
  exec::RtValue r = run_both(f, g, "mix", {f.wrap(x)}, {x});
  // Row 3 of y is 2 * x[1]; k * y scales it by k: element (3, 2) = 2 * 2 * x[1][2].
  CHECK(r.tuple()[0].tensor().item_at(11) == doctest::Approx(4 * x.item_at(5)).epsilon(1e-6));
}
