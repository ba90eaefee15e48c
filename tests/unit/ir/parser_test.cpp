// The IR text parser: print -> parse -> print round trips, every operand
// form, and clear errors (never a crash) on malformed or garbled text.
#include <doctest/doctest.h>

#include <string>

#include "lang/ir/ir_module.h"
#include "lang/ir/ir_parser.h"
#include "lang/ir/printer.h"
#include "lang/ir/verifier.h"

using namespace msl;
using namespace msl::ir;
using kernels::Prim;

namespace {

std::string reprint(const std::string& text) {
  IrModule m;
  IrParseResult r = parse_ir(text, m, "t.ir");
  REQUIRE_MESSAGE(r.ok(), r.error);
  CHECK(verify_module(m).empty());
  return print_module(m);
}

std::string parse_error(const std::string& text) {
  IrModule m;
  IrParseResult r = parse_ir(text, m, "t.ir");
  CHECK_FALSE(r.ok());
  return r.error;
}

// A module exercising every node kind and constant form: a closure with a
// free variable, a switch between branch graphs, a recursive call, tuples,
// the state token, attributes and tensor constants.
void build_everything(IrModule& m) {
  FuncGraph* f = m.new_graph("f", nullptr, m.loc("model.msl", 3, 1));
  Node* x = f->add_param("x");
  Node* u = f->add_param("u");
  Node* s = f->apply(Prim::reduce_sum, {x}, "s", m.loc("model.msl", 4, 9),
                     {{"axes", std::vector<int64_t>{0}}, {"keep_dims", false}});
  Node* c = f->apply(Prim::greater, {s, f->constant(0.0)}, "c", m.loc("model.msl", 5, 8));
  FuncGraph* t = m.new_graph("f_true", f, m.loc("model.msl", 5, 5));
  t->set_output(t->apply(
      Prim::mul,
      {s, t->constant(kernels::Tensor(tensor_from_values(kernels::DType::Float32, kernels::Dims{2}, {1.5, -2.0})))}));
  FuncGraph* e = m.new_graph("f_false", f);
  e->set_output(e->apply({e->constant(f), s, u}));  // recursion through the parent
  Node* br = f->apply(IrOp::switch_, {c, f->constant(t), f->constant(e)});
  Node* r = f->apply({br}, "r");
  Node* p = f->apply(IrOp::print, {f->constant(std::string("r is \"\\\n")), r, u});
  Node* u2 = f->apply(IrOp::update_state, {u, p}, "u");
  Node* cast = f->apply(Prim::cast, {r}, "", {}, {{"dtype", kernels::DType::Float16}});
  Node* tup = f->apply(IrOp::make_tuple, {cast, u2, f->constant(NoneValue{}), f->constant(int64_t{-7}),
                                          f->constant(true), f->constant(1e-30)});
  f->set_output(tup);
  f->flags().set("is_bprop", false);
  f->flags().set("note", std::string("a b"));
  // A second top-level graph calling a closure value and an empty-tuple attribute.
  FuncGraph* g = m.new_graph("g");
  Node* k = g->add_param();
  Node* v = g->apply({k, g->constant(int64_t{1})});
  g->set_output(g->apply(Prim::transpose, {v}, "", {}, {{"perm", std::vector<int64_t>{}}}));
}

}  // namespace

TEST_CASE("round trip: builder -> print -> parse -> print is identical") {
  IrModule m;
  build_everything(m);
  REQUIRE(verify_module(m).empty());
  std::string text = print_module(m);
  CHECK(text.find("@f.%para2_u") != std::string::npos);
  CHECK(text.find("Tensor[Float32](2)[1.5, -2.0]") != std::string::npos);
  CHECK(text.find("# In file model.msl:4:9") != std::string::npos);
  CHECK(reprint(text) == text);
}

