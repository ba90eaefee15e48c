// The specialized graphs compute what the primal graphs compute: both run
// on the debug-mode executor with the same concrete arguments, and the
// concrete result has the inferred type (a tensor's dtype and shape, a
// Python number's kind and, when inferred, its value).
#include "jit/exec/executor.h"
#include "spec_test_util.h"

using namespace msl;
using namespace msl::jit;
using exec::RtValue;
using jit::test::f32;
using jit::test::Parsed;
using kernels::DType;

namespace {

// Every number of a value, in order: scalars as one, tensors element-wise.
void flatten(const RtValue& v, std::vector<double>& out) {
  if (auto t = v.get_if<kernels::Tensor>()) {
    for (int64_t i = 0; i < t->numel(); ++i) out.push_back(t->item_at(i));
  } else if (auto i = v.get_if<int64_t>()) {
    out.push_back(static_cast<double>(*i));
  } else if (auto d = v.get_if<double>()) {
    out.push_back(*d);
  } else if (auto b = v.get_if<bool>()) {
    out.push_back(*b ? 1.0 : 0.0);
  } else if (v.is<exec::RtTuple>()) {
    for (const RtValue& x : v.tuple()) flatten(x, out);
  } else {
    FAIL("unexpected result " << exec::type_name(v));
  }
}

// The concrete value fits the abstract one.
void check_conforms(const RtValue& v, const AbsValue& a) {
  if (auto t = a.get_if<AbsTensor>()) {
    REQUIRE(v.is<kernels::Tensor>());
    CHECK(v.tensor().dtype() == t->dtype);
    CHECK(v.tensor().shape() == t->shape);
  } else if (auto s = a.get_if<AbsScalar>()) {
    switch (s->kind) {
      case ScalarKind::Bool:
        REQUIRE(v.is<bool>());
        if (s->value) CHECK(std::get<bool>(*s->value) == v.as<bool>());
        break;
      case ScalarKind::Int:
        REQUIRE(v.is<int64_t>());
        if (s->value) CHECK(std::get<int64_t>(*s->value) == v.as<int64_t>());
        break;
      case ScalarKind::Float:
        REQUIRE(v.is<double>());
        if (s->value) CHECK(std::get<double>(*s->value) == v.as<double>());
        break;
      default: FAIL("unexpected scalar kind " << to_string(a));
    }
  } else if (auto tu = a.get_if<AbsTuple>()) {
    REQUIRE(v.is<exec::RtTuple>());
    REQUIRE(v.tuple().size() == tu->items.size());
    for (size_t i = 0; i < tu->items.size(); ++i) check_conforms(v.tuple()[i], tu->items[i]);
  } else {
    FAIL("unexpected abstract result " << to_string(a));
  }
}

// Specializes the first graph of `text` for `abs`, runs primal and clone on
// `args`, and returns the numbers of the result.
std::vector<double> agree(const std::string& text, const std::vector<AbsValue>& abs, const std::vector<RtValue>& args) {
  Parsed p(text);
  Specialized s = p.run(abs);
  RtValue primal = exec::run_graph(*p.g, args);
  RtValue special = exec::run_graph(*s.graph, args);
  std::vector<double> a, b;
  flatten(primal, a);
  flatten(special, b);
  CHECK(a == b);
  check_conforms(special, s.output);
  check_conforms(primal, s.output);
  return b;
}

kernels::Tensor tensor(const kernels::Dims& shape, const std::vector<double>& v) {
  return ir::tensor_from_values(DType::Float32, shape, v);
}

const char* kCount = R"(subgraph @count(%para1_n, %para2_x) {
  %0 = @count_while(0, %para2_x)
  return(%0)
}

subgraph @count_while(%para1_i, %para2_x) parent=@count {
  %0 = less(%para1_i, @count.%para1_n)
  %1 = switch(%0, @count_while_body, @count_while_exit)
  %2 = %1()
  return(%2)
}

