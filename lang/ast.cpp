// Deleting AST nodes by kind, and Constant's string (lang/ast.h).
#include "lang/ast.h"

namespace msl::ast {

void ExprDeleter::operator()(Expr* e) const {
  if (e == nullptr) return;
  switch (e->kind) {
    case ExprKind::Name: delete static_cast<Name*>(e); return;
    case ExprKind::Constant: delete static_cast<Constant*>(e); return;
    case ExprKind::FString: delete static_cast<FString*>(e); return;
    case ExprKind::Tuple: delete static_cast<Tuple*>(e); return;
    case ExprKind::List: delete static_cast<List*>(e); return;
    case ExprKind::Dict: delete static_cast<Dict*>(e); return;
    case ExprKind::Set: delete static_cast<Set*>(e); return;
    case ExprKind::ListComp: delete static_cast<ListComp*>(e); return;
    case ExprKind::SetComp: delete static_cast<SetComp*>(e); return;
    case ExprKind::DictComp: delete static_cast<DictComp*>(e); return;
    case ExprKind::GeneratorExp: delete static_cast<GeneratorExp*>(e); return;
    case ExprKind::Attribute: delete static_cast<Attribute*>(e); return;
    case ExprKind::Subscript: delete static_cast<Subscript*>(e); return;
    case ExprKind::Slice: delete static_cast<Slice*>(e); return;
    case ExprKind::Call: delete static_cast<Call*>(e); return;
    case ExprKind::Unary: delete static_cast<Unary*>(e); return;
    case ExprKind::Binary: delete static_cast<Binary*>(e); return;
    case ExprKind::BoolOp: delete static_cast<BoolOp*>(e); return;
    case ExprKind::Compare: delete static_cast<Compare*>(e); return;
    case ExprKind::IfExp: delete static_cast<IfExp*>(e); return;
    case ExprKind::Lambda: delete static_cast<Lambda*>(e); return;
    case ExprKind::Starred: delete static_cast<Starred*>(e); return;
  }
}

void StmtDeleter::operator()(Stmt* s) const {
  if (s == nullptr) return;
  switch (s->kind) {
    case StmtKind::Expr: delete static_cast<ExprStmt*>(s); return;
    case StmtKind::Assign: delete static_cast<Assign*>(s); return;
    case StmtKind::AugAssign: delete static_cast<AugAssign*>(s); return;
    case StmtKind::AnnAssign: delete static_cast<AnnAssign*>(s); return;
    case StmtKind::Pass: delete static_cast<Pass*>(s); return;
    case StmtKind::Break: delete static_cast<Break*>(s); return;
    case StmtKind::Continue: delete static_cast<Continue*>(s); return;
    case StmtKind::Del: delete static_cast<Del*>(s); return;
    case StmtKind::Return: delete static_cast<Return*>(s); return;
    case StmtKind::Raise: delete static_cast<Raise*>(s); return;
    case StmtKind::Assert: delete static_cast<Assert*>(s); return;
    case StmtKind::Global: delete static_cast<Global*>(s); return;
    case StmtKind::Nonlocal: delete static_cast<Nonlocal*>(s); return;
    case StmtKind::If: delete static_cast<If*>(s); return;
    case StmtKind::While: delete static_cast<While*>(s); return;
    case StmtKind::For: delete static_cast<For*>(s); return;
    case StmtKind::Try: delete static_cast<Try*>(s); return;
    case StmtKind::FunctionDef: delete static_cast<FunctionDef*>(s); return;
    case StmtKind::ClassDef: delete static_cast<ClassDef*>(s); return;
    case StmtKind::Import: delete static_cast<Import*>(s); return;
    case StmtKind::ImportFrom: delete static_cast<ImportFrom*>(s); return;
  }
}

const std::string& Constant::str_value() const {
  static const std::string empty;
  return str_ ? *str_ : empty;
}

std::string& Constant::set_str_value() {
  if (!str_) str_ = std::make_unique<std::string>();
  return *str_;
}

}  // namespace msl::ast
