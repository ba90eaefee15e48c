// Specialization across graphs: per-signature clones, if (switch) folding
// and joining, loops (tail recursion) and closures.
#include "spec_test_util.h"

using namespace msl;
using namespace msl::jit;
using jit::test::f32;
using jit::test::Parsed;
using kernels::DType;

namespace {

// The text of the graph named `name` (and its nested graphs), without types.
std::string graph_text(ir::IrModule& m, const std::string& name) {
  ir::FuncGraph* g = m.find_graph(name);
  REQUIRE_MESSAGE(g, name);
  ir::PrintOptions o;
  o.locations = false;
  return ir::print_graph(*g, o);
}

// The `if` of the lowering: both branches are closures returning a
// one-tuple of the assigned variable.
const char* kPick = R"(subgraph @pick(%para1_c, %para2_x, %para3_y) {
  %0 = switch(%para1_c, @pick_true, @pick_false)
      # In file t.msl:11:5
  %1 = %0()
      # In file t.msl:11:5
  %2 = tuple_getitem(%1, 0)
  return(%2)
}

subgraph @pick_true() parent=@pick {
  %0 = add(@pick.%para2_x, 1.0)
      # In file t.msl:12:13
  %1 = make_tuple(%0)
      # In file t.msl:11:5
  return(%1)
}

subgraph @pick_false() parent=@pick {
  %0 = mul(@pick.%para3_y, 2.0)
      # In file t.msl:14:13
  %1 = make_tuple(%0)
      # In file t.msl:11:5
  return(%1)
}
)";

// `while i < n: x = BODY; i = i + 1; return (i, x)` as the lowering emits
// it (tests/lower/example.msl): a tail-recursive graph per loop.
std::string counting_loop(const std::string& body) {
  return R"(subgraph @count(%para1_n, %para2_x) {
  %0 = @count_while(0, %para2_x)
      # In file t.msl:5:5
  return(%0)
}

subgraph @count_while(%para1_i, %para2_x) parent=@count {
  %0 = less(%para1_i, @count.%para1_n)
      # In file t.msl:5:11
  %1 = switch(%0, @count_while_body, @count_while_exit)
      # In file t.msl:5:5
  %2 = %1()
      # In file t.msl:5:5
  return(%2)
}

subgraph @count_while_body() parent=@count_while {
  %0(i) = add(@count_while.%para1_i, 1)
      # In file t.msl:7:13
  %1(x) = )" +
         body + R"(
      # In file t.msl:6:13
  %2 = @count_while(%0, %1)
      # In file t.msl:5:5
  return(%2)
}

subgraph @count_while_exit() parent=@count_while {
  %0 = make_tuple(@count_while.%para1_i, @count_while.%para2_x)
      # In file t.msl:5:5
  return(%0)
}
)";
}

}  // namespace

TEST_CASE("specialize: a graph called with two signatures is cloned twice; equal signatures share a clone") {
  Parsed p(R"(subgraph @f(%para1_a, %para2_b) {
  %0 = @g(%para1_a)
  %1 = @g(%para2_b)
  %2 = @g(%para1_a)
  %3 = make_tuple(%0, %1, %2)
  return(%3)
}

subgraph @g(%para1_x) {
  %0 = reduce_sum[axes=(0,), keep_dims=False](%para1_x)
  return(%0)
}
)");
  Specialized s = p.run({f32({2, 3}), f32({4})});
  CHECK(to_string(s.output) == "(Tensor[Float32](3), Tensor[Float32](), Tensor[Float32](3))");
  CHECK(graph_text(p.m, s.graph->name()) == R"(# IR of: f_1
subgraph @f_1(%para1_a, %para2_b) {
  %0 = @g_1(%para1_a)
  %1 = @g_2(%para2_b)
  %2 = @g_1(%para1_a)
  %3 = make_tuple(%0, %1, %2)
  return(%3)
}
)");
  CHECK(s.type_of(p.m.find_graph("g_1")->params()[0]) == "Tensor[Float32](2, 3)");
  CHECK(s.type_of(p.m.find_graph("g_1")->output()) == "Tensor[Float32](3)");
  CHECK(s.type_of(p.m.find_graph("g_2")->params()[0]) == "Tensor[Float32](4)");
  CHECK(s.type_of(p.m.find_graph("g_2")->output()) == "Tensor[Float32]()");
  CHECK_FALSE(p.m.find_graph("g_3"));
}