TEST_CASE("the parser reads the documented format, with types and comments") {
  std::string text =
      "# a hand-written test graph\n"
      "# IR of: f (file.msl:3)\n"
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0(z) = mul(%para1_x, %para2_y) : (Tensor[Float32](2, 3), Tensor[Float32](2, 3)) -> Tensor[Float32](2, 3)\n"
      "      # In file file.msl:4\n"
      "\n"
      "  %1 = add(%0, 1.0)\n"
      "  return(%1)\n"
      "}\n";
  IrModule m;
  IrParseResult r = parse_ir(text, m, "t.ir");
  REQUIRE_MESSAGE(r.ok(), r.error);
  REQUIRE(r.graphs.size() == 1);
  FuncGraph* f = r.graphs[0];
  CHECK(f->name() == "f");
  CHECK(f->loc().valid());
  CHECK(f->loc().line == 3);
  REQUIRE(f->params().size() == 2);
  CHECK(f->params()[1]->name() == "y");
  Node* out = f->output();
  REQUIRE(out->is_call_of(Prim::add));
  Node* z = out->arg(0);
  CHECK(z->name() == "z");
  CHECK(*z->loc().file == "file.msl");
  CHECK(z->loc().line == 4);
  CHECK(std::get<double>(out->arg(1)->value()) == 1.0);
  CHECK(print_module(m) ==
        "# IR of: f (file.msl:3)\n"
        "subgraph @f(%para1_x, %para2_y) {\n"
        "  %0(z) = mul(%para1_x, %para2_y)\n"
        "      # In file file.msl:4\n"
        "  %1 = add(%0, 1.0)\n"
        "  return(%1)\n"
        "}\n");
}

TEST_CASE("forward references to graphs and values of every kind") {
  std::string text =
      "subgraph @main() {\n"
      "  %0 = @helper(-3, 2.5e3, \"s\\x01\", None, False, inf, -inf)\n"
      "  %1 = reduce_max[axes=(0, 1), keep_dims=True](Tensor[Int64](2, 2)[1, 2, 3, 4])\n"
      "  %2 = make_tuple(%0, %1, cast[dtype=Float64], Tensor[Bool](0)[])\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @helper(%para1, %para2, %para3, %para4, %para5, %para6, %para7) {\n"
      "  return(%para3)\n"
      "}\n";
  IrModule m;
  IrParseResult r = parse_ir(text, m);
  REQUIRE_MESSAGE(r.ok(), r.error);
  Node* call = r.graphs[0]->output()->arg(0);
  CHECK(call->callee()->as_graph() == r.graphs[1]);
  CHECK(std::get<int64_t>(call->arg(0)->value()) == -3);
  CHECK(std::get<double>(call->arg(1)->value()) == 2500.0);
  CHECK(std::get<std::string>(call->arg(2)->value()) == "s\x01");
  const PrimRef* red = r.graphs[0]->output()->arg(1)->callee()->as_prim();
  REQUIRE(red);
  CHECK(red->attrs.get_ints("axes") == std::vector<int64_t>{0, 1});
  CHECK(red->attrs.get_bool("keep_dims"));
  const auto& t = std::get<kernels::Tensor>(r.graphs[0]->output()->arg(1)->arg(0)->value());
  CHECK(t.dtype() == kernels::DType::Int64);
  CHECK(t.item_at(3) == 4.0);
  // Printing and parsing again is stable.
  std::string once = print_module(m);
  CHECK(reprint(once) == once);
}

TEST_CASE("malformed IR gives file:line:col errors") {
  auto check = [](const std::string& text, const std::string& where, const std::string& what) {
    std::string e = parse_error(text);
    CHECK_MESSAGE(e.rfind("t.ir:" + where + ": error: ", 0) == 0, e);
    CHECK_MESSAGE(e.find(what) != std::string::npos, e);
  };
  check("subgraph @f() {\n  return(%0)\n}\n", "2:10", "undefined node %0");
  check("subgraph @f() {\n  %0 = frobnicate(1)\n  return(%0)\n}\n", "2:8",
        "unknown primitive or operator 'frobnicate'");
  check("subgraph @f() {\n  %0 = add(1, 2\n  return(%0)\n}\n", "2:16", "expected ')'");
  check("subgraph @f() {\n  %0 = add(1, 2)\n", "3:1", "unexpected end of input");
  check("subgraph @f() {\n  %0 = add(1, 2)\n}\n", "3:1", "has no return");
  check("subgraph @f() {\n  return(1)\n}\nsubgraph @f() {\n  return(1)\n}\n", "4:11", "defined twice");
  check("subgraph @f() {\n  %0 = add(1, 2)\n  %0 = add(1, 2)\n  return(%0)\n}\n", "3:4", "node %0 is defined twice");
  check("subgraph @f(%x) {\n  return(1)\n}\n", "1:14", "expected parameter '%para1");
  check("subgraph @f() {\n  %0 = add(\"abc, 2)\n  return(%0)\n}\n", "2:12", "unterminated string");
  check("subgraph @f() {\n  %0 = neg(Tensor[Float32](2)[1.0])\n  return(%0)\n}\n", "2:31", "holds 2 values, found 1");
  check("subgraph @f() {\n  %0 = neg(Tensor[Float99](2)[1.0])\n  return(%0)\n}\n", "2:19", "unknown dtype");
  check("subgraph @f() {\n  %0 = make_tuple[x=1](2)\n  return(%0)\n}\n", "2:18", "takes no attributes");
  check("subgraph @f() {\n  %0 = add(@g.%0, 1)\n  return(%0)\n}\nsubgraph @g() {\n  %0 = neg(1)\n  return(%0)\n}\n",
        "2:12", "refers to a graph defined later");
  check("subgraph @f() parent=@zz {\n  return(1)\n}\n", "1:23", "unknown graph '@zz'");
  check("# In file a.msl:3\n", "1:1", "must follow a node line");
  check("subgraph @f() {\n  %0 = neg(1)\n      # In file nowhere\n  return(%0)\n}\n", "3:7", "expected a location");
  check("hello\n", "1:1", "expected 'subgraph");
  check("subgraph @f() {\n  %0 = neg(99999999999999999999)\n  return(%0)\n}\n", "2:12", "out of range");
  // The diagnostic shows the line and a caret.
  std::string e = parse_error("subgraph @f() {\n  return(%9)\n}\n");
  CHECK(e.find("return(%9)") != std::string::npos);
  CHECK(e.find('^') != std::string::npos);
}

