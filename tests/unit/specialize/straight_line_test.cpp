// Specialization of straight-line code: kernel primitives, Python scalars,
// tuples, host calls and the typed printout.
#include "spec_test_util.h"

using namespace msl;
using namespace msl::jit;
using jit::test::f32;
using jit::test::Parsed;
using kernels::DType;

TEST_CASE("specialize: shapes and dtypes flow through matmul, broadcasting add, reduce_sum and cast") {
  Parsed p(R"(subgraph @f(%para1_x, %para2_w, %para3_b) {
  %0 = matmul[transpose_a=False, transpose_b=False](%para1_x, %para2_w)
  %1 = add(%0, %para3_b)
  %2 = reduce_sum[axes=(1,), keep_dims=False](%1)
  %3 = reduce_sum[axes=(0,), keep_dims=True](%1)
  %4 = cast[dtype=Float16](%2)
  %5 = make_tuple(%4, %3)
  return(%5)
}
)");
  // x (4, 3) @ w (3, 5) = (4, 5); + b (5) broadcasts; sum over axis 1 -> (4); over 0 kept -> (1, 5).
  Specialized s = p.run({f32({4, 3}), f32({3, 5}), f32({5})});
  CHECK(to_string(s.output) == "(Tensor[Float16](4), Tensor[Float32](1, 5))");
  CHECK(s.output == abs_tuple({abs_tensor(DType::Float16, {4}), f32({1, 5})}));
  CHECK(jit::test::typed_text(s) ==
        R"(# IR of: f_1
subgraph @f_1(%para1_x, %para2_w, %para3_b) {
  %0 = matmul[transpose_a=False, transpose_b=False](%para1_x, %para2_w) : (Tensor[Float32](4, 3), Tensor[Float32](3, 5)) -> Tensor[Float32](4, 5)
  %1 = add(%0, %para3_b) : (Tensor[Float32](4, 5), Tensor[Float32](5)) -> Tensor[Float32](4, 5)
  %2 = reduce_sum[axes=(1,), keep_dims=False](%1) : (Tensor[Float32](4, 5)) -> Tensor[Float32](4)
  %3 = cast[dtype=Float16](%2) : (Tensor[Float32](4)) -> Tensor[Float16](4)
  %4 = reduce_sum[axes=(0,), keep_dims=True](%1) : (Tensor[Float32](4, 5)) -> Tensor[Float32](1, 5)
  %5 = make_tuple(%3, %4) : (Tensor[Float16](4), Tensor[Float32](1, 5)) -> (Tensor[Float16](4), Tensor[Float32](1, 5))
  return(%5)
}
)");
  // The primal graph is untouched and still has no types.
  CHECK(s.graph != p.g);
  CHECK(s.type_of(p.g->output()).empty());
}

TEST_CASE("specialize: a shape error names the primitive, the shapes and the line") {
  Parsed p(R"(subgraph @f(%para1_x, %para2_w) {
  %0 = matmul[transpose_a=False, transpose_b=False](%para1_x, %para2_w)
      # In file m.msl:7:9
  return(%0)
}
)");
  std::string e = p.error({f32({4, 3}), f32({4, 5})});
  CHECK(e.rfind("m.msl:7: matmul", 0) == 0);
  CHECK(e.find("(4, 3)") != std::string::npos);
  CHECK(p.error({f32({4, 3}), abs_tuple({})}) == "m.msl:7: matmul: argument 2 must be a tensor or a number, got ()");
  CHECK(p.error({f32({4, 3})}) == "@f takes 2 arguments, got 1");
}