subgraph @count_while_body() parent=@count_while {
  %0 = add(@count_while.%para1_i, 1)
  %1 = mul(@count_while.%para2_x, 2.0)
  %2 = @count_while(%0, %1)
  return(%2)
}

subgraph @count_while_exit() parent=@count_while {
  %0 = make_tuple(@count_while.%para1_i, @count_while.%para2_x)
  return(%0)
}
)";

// while j < n: (while i < j: x = x + 1.0; i += 1); j += 1
const char* kNested = R"(subgraph @nest(%para1_n, %para2_x) {
  %0 = @outer_while(0, %para2_x)
  %1 = tuple_getitem(%0, 1)
  return(%1)
}

subgraph @outer_while(%para1_j, %para2_x) parent=@nest {
  %0 = less(%para1_j, @nest.%para1_n)
  %1 = switch(%0, @outer_body, @outer_exit)
  %2 = %1()
  return(%2)
}

subgraph @outer_body() parent=@outer_while {
  %0 = @inner_while(0, @outer_while.%para2_x)
  %1 = tuple_getitem(%0, 1)
  %2 = add(@outer_while.%para1_j, 1)
  %3 = @outer_while(%2, %1)
  return(%3)
}

subgraph @outer_exit() parent=@outer_while {
  %0 = make_tuple(@outer_while.%para1_j, @outer_while.%para2_x)
  return(%0)
}

subgraph @inner_while(%para1_i, %para2_x) parent=@outer_body {
  %0 = less(%para1_i, @outer_while.%para1_j)
  %1 = switch(%0, @inner_body, @inner_exit)
  %2 = %1()
  return(%2)
}

subgraph @inner_body() parent=@inner_while {
  %0 = add(@inner_while.%para2_x, 1.0)
  %1 = add(@inner_while.%para1_i, 1)
  %2 = @inner_while(%1, %0)
  return(%2)
}

subgraph @inner_exit() parent=@inner_while {
  %0 = make_tuple(@inner_while.%para1_i, @inner_while.%para2_x)
  return(%0)
}
)";

}  // namespace

TEST_CASE("executor agreement: a counting loop, with the bound known and unknown") {
  // x * 2^3 and i = 3.
  CHECK(agree(kCount, {abs_scalar(ScalarKind::Int), f32({2})}, {RtValue(int64_t{3}), tensor({2}, {1, 2})}) ==
        std::vector<double>{3, 8, 16});
  CHECK(agree(kCount, {abs_const(int64_t{3}), f32({2})}, {RtValue(int64_t{3}), tensor({2}, {1, 2})}) ==
        std::vector<double>{3, 8, 16});
  // Zero and one iterations run the peeled first iteration's exit / body.
  CHECK(agree(kCount, {abs_scalar(ScalarKind::Int), f32({1})}, {RtValue(int64_t{0}), tensor({1}, {5})}) ==
        std::vector<double>{0, 5});
  CHECK(agree(kCount, {abs_scalar(ScalarKind::Int), f32({1})}, {RtValue(int64_t{1}), tensor({1}, {5})}) ==
        std::vector<double>{1, 10});
}

TEST_CASE("executor agreement: nested loops, the inner one reading the outer counter") {
  // j = 0, 1, 2 adds 0 + 1 + 2 = 3 to every element.
  CHECK(agree(kNested, {abs_scalar(ScalarKind::Int), f32({2})}, {RtValue(int64_t{3}), tensor({2}, {0, 10})}) ==
        std::vector<double>{3, 13});
  CHECK(agree(kNested, {abs_const(int64_t{4}), f32({1})}, {RtValue(int64_t{4}), tensor({1}, {0})}) ==
        std::vector<double>{6});
}

TEST_CASE("executor agreement: an if on a tensor condition, both ways") {
  const char* pick = R"(subgraph @pick(%para1_c, %para2_x, %para3_y) {
  %0 = switch(%para1_c, @pick_true, @pick_false)
  %1 = %0()
  %2 = tuple_getitem(%1, 0)
  return(%2)
}

subgraph @pick_true() parent=@pick {
  %0 = add(@pick.%para2_x, 1.0)
  %1 = make_tuple(%0)
  return(%1)
}

