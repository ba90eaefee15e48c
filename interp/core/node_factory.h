// Constructors of executable nodes, used by the compiler (interp/core/compile.cpp).
// The node classes themselves are private to nodes_expr.cpp / nodes_stmt.cpp.
#pragma once

#include "interp/core/nodes.h"

namespace msl::nodes {

// ---- expressions (all of these carry the span set by the compiler)
ExprNodePtr constant(Value v);
// Variable access; each also works as an assignment/deletion target.
ExprNodePtr local(uint32_t slot, Ref<Str> name);
ExprNodePtr local_cell(uint32_t slot, Ref<Str> name);
ExprNodePtr free_var(uint32_t index, Ref<Str> name);
ExprNodePtr global(GlobalSlot* slot, GlobalSlot* builtin);
// A name in a class body: the class namespace first, then `fallback` (a global or free variable).
ExprNodePtr class_name(Ref<Str> name, ExprNodePtr fallback);

ExprNodePtr tuple(std::vector<ExprNodePtr> elts);
ExprNodePtr list(std::vector<ExprNodePtr> elts);
// A list (or tuple) display of constant elements: a new container of `items`
// on each evaluation.
ExprNodePtr const_display(bool is_list, std::vector<Value> items);
ExprNodePtr set(std::vector<ExprNodePtr> elts);
ExprNodePtr dict(std::vector<ExprNodePtr> keys, std::vector<ExprNodePtr> values);  // null key: **m
ExprNodePtr starred(ExprNodePtr value);

struct CompClause {
  ExprNodePtr target;
  ExprNodePtr iter;
  std::vector<ExprNodePtr> ifs;
};
enum class CompKind { List, Set, Dict, Generator };
ExprNodePtr comprehension(CompKind kind, ExprNodePtr elt, ExprNodePtr value, std::vector<CompClause> clauses);

ExprNodePtr attribute(ExprNodePtr obj, Ref<Str> name);
ExprNodePtr subscript(ExprNodePtr obj, ExprNodePtr index);
ExprNodePtr slice(ExprNodePtr lo, ExprNodePtr hi, ExprNodePtr step);

struct CallArg {
  ast::Arg::Kind kind;
  Ref<Str> name;
  ExprNodePtr value;
};
ExprNodePtr call(ExprNodePtr func, std::vector<CallArg> args);
ExprNodePtr call_method(ExprNodePtr obj, Ref<Str> name, std::vector<CallArg> args);
// Zero-argument super(): the enclosing class (from the __class__ cell) and the first argument.
ExprNodePtr super0(ExprNodePtr class_cell, ExprNodePtr first_arg);

ExprNodePtr unary(ast::UnaryOp op, ExprNodePtr x);
ExprNodePtr binary(ast::BinOp op, ExprNodePtr l, ExprNodePtr r);
ExprNodePtr boolop(ast::BoolOpKind op, std::vector<ExprNodePtr> values);
ExprNodePtr compare(ExprNodePtr left, std::vector<ast::CmpOp> ops, std::vector<ExprNodePtr> comparators);
ExprNodePtr ifexp(ExprNodePtr test, ExprNodePtr body, ExprNodePtr orelse);

// Where a new closure gets each free variable from, in the defining frame.
struct ClosureSource {
  bool from_free;  // true: the defining function's own closure[index]; false: a cell in slot `index`
  uint32_t index;
};
ExprNodePtr make_function(std::shared_ptr<FuncCode> code, std::vector<ExprNodePtr> defaults,
                          std::vector<ExprNodePtr> kwdefaults, std::vector<ClosureSource> closure);
// Creates a class: evaluates `base`, runs the body code with the class as namespace,
// fills the __class__ cell (slot `class_cell`, or -1) for zero-argument super().
ExprNodePtr make_class(Ref<Str> name, ExprNodePtr base, std::shared_ptr<FuncCode> body,
                       std::vector<ClosureSource> closure, int class_cell);

struct FPart {
  std::string literal;
  ExprNodePtr expr;  // null for literal parts
  char conversion = 0;
  std::vector<FPart> spec;
};
ExprNodePtr fstring(std::vector<FPart> parts);

// `import a.b.c`: imports each prefix; the value is the top package `a`, or
// `a.b.c` itself when `want_leaf` (for `import a.b.c as d`).
ExprNodePtr import_module(std::string dotted, bool want_leaf);

// ---- statements
StmtNodePtr expr_stmt(ExprNodePtr e);
// An evaluated expression's final statement: its value becomes the result of the module body.
StmtNodePtr result_stmt(ExprNodePtr e);
// A REPL expression statement: shows the value (Interp::display).
StmtNodePtr display_stmt(ExprNodePtr e);
StmtNodePtr assign(std::vector<ExprNodePtr> targets, ExprNodePtr value);
StmtNodePtr aug_assign(ExprNodePtr target, ast::BinOp op, ExprNodePtr value);
StmtNodePtr del(std::vector<ExprNodePtr> targets);
StmtNodePtr pass();
StmtNodePtr ret(ExprNodePtr value);  // value may be null
StmtNodePtr raise(ExprNodePtr exc, ExprNodePtr cause);
StmtNodePtr brk();
StmtNodePtr cont();
StmtNodePtr assert_(ExprNodePtr test, ExprNodePtr msg);
StmtNodePtr block(std::vector<StmtNodePtr> body);
StmtNodePtr if_(ExprNodePtr test, StmtNodePtr body, StmtNodePtr orelse);
StmtNodePtr while_(ExprNodePtr test, StmtNodePtr body, StmtNodePtr orelse);
StmtNodePtr for_(ExprNodePtr target, ExprNodePtr iter, StmtNodePtr body, StmtNodePtr orelse);
struct Handler {
  ExprNodePtr type;    // null: bare except
  ExprNodePtr target;  // null: no `as`
  StmtNodePtr body;
  Span span;
};
StmtNodePtr try_(StmtNodePtr body, std::vector<Handler> handlers, StmtNodePtr orelse, StmtNodePtr finalbody);
// from module import name as target ... ("*" imports every public name into `star_module`).
struct ImportName {
  Ref<Str> name;
  ExprNodePtr target;
  Span span;
};
StmtNodePtr import_from(std::string module, std::vector<ImportName> names, Module* star_module);

}  // namespace msl::nodes
