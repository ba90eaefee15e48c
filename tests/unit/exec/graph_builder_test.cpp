// Graph executor on graphs built with the FuncGraph builder API, and the
// error cases: every failure is an ExecError naming the failing node's
// source line.
#include <string>
#include <vector>

#include "exec_test_util.h"
#include "lang/ir/func_graph.h"

using namespace exec_test;
using msl::exec::ExecError;
using msl::exec::RtValue;
using msl::ir::FuncGraph;
using msl::ir::IrModule;
using msl::ir::IrOp;
using msl::ir::Node;
using msl::kernels::DType;
using msl::kernels::Prim;

TEST_CASE("builder: matmul, broadcasting and a closure over an outer value") {
  IrModule m;
  FuncGraph* f = m.new_graph("f", nullptr, m.loc("b.msl", 1));
  Node* a = f->add_param("a");
  Node* b = f->add_param("b");
  Node* ab = f->apply(Prim::matmul, {a, b}, "ab", m.loc("b.msl", 2));
  Node* bias = f->apply(Prim::sub, {ab, f->constant(1.0)}, "bias", m.loc("b.msl", 3));
  FuncGraph* g = m.new_graph("g", f, m.loc("b.msl", 4));
  Node* s = g->add_param("s");
  g->set_output(g->apply(Prim::mul, {bias, s}, "", m.loc("b.msl", 5)));
  Node* call = f->apply({f->constant(g), f->constant(0.5)}, "", m.loc("b.msl", 6));
  f->set_output(call);

  std::vector<double> av = {1, 2, 3, 4, 5, 6}, bv = {1, 0, -1, 2, 0.5, 3};  // (2,3) @ (3,2)
  RtValue r = msl::exec::run_graph(*f, {tensor(DType::Float64, {2, 3}, av), tensor(DType::Float64, {3, 2}, bv)});
  std::vector<double> expect(4);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      double acc = 0;
      for (int k = 0; k < 3; ++k) acc += av[i * 3 + k] * bv[k * 2 + j];
      expect[i * 2 + j] = (acc - 1.0) * 0.5;
    }
  CHECK(values(r) == expect);
}

TEST_CASE("builder: a counting loop with IR operators and a tuple state") {
  // loop(t) = t[0] < 1000 ? loop((t[0] + 1, t[1] + t[0] * t[0])) : t[1]
  IrModule m;
  FuncGraph* loop = m.new_graph("loop");
  Node* t = loop->add_param("t");
  Node* i = loop->apply(IrOp::tuple_getitem, {t, loop->constant(int64_t{0})});
  Node* acc = loop->apply(IrOp::tuple_getitem, {t, loop->constant(int64_t{1})});
  Node* cond = loop->apply(Prim::less, {i, loop->constant(int64_t{1000})});
  FuncGraph* body = m.new_graph("body", loop);
  Node* i1 = body->apply(Prim::add, {i, body->constant(int64_t{1})});
  Node* sq = body->apply(Prim::mul, {i, i});
  Node* acc1 = body->apply(Prim::add, {acc, sq});
  Node* next = body->apply(IrOp::make_tuple, {i1, acc1});
  body->set_output(body->apply({body->constant(loop), next}));
  FuncGraph* done = m.new_graph("done", loop);
  done->set_output(done->apply(IrOp::depend, {acc, i}));
  Node* sel = loop->apply(IrOp::switch_, {cond, loop->constant(body), loop->constant(done)});
  loop->set_output(loop->apply({sel}));

  double expect = 0;
  for (int k = 0; k < 1000; ++k) expect += static_cast<double>(k) * k;
  RtValue init = msl::exec::make_tuple({RtValue(tensor(DType::Float64, {}, {0})), RtValue(0.0)});
  RtValue r = msl::exec::run_graph(*loop, {init});
  CHECK(r.tensor().dtype() == DType::Float64);
  CHECK(scalar(r) == expect);
}

TEST_CASE("a kernel shape mismatch names the node's file:line") {
  auto m = parse(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = neg(%para1_x)\n"
      "      # In file model.msl:6\n"
      "  %1 = add(%0, %para2_y)\n"
      "      # In file model.msl:7\n"
      "  return(%1)\n"
      "}\n");
  std::string e = run_error(*m, "f", {tensor(DType::Float32, {3, 4}, std::vector<double>(12, 1.0)),
                                      tensor(DType::Float32, {2, 4}, std::vector<double>(8, 1.0))});
  CHECK_MESSAGE(e.rfind("model.msl:7: ShapeError: ", 0) == 0, e);
  CHECK_MESSAGE(e.find("broadcast") != std::string::npos, e);
  try {
    run(*m, "f", {tensor(DType::Float32, {3}, {1, 2, 3}), tensor(DType::Float32, {2}, {1, 2})});
    FAIL("expected an ExecError");
  } catch (const ExecError& err) {
    CHECK(err.location() == "model.msl:7");
    CHECK(err.message().find("ShapeError") == 0);
  }
}

