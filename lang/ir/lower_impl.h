// Internal to the lowering (lower.h): the per-function state shared by the
// statement half (lower.cpp: bodies, control flow, nested graphs) and the
// expression half (lower_expr.cpp: operators, calls, name resolution).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "lang/ir/lower.h"

namespace msl::ir::lower_detail {

// Thrown at the first error; caught in Lowerer::lower.
struct LowerError {
  Diagnostic diag;
};

// One lexical scope: the bindings made in one graph. Lookups walk outwards,
// so a binding of an enclosing graph becomes a free variable.
struct Env {
  Env* parent = nullptr;
  std::map<std::string, Node*> vars;
  Node* lookup(const std::string& name) const {
    for (const Env* e = this; e; e = e->parent) {
      auto it = e->vars.find(name);
      if (it != e->vars.end()) return it->second;
    }
    return nullptr;
  }
};

using Stmts = std::vector<const ast::Stmt*>;

class FnLowerer {
 public:
  FnLowerer(IrModule& m, const SourcePtr& src, const Resolver& resolve,
            std::unordered_map<const ast::FunctionDef*, FuncGraph*>& done)
      : m_(m), src_(src), resolve_(resolve), done_(done) {}

  // Fills `g` (already created) from `def`, with `env` as the scope of g.
  void lower_def_into(FuncGraph* g, const ast::FunctionDef& def, Env& env);
  FuncGraph* top_level(const ast::FunctionDef& def);

  // --- expressions (lower_expr.cpp)
  Node* expr(const ast::Expr& e, FuncGraph* g, Env& env, const std::string& name = "");
  // x op y as a kernel primitive application (an error for `<<`, `|`, ...).
  Node* binop(ast::BinOp op, Node* x, Node* y, const Span& op_span, const Span& span, FuncGraph* g,
              const std::string& name);
  Node* constant(ConstValue v, const Span& s) { return m_.new_constant(std::move(v), nullptr, loc(s)); }
  Loc loc(const Span& s) { return s.valid() ? m_.loc(src_->name(), s.line, s.col) : Loc{}; }
  [[noreturn]] void fail(const Span& s, const std::string& msg, const std::string& help = "") const;
  [[noreturn]] void unsupported(const Span& s, const std::string& what) const;

 private:
  // --- statements (lower.cpp). Return true when the statements returned.
  bool stmts(const Stmts& ss, FuncGraph* g, Env& env);
  void assign(const ast::Expr& target, Node* value, FuncGraph* g, Env& env);
  bool if_stmt(const ast::If& s, const Stmts& rest, FuncGraph* g, Env& env);
  void while_stmt(const ast::Stmt& s, FuncGraph* g, Env& env);
  FuncGraph* nested_def(const ast::FunctionDef& def, FuncGraph* g, Env& env);

  // --- expressions (lower_expr.cpp)
  Node* call(const ast::Call& c, FuncGraph* g, Env& env, const std::string& name);
  Node* lambda(const ast::Lambda& l, FuncGraph* g, Env& env);
  Node* if_exp(const ast::IfExp& e, FuncGraph* g, Env& env, const std::string& name);
  Node* resolve_global(const std::string& dotted, const Span& s);
  bool dotted_name(const ast::Expr& e, const Env& env, std::string& out) const;
  kernels::AttrValue attr_value(const ast::Expr& e, const std::string& kind) const;

 private:
  IrModule& m_;
  const SourcePtr& src_;
  const Resolver& resolve_;
  std::unordered_map<const ast::FunctionDef*, FuncGraph*>& done_;
};

// Names bound by the statements (assignment targets, loop targets, nested
// defs), not descending into nested function bodies; sorted.
std::set<std::string> assigned_names(const ast::Body& body);
bool contains_return(const ast::Body& body);

}  // namespace msl::ir::lower_detail