subgraph @pick_false() parent=@pick {
  %0 = mul(@pick.%para3_y, 2.0)
  %1 = make_tuple(%0)
  return(%1)
}
)";
  std::vector<AbsValue> abs{abs_tensor(DType::Bool, {}), f32({2}), f32({2})};
  auto cond = [](bool b) { return RtValue(ir::tensor_from_values(DType::Bool, {}, {b ? 1.0 : 0.0})); };
  CHECK(agree(pick, abs, {cond(true), tensor({2}, {1, 2}), tensor({2}, {3, 4})}) == std::vector<double>{2, 3});
  CHECK(agree(pick, abs, {cond(false), tensor({2}, {1, 2}), tensor({2}, {3, 4})}) == std::vector<double>{6, 8});
}

TEST_CASE("executor agreement: recursion and closures") {
  const char* fact = R"(subgraph @fact(%para1_n) {
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
)";
  CHECK(agree(fact, {abs_const(int64_t{5})}, {RtValue(int64_t{5})}) == std::vector<double>{120});
  CHECK(agree(fact, {abs_scalar(ScalarKind::Int)}, {RtValue(int64_t{4})}) == std::vector<double>{24});

  const char* closure = R"(subgraph @outer(%para1_x) {
  %0 = mul(%para1_x, 2.0)
  %1 = partial(@inner, 1.0)
  %2 = %1(%para1_x)
  %3 = @inner(3.0, %2)
  return(%3)
}

subgraph @inner(%para1_a, %para2_y) parent=@outer {
  %0 = add(%para2_y, @outer.%0)
  %1 = add(%0, %para1_a)
  return(%1)
}
)";
  // inner(1, x) = 3x + 1; inner(3, 3x + 1) = 3x + 1 + 2x + 3.
  CHECK(agree(closure, {f32({2})}, {tensor({2}, {1, 2})}) == std::vector<double>{9, 14});
}

TEST_CASE("executor agreement: Python arithmetic on numbers, folded and not") {
  const char* arith = R"(subgraph @f(%para1_a, %para2_b, %para3_c) {
  %0 = floordiv(%para1_a, %para2_b)
  %1 = mod(%para1_a, %para2_b)
  %2 = div(%para1_a, %para2_b)
  %3 = neg(%para3_c)
  %4 = add(%para3_c, %para3_c)
  %5 = floordiv(7.5, %para2_b)
  %6 = pow(%para1_a, %para2_b)
  %7 = greater_equal(%para1_a, %para2_b)
  %8 = make_tuple(%0, %1, %2, %3, %4, %5, %6, %7)
  return(%8)
}
)";
  std::vector<RtValue> args{RtValue(int64_t{-7}), RtValue(int64_t{2}), RtValue(true)};
  // -7 // 2 = -4 and -7 % 2 = 1 (rounding to -inf), -7 / 2 = -3.5, -True = -1, True + True = 2,
  // 7.5 // 2 = 3.0; pow is not Python arithmetic: a 0-d Int64 tensor (-7)^2 = 49.
  std::vector<double> expect{-4, 1, -3.5, -1, 2, 3, 49, 0};
  CHECK(agree(arith, {abs_const(int64_t{-7}), abs_const(int64_t{2}), abs_const(true)}, args) == expect);
  CHECK(agree(arith, {abs_scalar(ScalarKind::Int), abs_scalar(ScalarKind::Int), abs_scalar(ScalarKind::Bool)}, args) ==
        expect);
  Parsed p(arith);
  CHECK(to_string(p.run({abs_const(int64_t{-7}), abs_const(int64_t{2}), abs_const(true)}).output) ==
        "(Int64=-4, Int64=1, Float32=-3.5, Int64=-1, Int64=2, Float32=3.0, Tensor[Int64](), Bool=False)");
  Parsed q(arith);
  CHECK(q.error({abs_const(int64_t{1}), abs_const(int64_t{0}), abs_const(true)}) ==
        "integer division or modulo by zero");
}