TEST_CASE("an error inside a called graph names the innermost node") {
  auto m = parse(
      "subgraph @f(%para1_x) {\n"
      "  %0 = @g(%para1_x)\n"
      "      # In file m.msl:2\n"
      "  %1 = neg(%0)\n"
      "  return(%1)\n"
      "}\n"
      "subgraph @g(%para1_x) {\n"
      "  %0 = log(%para1_x)\n"
      "  %1 = reshape[shape=(5,)](%0)\n"
      "      # In file m.msl:9\n"
      "  return(%1)\n"
      "}\n");
  std::string e = run_error(*m, "f", {tensor(DType::Float32, {2}, {1, 2})});
  CHECK_MESSAGE(e.rfind("m.msl:9: ", 0) == 0, e);
}

TEST_CASE("dtype and value errors from kernels") {
  auto m = parse(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = softmax_cross_entropy(%para1_x, %para2_y)\n"
      "      # In file d.msl:3\n"
      "  return(%0)\n"
      "}\n");
  std::string e = run_error(*m, "f", {tensor(DType::Float32, {1, 2}, {1, 0}), tensor(DType::Float64, {1, 2}, {1, 0})});
  CHECK_MESSAGE(e.rfind("d.msl:3: DTypeError: ", 0) == 0, e);
  auto v = parse(
      "subgraph @f(%para1_x) {\n"
      "  %0 = dropout[keep_prob=2.0, seed=1, offset=0](%para1_x)\n"
      "      # In file d.msl:5\n"
      "  return(%0)\n"
      "}\n");
  e = run_error(*v, "f", {tensor(DType::Float32, {2}, {1, 0})});
  CHECK_MESSAGE(e.rfind("d.msl:5: ValueError: ", 0) == 0, e);
}

TEST_CASE("wrong arity, non-callables and unsupported operators") {
  auto m = parse(
      "subgraph @arity(%para1_x) {\n"
      "  %0 = @one(%para1_x, 2)\n"
      "      # In file a.msl:1\n"
      "  return(%0)\n"
      "}\n"
      "subgraph @one(%para1_x) {\n"
      "  return(%para1_x)\n"
      "}\n"
      "subgraph @noncall(%para1_x) {\n"
      "  %0 = add(%para1_x, 1)\n"
      "  %1 = %0(2)\n"
      "      # In file a.msl:2\n"
      "  %2 = neg(%1)\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @grad(%para1_x) {\n"
      "  %0 = J(@one)\n"
      "      # In file a.msl:3\n"
      "  return(%0)\n"
      "}\n"
      "subgraph @env() {\n"
      "  %0 = env_new()\n"
      "      # In file a.msl:4\n"
      "  return(%0)\n"
      "}\n"
      "subgraph @opargs() {\n"
      "  %0 = make_tuple(1, 2)\n"
      "  %1 = tuple_getitem(%0, \"x\")\n"
      "      # In file a.msl:5\n"
      "  return(%1)\n"
      "}\n");
  std::string e = run_error(*m, "arity", {RtValue(1.0)});
  CHECK_MESSAGE(e == "a.msl:1: @one takes 1 arguments, got 2", e);
  CHECK(run_error(*m, "arity", {}).find("@arity takes 1 arguments, got 0") != std::string::npos);
  e = run_error(*m, "noncall", {RtValue(1.0)});
  CHECK_MESSAGE(e == "a.msl:2: a value of type float is not callable", e);
  e = run_error(*m, "grad", {RtValue(1.0)});
  // Without ExecOptions::runtime_j (the autodiff runtime), J has no meaning.
  CHECK_MESSAGE(e == "a.msl:3: J of a closure @one needs the autodiff runtime", e);
  e = run_error(*m, "opargs", {});
  CHECK_MESSAGE(e.rfind("a.msl:5: tuple_getitem: the index must be an int", 0) == 0, e);
}

TEST_CASE("a graph with free variables cannot be run on its own") {
  auto m = parse(
      "subgraph @f(%para1_x) {\n"
      "  return(@g)\n"
      "}\n"
      "subgraph @g() parent=@f {\n"
      "  %0 = neg(@f.%para1_x)\n"
      "  return(%0)\n"
      "}\n");
  CHECK_THROWS_AS(run(*m, "g", {}), ExecError);
  RtValue c = run(*m, "f", {RtValue(2.0)});
  CHECK(scalar(msl::exec::call_value(c, {})) == -2.0);
}