TEST_CASE("specialize: Python scalars take the tensor's dtype, and scalar arithmetic folds to constants") {
  Parsed p(R"(subgraph @f(%para1_x, %para2_n) {
  %0 = mul(%para1_x, 2)
  %1 = add(%para2_n, 1)
  %2 = div(%1, 4)
  %3 = less(%para2_n, 2.5)
  %4 = mul(%para2_n, %para2_n)
  %5 = make_tuple(%0, %1, %2, %3, %4)
  return(%5)
}
)");
  // An int tensor times a Python int stays Int32 (the scalar takes the tensor's dtype).
  Specialized s = p.run({abs_tensor(DType::Int32, {3}), abs_const(int64_t{3})});
  // 3 + 1 = 4; 4 / 4 = 1.0 (true division); 3 < 2.5 is False; 3 * 3 = 9.
  CHECK(to_string(s.output) == "(Tensor[Int32](3), Int64=4, Float32=1.0, Bool=False, Int64=9)");
  // The constants are folded into the clone: only the tensor op and the tuple remain.
  CHECK(jit::test::typed_text(s) == R"(# IR of: f_1
subgraph @f_1(%para1_x, %para2_n) {
  %0 = mul(%para1_x, 2) : (Tensor[Int32](3), Int64=2) -> Tensor[Int32](3)
  %1 = make_tuple(%0, 4, 1.0, False, 9) : (Tensor[Int32](3), Int64=4, Float32=1.0, Bool=False, Int64=9) -> (Tensor[Int32](3), Int64=4, Float32=1.0, Bool=False, Int64=9)
  return(%1)
}
)");
  // Not constant: the kinds only.
  Parsed q(R"(subgraph @f(%para1_x, %para2_n) {
  %0 = mul(%para1_x, 2)
  %1 = add(%para2_n, 1)
  %2 = div(%1, 4)
  %3 = less(%para2_n, 2.5)
  %4 = mul(%para2_n, %para2_n)
  %5 = make_tuple(%0, %1, %2, %3, %4)
  return(%5)
}
)");
  Specialized t = q.run({abs_tensor(DType::Int32, {3}), abs_scalar(ScalarKind::Int)});
  CHECK(to_string(t.output) == "(Tensor[Int32](3), Int64, Float32, Bool, Int64)");
}

TEST_CASE("specialize: tuple operators") {
  Parsed p(R"(subgraph @f(%para1_t, %para2_y) {
  %0 = tuple_getitem(%para1_t, 1)
  %1 = tuple_getitem(%para1_t, -2)
  %2 = tuple_len(%para1_t)
  %3 = tuple_setitem(%para1_t, 0, %para2_y)
  %4 = add(%0, %1)
  %5 = make_tuple(%4, %2, %3)
  return(%5)
}
)");
  AbsValue t = abs_tuple({f32({2}), f32({3, 1}), abs_const(true)});
  Specialized s = p.run({t, abs_scalar(ScalarKind::Float)});
  // item 1 (3, 1) + item -2 = item 1 broadcast to (3, 1); len 3; item 0 replaced by the float.
  CHECK(to_string(s.output) == "(Tensor[Float32](3, 1), Int64=3, (Float32, Tensor[Float32](3, 1), Bool=True))");
  CHECK(p.error({abs_tuple({f32({2})}), abs_scalar(ScalarKind::Float)}) ==
        "tuple_getitem: index 1 out of range for a tuple of 1");
  CHECK(p.error({f32({2}), abs_scalar(ScalarKind::Float)}) ==
        "tuple_getitem: expected a tuple, got Tensor[Float32](2)");
}

namespace {
struct FakeHost : ir::HostObject {
  std::string n;
  explicit FakeHost(std::string name) : n(std::move(name)) {}
  std::string name() const override { return n; }
};
}  // namespace

