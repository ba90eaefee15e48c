// Spans: every node's (line, col, end_line, end_col), end exclusive, columns in
// code points. These are what tracebacks underline.
#include <doctest/doctest.h>

#include "lang_test_util.h"

using namespace msl;
using namespace msl::ast;

namespace {

std::string str(const Span& s) {
  return std::to_string(s.line) + ":" + std::to_string(s.col) + "-" + std::to_string(s.end_line) + ":" +
         std::to_string(s.end_col);
}

std::unique_ptr<Module> parse(const std::string& text) {
  ParseResult r = parse_module(test::source(text));
  REQUIRE_MESSAGE(r.errors.empty(), test::describe(r.errors));
  return std::move(r.module);
}

const Expr& value_of(const Stmt& s) {
  if (s.kind == StmtKind::Assign) return *s.as<Assign>()->value;
  return *s.as<ExprStmt>()->value;
}

}  // namespace

TEST_CASE("spans: expressions") {
  auto m = parse("y = obj.method(a, key=b + 1)\n");
  const auto* call = value_of(*m->body[0]).as<Call>();
  CHECK(str(m->body[0]->span) == "1:1-1:29");
  CHECK(str(call->span) == "1:5-1:29");  // callee to ')'
  const auto* attr = call->func->as<Attribute>();
  CHECK(str(attr->span) == "1:5-1:15");
  CHECK(str(attr->attr_span) == "1:9-1:15");
  REQUIRE(call->args.size() == 2);
  CHECK(str(call->args[0].span) == "1:16-1:17");
  CHECK(str(call->args[1].span) == "1:19-1:28");  // key=b + 1
  const auto* bin = call->args[1].value->as<Binary>();
  CHECK(str(bin->span) == "1:23-1:28");
  CHECK(str(bin->op_span) == "1:25-1:26");

  m = parse("z = x[1:2, ::3]\n");
  const auto* sub = value_of(*m->body[0]).as<Subscript>();
  CHECK(str(sub->span) == "1:5-1:16");
  CHECK(str(sub->index->span) == "1:7-1:15");
  CHECK(str(sub->index->as<Tuple>()->elts[0]->span) == "1:7-1:10");
  CHECK(str(sub->index->as<Tuple>()->elts[1]->span) == "1:12-1:15");

  m = parse("w = -a ** 2 if not c else [d, *e]\n");
  const auto* ifexp = value_of(*m->body[0]).as<IfExp>();
  CHECK(str(ifexp->span) == "1:5-1:34");
  CHECK(str(ifexp->body->span) == "1:5-1:12");
  CHECK(str(ifexp->test->span) == "1:16-1:21");
  CHECK(str(ifexp->orelse->span) == "1:27-1:34");
  CHECK(str(ifexp->orelse->as<List>()->elts[1]->span) == "1:31-1:33");

  m = parse("v = (a,\n     b)\n");
  CHECK(str(value_of(*m->body[0]).span) == "1:5-2:8");
}

TEST_CASE("spans: code points, not bytes") {
  auto m = parse("名字 = f'é{数据}' + 'ü'\n");
  const auto* bin = value_of(*m->body[0]).as<Binary>();
  CHECK(str(m->body[0]->as<Assign>()->targets[0]->span) == "1:1-1:3");
  CHECK(str(bin->span) == "1:6-1:20");
  const auto* fs = bin->left->as<FString>();
  REQUIRE(fs->parts.size() == 2);
  CHECK(str(fs->parts[1].expr->span) == "1:10-1:12");
  CHECK(fs->parts[1].expr_text == "数据");
  CHECK(str(bin->right->span) == "1:17-1:20");
}

TEST_CASE("spans: multi-line strings") {
  auto m = parse("s = '''a\nbc''' 'd'\n");
  CHECK(str(value_of(*m->body[0]).span) == "1:5-2:10");
}

TEST_CASE("spans: statements") {
  auto m = parse(
      "@dec\n"
      "def f(a, b: int = 2, *c, d, **e) -> int:\n"
      "    if a > 1:\n"
      "        return a\n"
      "    elif b:\n"
      "        pass\n"
      "    try:\n"
      "        pass\n"
      "    except (E, F) as err:\n"
      "        raise\n"
      "    for i in range(3):\n"
      "        continue\n"
      "class C(B):\n"
      "    pass\n"
      "import a.b as c, d\n"
      "from x.y import z as w\n");
  const auto* f = m->body[0]->as<FunctionDef>();
  CHECK(str(f->span) == "2:1-2:41");  // the header, 'def' to ':'
  CHECK(str(f->name_span) == "2:5-2:6");
  CHECK(str(f->decorators[0]->span) == "1:2-1:5");
  REQUIRE(f->params.positional.size() == 2);
  CHECK(str(f->params.positional[0].span) == "2:7-2:8");
  CHECK(str(f->params.positional[1].span) == "2:10-2:16");  // b: int
  CHECK(str(f->params.vararg->span) == "2:23-2:24");
  CHECK(str(f->params.kwonly[0].span) == "2:26-2:27");
  CHECK(str(f->params.kwarg->span) == "2:31-2:32");
  CHECK(str(f->returns->span) == "2:37-2:40");
  const auto* i = f->body[0]->as<If>();
  CHECK(str(i->span) == "3:5-3:14");
  CHECK(str(i->body[0]->span) == "4:9-4:17");
  CHECK(str(i->orelse[0]->span) == "5:5-5:12");  // the elif header
  const auto* t = f->body[1]->as<Try>();
  CHECK(str(t->span) == "7:5-7:9");
  CHECK(str(t->handlers[0].span) == "9:5-9:26");
  CHECK(t->handlers[0].name == "err");
  CHECK(str(f->body[2]->span) == "11:5-11:23");
  const auto* c = m->body[1]->as<ClassDef>();
  CHECK(str(c->span) == "13:1-13:12");
  CHECK(str(c->name_span) == "13:7-13:8");
  const auto* imp = m->body[2]->as<Import>();
  CHECK(str(imp->span) == "15:1-15:19");
  CHECK(str(imp->names[0].span) == "15:8-15:16");
  CHECK(str(imp->names[1].span) == "15:18-15:19");
  const auto* from = m->body[3]->as<ImportFrom>();
  CHECK(str(from->names[0].span) == "16:17-16:23");
}

TEST_CASE("spans: diagnostics underline the span") {
  auto r = parse_module(test::source("x = 1\ny = f(a) = 2\n"));
  REQUIRE(r.errors.size() == 1);
  CHECK(str(r.errors[0].span) == "2:5-2:9");
  CHECK(format_diagnostic(r.errors[0]) ==
        "test.msl:2:5: error: Cannot assign to function call.\n"
        "    y = f(a) = 2\n"
        "        ^^^^\n");
}