TEST_CASE("specialize: an if on a constant condition becomes the taken branch; the other is not analysed") {
  Parsed p(kPick);
  // The branches would not join (shapes 2 and 3): folding never looks at the false one.
  Specialized s = p.run({abs_const(true), f32({2}), f32({3})});
  CHECK(s.output == f32({2}));
  CHECK(graph_text(p.m, s.graph->name()) == R"(# IR of: pick_1
subgraph @pick_1(%para1_c, %para2_x, %para3_y) {
  %0 = @pick_true_1()
  %1 = tuple_getitem(%0, 0)
  return(%1)
}

# IR of: pick_true_1
subgraph @pick_true_1() parent=@pick_1 {
  %0 = add(@pick_1.%para2_x, 1.0)
  %1 = make_tuple(%0)
  return(%1)
}
)");
  CHECK_FALSE(p.m.find_graph("pick_false_1"));
  // An int condition folds the same way (0 is false).
  Parsed q(kPick);
  Specialized t = q.run({abs_const(int64_t{0}), f32({2}), f32({3})});
  CHECK(t.output == f32({3}));
  CHECK(q.m.find_graph("pick_false_1"));
  CHECK_FALSE(q.m.find_graph("pick_true_1"));
}

TEST_CASE("specialize: an if on a tensor condition with branches of one type joins them") {
  Parsed p(kPick);
  Specialized s = p.run({abs_tensor(DType::Bool, {}), f32({2}), f32({2})});
  CHECK(s.output == f32({2}));
  std::string text = jit::test::typed_text(s);
  CHECK(text.find("%0 = switch(%para1_c, @pick_true_1, @pick_false_1) : (Tensor[Bool](), Func, Func) -> Func") !=
        std::string::npos);
  CHECK(text.find("%1 = %0() : () -> (Tensor[Float32](2),)") != std::string::npos);
  // A Python bool that is not a constant also keeps both branches.
  Parsed q(kPick);
  CHECK(q.run({abs_scalar(ScalarKind::Bool), f32({2}), f32({2})}).output == f32({2}));
}

TEST_CASE("specialize: branches of different shapes are an error naming both lines") {
  Parsed p(kPick);
  CHECK(p.error({abs_tensor(DType::Bool, {}), f32({2}), f32({3})}) ==
        "t.msl:11: the branches of the if at t.msl:11 return different types: Tensor[Float32](2) (line 12) and "
        "Tensor[Float32](3) (line 14)");
  CHECK(p.error({abs_tensor(DType::Bool, {}), f32({2}), abs_tensor(DType::Float64, {2})}) ==
        "t.msl:11: the branches of the if at t.msl:11 return different types: Tensor[Float32](2) (line 12) and "
        "Tensor[Float64](2) (line 14)");
  CHECK(p.error({abs_tensor(DType::Bool, {2}), f32({2}), f32({2})}) ==
        "t.msl:11: the condition is a tensor of 2 elements; it must have exactly one");
}

TEST_CASE("specialize: a while loop with an int counter converges; the counter broadens to Int64") {
  Parsed p(counting_loop("mul(@count_while.%para2_x, 2.0)"));
  Specialized s = p.run({abs_scalar(ScalarKind::Int), f32({2, 3})});
  CHECK(to_string(s.output) == "(Int64, Tensor[Float32](2, 3))");
  CHECK(jit::test::untyped_nodes(s) == 0);
  // The first iteration (i = 0) is its own clone, whose body calls the loop
  // proper with i: Int64 (the join of 0 and 1).
  ir::FuncGraph* first = p.m.find_graph("count_while_1");
  ir::FuncGraph* loop = p.m.find_graph("count_while_2");
  REQUIRE(first);
  REQUIRE(loop);
  CHECK(s.type_of(first->params()[0]) == "Int64=0");
  CHECK(s.type_of(loop->params()[0]) == "Int64");
  CHECK(s.type_of(loop->params()[1]) == "Tensor[Float32](2, 3)");
  CHECK_FALSE(p.m.find_graph("count_while_3"));
  // The loop's body calls the loop itself, not a third clone.
  std::string body = graph_text(p.m, "count_while_body_2");
  CHECK(body.find("%2 = @count_while_2(%0, %1)") != std::string::npos);
  CHECK(body.find("@count_while_2.%para1_i") != std::string::npos);

  // With a constant bound the first test folds (0 < 3): the first iteration
  // goes straight to the body, whose next call is the general loop.
  Parsed q(counting_loop("mul(@count_while.%para2_x, 2.0)"));
  Specialized t = q.run({abs_const(int64_t{3}), f32({4})});
  CHECK(to_string(t.output) == "(Int64, Tensor[Float32](4))");
  std::string first_text = graph_text(q.m, "count_while_1");
  CHECK(first_text.find("switch") == std::string::npos);
  CHECK(first_text.find("%0 = @count_while_body_1()") != std::string::npos);
}