TEST_CASE("specialize: host objects are typed by the callback, AbsAny without one, and never folded away") {
  ir::IrModule m;
  ir::FuncGraph* g = m.new_graph("f");
  ir::Node* x = g->add_param("x");
  auto host = std::make_shared<FakeHost>("pyfn");
  ir::Node* call = g->apply({g->constant(ir::HostRef(host)), x, g->constant(int64_t{2})});
  ir::Node* len = g->apply({g->constant(ir::HostRef(std::make_shared<FakeHost>("other")))});
  g->set_output(g->apply(ir::IrOp::make_tuple, {call, len}));

  std::vector<std::vector<AbsValue>> seen;
  SpecializeOptions opts;
  opts.host_call = [&](const ir::HostRef& h, const std::vector<AbsValue>& args) -> std::optional<AbsValue> {
    if (h != ir::HostRef(host)) return std::nullopt;
    seen.push_back(args);
    return abs_const(int64_t{7});
  };
  Specialized s = specialize(m, *g, {f32({2, 2})}, opts);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == std::vector<AbsValue>{f32({2, 2}), abs_const(int64_t{2})});
  CHECK(to_string(s.output) == "(Int64=7, Any)");
  // The call's result is a constant, but the host call stays (it may have effects).
  CHECK(ir::print_graph(*s.graph, {}) == R"(# IR of: f_1
subgraph @f_1(%para1_x) {
  %0 = $pyfn(%para1_x, 2)
  %1 = $other()
  %2 = make_tuple(%0, %1)
  return(%2)
}
)");
  // No callback: Any.
  Specialized t = specialize(m, *g, {f32({2, 2})}, {});
  CHECK(to_string(t.output) == "(Any, Any)");

  // A graph calling the host: its call is kept although its value is known,
  // while a pure graph with a known value folds to the constant.
  ir::FuncGraph* wrap = m.new_graph("wrap");
  wrap->set_output(wrap->apply({wrap->constant(ir::HostRef(host)), wrap->constant(1.0)}));
  ir::FuncGraph* pure = m.new_graph("pure");
  pure->set_output(pure->apply(kernels::Prim::add, {pure->constant(int64_t{2}), pure->constant(int64_t{3})}));
  ir::FuncGraph* top = m.new_graph("top");
  top->set_output(
      top->apply(ir::IrOp::make_tuple, {top->apply({top->constant(wrap)}), top->apply({top->constant(pure)})}));
  Specialized u = specialize(m, *top, {}, opts);
  CHECK(to_string(u.output) == "(Int64=7, Int64=5)");
  CHECK(ir::print_graph(*u.graph, {}) == R"(# IR of: top_1
subgraph @top_1() {
  %0 = @wrap_1()
  %1 = make_tuple(%0, 5)
  return(%1)
}
)");
}

TEST_CASE("specialize: effects keep their order; print is not folded although its result is None") {
  Parsed p(R"(subgraph @f(%para1_x, %para2_u) {
  %0 = print(%para1_x, %para2_u)
  %1 = update_state(%para2_u, %0)
  %2 = assign(%para1_x, 1.0, %1)
  %3 = update_state(%1, %2)
  %4 = depend(%para1_x, %3)
  %5 = make_tuple(%4, %3)
  return(%5)
}
)");
  Specialized s = p.run({f32({2}), AbsState{}});
  CHECK(to_string(s.output) == "(Tensor[Float32](2), State)");
  std::string text = jit::test::typed_text(s);
  CHECK(text.find("print(%para1_x, %para2_u) : (Tensor[Float32](2), State) -> None") != std::string::npos);
  CHECK(text.find("assign(%para1_x, 1.0, %1) : (Tensor[Float32](2), Float32=1.0, State) -> Tensor[Float32](2)") !=
        std::string::npos);
}

TEST_CASE("specialize: a constant depended on effects keeps them (an optimizer's `return True`)") {
  Parsed p(R"(subgraph @f(%para1_x, %para2_u) {
  %0 = assign(%para1_x, 2.0, %para2_u)
  %1 = update_state(%para2_u, %0)
  %2 = depend(True, %1)
  return(%2)
}
)");
  Specialized s = p.run({f32({2}), AbsState{}});
  CHECK(to_string(s.output) == "Bool=True");
  std::string text = jit::test::typed_text(s);
  CHECK(text.find("assign(%para1_x, 2.0, %para2_u)") != std::string::npos);
  CHECK(text.find("depend(True, %1)") != std::string::npos);
}