TEST_CASE("garbled and truncated IR never crashes the parser") {
  IrModule src;
  build_everything(src);
  const std::string text = print_module(src);
  int parsed = 0, failed = 0;
  // Every prefix (truncation at every byte).
  for (size_t n = 0; n <= text.size(); ++n) {
    IrModule m;
    IrParseResult r = parse_ir(text.substr(0, n), m);
    (r.ok() ? parsed : failed)++;
  }
  CHECK(failed > 0);
  CHECK(parsed > 0);  // the empty text and the complete text at least
  // Deterministic pseudo-random byte edits: replace, delete, duplicate.
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const std::string alphabet = "%@()[]{},.:=\"\\#-0123456789eTxN \n";
  for (int iter = 0; iter < 3000; ++iter) {
    std::string t = text;
    int edits = 1 + static_cast<int>(next() % 4);
    for (int k = 0; k < edits && !t.empty(); ++k) {
      size_t pos = next() % t.size();
      switch (next() % 3) {
        case 0: t[pos] = alphabet[next() % alphabet.size()]; break;
        case 1: t.erase(pos, 1 + next() % 8); break;
        default: t.insert(pos, t.substr(pos, 1 + next() % 8)); break;
      }
    }
    IrModule m;
    IrParseResult r = parse_ir(t, m);
    if (r.ok()) {
      // Whatever parsed must print and parse again to the same text.
      std::string p = print_module(m);
      IrModule m2;
      IrParseResult r2 = parse_ir(p, m2);
      CHECK_MESSAGE(r2.ok(), r2.error);
      if (r2.ok()) CHECK(print_module(m2) == p);
    } else {
      CHECK(r.error.find(": error: ") != std::string::npos);
    }
  }
}

TEST_CASE("the example of printer.h parses, verifies and prints back unchanged") {
  const std::string text =
      "# IR of: f (file.msl:3:1)\n"
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0(z) = mul(%para1_x, %para2_y)\n"
      "      # In file file.msl:4:5\n"
      "  %1 = reduce_sum[axes=(0,), keep_dims=False](%0)\n"
      "  %2 = partial(@g, %1)\n"
      "  %3 = %2(1.0)\n"
      "  return(%3)\n"
      "}\n"
      "\n"
      "# IR of: g\n"
      "subgraph @g(%para1_a, %para2_b) parent=@f flags[is_bprop=True] {\n"
      "  %0 = add(%para1_a, @f.%0)\n"
      "  return(%0)\n"
      "}\n";
  CHECK(reprint(text) == text);
  IrModule m;
  IrParseResult r = parse_ir(text, m);
  REQUIRE(r.ok());
  FuncGraph* g = r.graphs[1];
  CHECK(g->parent() == r.graphs[0]);
  CHECK(g->flags().get_bool("is_bprop"));
  REQUIRE(free_variables(*g).size() == 1);
  CHECK(free_variables(*g)[0]->name() == "z");
}