TEST_CASE("specialize: a loop-carried tensor that changes shape is an error") {
  Parsed p(counting_loop("concat[axis=0](@count_while.%para2_x, @count_while.%para2_x)"));
  CHECK(p.error({abs_scalar(ScalarKind::Int), f32({2, 3})}) ==
        "t.msl:5: @count_while is entered again with argument 2 of type Tensor[Float32](4, 3) where it had "
        "Tensor[Float32](2, 3): a value carried around a loop must keep its dtype and shape");
  Parsed q(counting_loop("cast[dtype=Float64](@count_while.%para2_x)"));
  CHECK(q.error({abs_scalar(ScalarKind::Int), f32({2, 3})})
            .find("of type Tensor[Float64](2, 3) where it had Tensor[Float32](2, 3)") != std::string::npos);
}

TEST_CASE("specialize: non-tail recursion reaches a fixpoint; recursion that never returns is an error") {
  Parsed p(R"(subgraph @fact(%para1_n) {
  %0 = less_equal(%para1_n, 1)
  %1 = switch(%0, @base, @rec)
  %2 = %1()
  return(%2)
}

subgraph @base() parent=@fact {
  return(1)
}

subgraph @rec() parent=@fact {
  %0 = sub(@fact.%para1_n, 1)
  %1 = @fact(%0)
  %2 = mul(@fact.%para1_n, %1)
  return(%2)
}
)");
  // The constant 5 folds the first test, then the counter broadens.
  Specialized s = p.run({abs_const(int64_t{5})});
  CHECK(to_string(s.output) == "Int64");
  CHECK(p.run({abs_const(int64_t{1})}).output == abs_const(int64_t{1}));
  Parsed f(R"(subgraph @forever(%para1_x) {
  %0 = @forever(%para1_x)
  return(%0)
}
)");
  CHECK(f.error({f32({2})}) == "@forever never returns: every path through @forever calls it again");
  // Mutual recursion reached from a caller names the graph that loops.
  Parsed g(R"(subgraph @main(%para1_n) {
  %0 = @even(%para1_n)
  return(%0)
}

subgraph @even(%para1_n) {
  %0 = @odd(%para1_n)
  return(%0)
}

subgraph @odd(%para1_n) {
  %0 = @even(%para1_n)
  return(%0)
}
)");
  CHECK(g.error({abs_scalar(ScalarKind::Int)}) == "@main never returns: every path through @even calls it again");
}

TEST_CASE("specialize: a closure reads the enclosing function's specialized values") {
  Parsed p(R"(subgraph @outer(%para1_x) {
  %0 = mul(%para1_x, 2.0)
  %1 = @inner(%para1_x)
  return(%1)
}

subgraph @inner(%para1_y) parent=@outer {
  %0 = add(%para1_y, @outer.%0)
  %1 = reduce_sum[axes=(1,), keep_dims=False](%0)
  return(%1)
}
)");
  Specialized s = p.run({f32({2, 3})});
  CHECK(s.output == f32({2}));
  CHECK(jit::test::untyped_nodes(s) == 0);
  CHECK(jit::test::typed_text(s) == R"(# IR of: outer_1
subgraph @outer_1(%para1_x) {
  %0 = @inner_1(%para1_x) : (Tensor[Float32](2, 3)) -> Tensor[Float32](2)
  %1 = mul(%para1_x, 2.0) : (Tensor[Float32](2, 3), Float32=2.0) -> Tensor[Float32](2, 3)
  return(%0)
}

# IR of: inner_1
subgraph @inner_1(%para1_y) parent=@outer_1 {
  %0 = add(%para1_y, @outer_1.%1) : (Tensor[Float32](2, 3), Tensor[Float32](2, 3)) -> Tensor[Float32](2, 3)
  %1 = reduce_sum[axes=(1,), keep_dims=False](%0) : (Tensor[Float32](2, 3)) -> Tensor[Float32](2)
  return(%1)
}
)");
}

TEST_CASE("specialize: partial application, functions as arguments, and J") {
  Parsed p(R"(subgraph @f(%para1_x, %para2_y) {
  %0 = partial(@scale, %para1_x)
  %1 = %0(%para2_y)
  %2 = @apply(@scale, %para2_y, %para2_y)
  %3 = J(@scale)
  %4 = %3(%para1_x, %para1_x)
  %5 = make_tuple(%1, %2, %4)
  return(%5)
}

subgraph @scale(%para1_a, %para2_b) {
  %0 = mul(%para1_a, %para2_b)
  return(%0)
}

subgraph @apply(%para1_fn, %para2_a, %para3_b) {
  %0 = %para1_fn(%para2_a, %para3_b)
  return(%0)
}
)");
  Specialized s = p.run({f32({3, 1}), f32({4})});
  // (3, 1) * (4) broadcasts to (3, 4); the J call returns (value, backpropagator).
  CHECK(to_string(s.output) == "(Tensor[Float32](3, 4), Tensor[Float32](4), (Tensor[Float32](3, 1), Any))");
  // Three signatures of @scale: (x, y), (y, y) through @apply, and (x, x) under J.
  CHECK(p.m.find_graph("scale_3"));
  CHECK_FALSE(p.m.find_graph("scale_4"));
  // Each use of @scale as a value refers to the clone its call reached, and
  // inside @apply's clone the call of the parameter becomes a direct call.
  std::string f = graph_text(p.m, "f_1");
  CHECK(f.find("%0 = partial(@scale_1, %para1_x)") != std::string::npos);
  CHECK(f.find("%2 = @apply_1(@scale_2, %para2_y, %para2_y)") != std::string::npos);
  CHECK(f.find("%3 = J(@scale_3)") != std::string::npos);
  CHECK(graph_text(p.m, "apply_1").find("%0 = @scale_2(%para2_a, %para3_b)") != std::string::npos);
  CHECK(p.error({abs_const(int64_t{1}), f32({4})}).empty());
}

TEST_CASE("specialize: J of J nests (value, backpropagator) pairs") {
  Parsed p(R"(subgraph @f(%para1_x) {
  %0 = J(@sq)
  %1 = J(%0)
  %2 = %1(%para1_x)
  return(%2)
}

subgraph @sq(%para1_a) {
  %0 = mul(%para1_a, %para1_a)
  return(%0)
}
)");
  CHECK(to_string(p.run({f32({2})}).output) == "((Tensor[Float32](2), Any), Any)");
  CHECK(graph_text(p.m, "f_1").find("%0 = J(@sq_1)") != std::string::npos);
}

TEST_CASE("specialize: a recursion whose argument types keep changing stops with an error") {
  Parsed p(R"(subgraph @grow(%para1_x) {
  %0 = make_tuple(%para1_x)
  %1 = @grow(%0)
      # In file t.msl:3:5
  return(%1)
}
)");
  SpecializeOptions opts;
  opts.max_recursion_signatures = 5;
  CHECK(p.error({f32({2})}, opts) ==
        "t.msl:3: the recursion of @grow does not converge: it is entered with 5 different argument types");
}

TEST_CASE("specialize: the typed printout parses back (the parser skips the types)") {
  Parsed p(kPick);
  Specialized s = p.run({abs_tensor(DType::Bool, {}), f32({2}), f32({2})});
  std::string text = ir::print_graph(*s.graph, s.print_options());
  CHECK(text.find(" : (Tensor[Bool](), Func, Func) -> Func") != std::string::npos);
  ir::IrModule again;
  ir::IrParseResult r = ir::parse_ir(text, again, "t.ir");
  REQUIRE_MESSAGE(r.ok(), r.error);
  ir::PrintOptions plain;
  CHECK(ir::print_graph(*r.graphs.front(), plain) == ir::print_graph(*s.graph, plain));
}

TEST_CASE("specialize: a nested graph without free variables may be used outside its parent") {
  Parsed p(R"(subgraph @other(%para1_y) {
  %0 = @shared(%para1_y)
  return(%0)
}

subgraph @f(%para1_x) {
  %0 = exp(%para1_x)
  return(%0)
}

subgraph @shared(%para1_c) parent=@f {
  %0 = exp(%para1_c)
  return(%0)
}

subgraph @reads(%para1_c) parent=@f {
  %0 = add(%para1_c, @f.%0)
  return(%0)
}

subgraph @bad(%para1_y) {
  %0 = @reads(%para1_y)
  return(%0)
}
)");
  CHECK(p.run({f32({2})}).output == f32({2}));
  CHECK(p.m.find_graph("shared_1")->parent() == nullptr);
  // One that reads its parent's values cannot.
  p.g = p.m.find_graph("bad");
  CHECK(p.error({f32({2})}) == "@f is not an enclosing function here, so its values cannot be read");
}

TEST_CASE("specialize: calling a non-function and nested roots are errors") {
  Parsed p(R"(subgraph @f(%para1_x) {
  %0 = %para1_x(1)
  return(%0)
}
)");
  CHECK(p.error({f32({2})}) == "a value of type Tensor[Float32](2) is not callable");
  Parsed q(kPick);
  CHECK_THROWS_AS(specialize(q.m, *q.m.find_graph("pick_true"), {}), SpecializeError);
}
