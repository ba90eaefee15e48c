// The abstract syntax tree.
//
// The parser (lang/parser.cpp, from the ANTLR grammar lang/MSL.g4) produces
// this tree; everything downstream consumes it: the host interpreter compiles
// it into executable nodes (interp/core/compile.cpp), and graph mode lowers it to
// ANF IR. The tree is plain data: no runtime values, no resolution results.
// Nodes are told apart by a `kind` tag (LLVM-style), so consumers switch on
// the tag and static_cast; `as<T>()` checks the tag in debug builds.
//
// Nodes have no virtual functions (a vtable pointer would be 8 more bytes in
// every node of a multi-megabyte script): ExprPtr and StmtPtr delete a node
// through a deleter that switches on the kind (lang/ast.cpp), and a
// std::unique_ptr<Name> (from make_node) converts to them as usual.
//
// Every node carries the Span of the source text it came from. For an
// expression, the span covers the whole expression (a call's span runs from
// the callee to the closing parenthesis), which is what a traceback caret
// underlines.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lang/source.h"

namespace msl::ast {

// ---------------------------------------------------------------- expressions

enum class ExprKind : uint8_t {
  Name,         // x
  Constant,     // None True False 1 2.5 "s" ...
  FString,      // f"a{b!r:>{w}}"
  Tuple,        // a, b   (a,)   ()
  List,         // [a, b]
  Dict,         // {k: v, **m}
  Set,          // {a, b}
  ListComp,     // [e for x in xs if c]
  SetComp,      // {e for x in xs}
  DictComp,     // {k: v for x in xs}
  GeneratorExp, // (e for x in xs): evaluated eagerly into a list-like sequence
  Attribute,    // obj.name
  Subscript,    // obj[index]
  Slice,        // lower:upper:step, only directly inside a Subscript index
  Call,         // f(a, *b, k=c, **d)
  Unary,        // -x +x ~x not x
  Binary,       // x + y ...
  BoolOp,       // x and y, x or y (n-ary)
  Compare,      // a < b <= c (chained)
  IfExp,        // a if c else b
  Lambda,       // lambda x: e
  Starred,      // *x, in calls are Arg::Star; this is for displays and targets
};

enum class ConstKind : uint8_t { None, True, False, Int, Float, Str, Ellipsis };

enum class BinOp : uint8_t { Add, Sub, Mul, MatMul, Div, FloorDiv, Mod, Pow, LShift, RShift, BitOr, BitXor, BitAnd };
enum class UnaryOp : uint8_t { Neg, Pos, Invert, Not };
enum class CmpOp : uint8_t { Lt, Le, Gt, Ge, Eq, Ne, In, NotIn, Is, IsNot };
enum class BoolOpKind : uint8_t { And, Or };

// Source spelling, for printers and messages: "+", "//", "not in", ...
const char* to_string(BinOp op);
const char* to_string(UnaryOp op);
const char* to_string(CmpOp op);
const char* to_string(BoolOpKind op);

struct Expr;
struct Stmt;

// Deletes an Expr/Stmt of any kind. Constructible from std::default_delete<T>,
// so that std::unique_ptr<T> of a node type converts to ExprPtr/StmtPtr.
struct ExprDeleter {
  ExprDeleter() = default;
  template <class T>
  ExprDeleter(const std::default_delete<T>&) {}
  void operator()(Expr* e) const;
};
struct StmtDeleter {
  StmtDeleter() = default;
  template <class T>
  StmtDeleter(const std::default_delete<T>&) {}
  void operator()(Stmt* s) const;
};

struct Expr {
  ExprKind kind;
  Span span;
  explicit Expr(ExprKind k) : kind(k) {}
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;
  template <class T>
  T* as() {
    assert(kind == T::kKind);
    return static_cast<T*>(this);
  }
  template <class T>
  const T* as() const {
    assert(kind == T::kKind);
    return static_cast<const T*>(this);
  }

 protected:
  ~Expr() = default;  // only through ExprDeleter, or as the exact node type
};
using ExprPtr = std::unique_ptr<Expr, ExprDeleter>;

template <ExprKind K>
struct ExprOf : Expr {
  static constexpr ExprKind kKind = K;
  ExprOf() : Expr(K) {}
};

struct Name : ExprOf<ExprKind::Name> {
  std::string id;
};

// 40 bytes: a literal list of a million numbers is a million of these.
struct Constant : ExprOf<ExprKind::Constant> {
  ConstKind value_kind = ConstKind::None;
  union {
    int64_t int_value = 0;  // when value_kind is Int
    double float_value;     // when value_kind is Float
  };
  // When value_kind is Str: decoded (escapes processed), UTF-8; adjacent
  // literals joined.
  const std::string& str_value() const;
  std::string& set_str_value();

 private:
  std::unique_ptr<std::string> str_;
};

// One piece of an f-string: literal text, or a replacement field.
struct FStringPart {
  bool is_field = false;
  std::string literal;  // when !is_field; escapes and {{ }} already decoded
  ExprPtr expr;         // when is_field
  char conversion = 0;  // 0, 'r', 's' or 'a'
  // The format spec after ':', itself made of literal text and nested fields
  // (f"{x:>{width}}"); empty when there is no spec.
  std::vector<FStringPart> spec;
  std::string expr_text;  // the source text of expr, for `f"{x=}"`-style debugging and printers
};

// Adjacent string literals containing at least one f-string become one FString.
struct FString : ExprOf<ExprKind::FString> {
  std::vector<FStringPart> parts;
};

struct Tuple : ExprOf<ExprKind::Tuple> {
  std::vector<ExprPtr> elts;  // may contain Starred
};

struct List : ExprOf<ExprKind::List> {
  std::vector<ExprPtr> elts;  // may contain Starred
};

struct Dict : ExprOf<ExprKind::Dict> {
  // keys[i] == nullptr means values[i] is a `**mapping` to merge.
  std::vector<ExprPtr> keys;
  std::vector<ExprPtr> values;
};

struct Set : ExprOf<ExprKind::Set> {
  std::vector<ExprPtr> elts;  // may contain Starred
};

// `for target in iter if cond1 if cond2`
struct Comprehension {
  ExprPtr target;  // a Name, Tuple or List of targets
  ExprPtr iter;
  std::vector<ExprPtr> ifs;
};

struct ListComp : ExprOf<ExprKind::ListComp> {
  ExprPtr elt;
  std::vector<Comprehension> generators;  // outermost first
};

struct SetComp : ExprOf<ExprKind::SetComp> {
  ExprPtr elt;
  std::vector<Comprehension> generators;
};

struct DictComp : ExprOf<ExprKind::DictComp> {
  ExprPtr key;
  ExprPtr value;
  std::vector<Comprehension> generators;
};

struct GeneratorExp : ExprOf<ExprKind::GeneratorExp> {
  ExprPtr elt;
  std::vector<Comprehension> generators;
};

struct Attribute : ExprOf<ExprKind::Attribute> {
  ExprPtr value;
  std::string attr;
  Span attr_span;  // span of the name after the dot
};

// obj[index]: `index` is a single expression, a Slice, or a Tuple whose
// elements may be Slices, Constant(Ellipsis) and `None` constants
// (x[:, 0:2, ::-1], x[..., None]).
struct Subscript : ExprOf<ExprKind::Subscript> {
  ExprPtr value;
  ExprPtr index;
};

struct Slice : ExprOf<ExprKind::Slice> {
  ExprPtr lower, upper, step;  // each may be null
};

struct Arg {
  enum class Kind : uint8_t { Positional, Keyword, Star, DoubleStar };
  Kind kind = Kind::Positional;
  std::string name;  // for Keyword
  ExprPtr value;
  Span span;
};

struct Call : ExprOf<ExprKind::Call> {
  ExprPtr func;
  std::vector<Arg> args;  // in source order
};

struct Unary : ExprOf<ExprKind::Unary> {
  UnaryOp op;
  ExprPtr operand;
};

struct Binary : ExprOf<ExprKind::Binary> {
  BinOp op;
  ExprPtr left, right;
  Span op_span;  // the operator token
};

struct BoolOp : ExprOf<ExprKind::BoolOp> {
  BoolOpKind op;
  std::vector<ExprPtr> values;  // at least 2
};

struct Compare : ExprOf<ExprKind::Compare> {
  ExprPtr left;
  std::vector<CmpOp> ops;
  std::vector<ExprPtr> comparators;  // same length as ops
};

struct IfExp : ExprOf<ExprKind::IfExp> {
  ExprPtr test, body, orelse;
};

struct Param {
  std::string name;
  ExprPtr default_value;  // may be null
  ExprPtr annotation;     // may be null; parsed and kept, never evaluated
  Span span;
};

// def f(a, b=1, *args, c, d=2, **kwargs)
struct Parameters {
  std::vector<Param> positional;  // a, b
  std::unique_ptr<Param> vararg;  // *args (null if absent)
  std::vector<Param> kwonly;      // c, d: after *args or a bare *
  std::unique_ptr<Param> kwarg;   // **kwargs (null if absent)
};

struct Lambda : ExprOf<ExprKind::Lambda> {
  Parameters params;
  ExprPtr body;
};

struct Starred : ExprOf<ExprKind::Starred> {
  ExprPtr value;
};

// ----------------------------------------------------------------- statements

enum class StmtKind : uint8_t {
  Expr, Assign, AugAssign, AnnAssign, Pass, Del, Return, Raise, Break, Continue, Assert,
  Global, Nonlocal, If, While, For, Try, FunctionDef, ClassDef, Import, ImportFrom,
};

struct Stmt {
  StmtKind kind;
  Span span;  // for compound statements: the header line(s) up to the ':'
  explicit Stmt(StmtKind k) : kind(k) {}
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  template <class T>
  T* as() {
    assert(kind == T::kKind);
    return static_cast<T*>(this);
  }
  template <class T>
  const T* as() const {
    assert(kind == T::kKind);
    return static_cast<const T*>(this);
  }

 protected:
  ~Stmt() = default;  // only through StmtDeleter, or as the exact node type
};
using StmtPtr = std::unique_ptr<Stmt, StmtDeleter>;
using Body = std::vector<StmtPtr>;

template <StmtKind K>
struct StmtOf : Stmt {
  static constexpr StmtKind kKind = K;
  StmtOf() : Stmt(K) {}
};

struct ExprStmt : StmtOf<StmtKind::Expr> {
  ExprPtr value;
};

// a = b = value; each target is a Name, Attribute, Subscript, or a
// Tuple/List of targets (possibly with one Starred).
struct Assign : StmtOf<StmtKind::Assign> {
  std::vector<ExprPtr> targets;
  ExprPtr value;
};

struct AugAssign : StmtOf<StmtKind::AugAssign> {
  ExprPtr target;  // Name, Attribute or Subscript
  BinOp op;
  ExprPtr value;
};

// x: T = value (value may be null). The annotation is kept, not evaluated.
struct AnnAssign : StmtOf<StmtKind::AnnAssign> {
  ExprPtr target;
  ExprPtr annotation;
  ExprPtr value;
};

struct Pass : StmtOf<StmtKind::Pass> {};
struct Break : StmtOf<StmtKind::Break> {};
struct Continue : StmtOf<StmtKind::Continue> {};

struct Del : StmtOf<StmtKind::Del> {
  std::vector<ExprPtr> targets;
};

struct Return : StmtOf<StmtKind::Return> {
  ExprPtr value;  // may be null
};

struct Raise : StmtOf<StmtKind::Raise> {
  ExprPtr exc;    // may be null (bare re-raise)
  ExprPtr cause;  // `raise X from Y`; may be null
};

struct Assert : StmtOf<StmtKind::Assert> {
  ExprPtr test;
  ExprPtr msg;  // may be null
};

struct Global : StmtOf<StmtKind::Global> {
  std::vector<std::string> names;
};

struct Nonlocal : StmtOf<StmtKind::Nonlocal> {
  std::vector<std::string> names;
};

// elif chains become nested If statements in orelse.
struct If : StmtOf<StmtKind::If> {
  ExprPtr test;
  Body body;
  Body orelse;
};

struct While : StmtOf<StmtKind::While> {
  ExprPtr test;
  Body body;
  Body orelse;
};

struct For : StmtOf<StmtKind::For> {
  ExprPtr target;
  ExprPtr iter;
  Body body;
  Body orelse;
};

struct ExceptHandler {
  ExprPtr type;      // may be null (bare except); may be a Tuple of types
  std::string name;  // `as name`; empty if absent
  Body body;
  Span span;  // the `except ...:` header
};

struct Try : StmtOf<StmtKind::Try> {
  Body body;
  std::vector<ExceptHandler> handlers;
  Body orelse;
  Body finalbody;
};

struct FunctionDef : StmtOf<StmtKind::FunctionDef> {
  std::string name;
  Parameters params;
  Body body;
  std::vector<ExprPtr> decorators;  // outermost first, as written top to bottom
  ExprPtr returns;                  // `-> T`; kept, never evaluated; may be null
  Span name_span;
};

struct ClassDef : StmtOf<StmtKind::ClassDef> {
  std::string name;
  ExprPtr base;  // may be null; at most one base (a SyntaxError otherwise)
  Body body;
  std::vector<ExprPtr> decorators;
  Span name_span;
};

struct ImportAlias {
  std::string name;    // dotted module path for Import ("a.b.c"); a plain name for ImportFrom
  std::string asname;  // empty if absent
  Span span;
};

// import a.b as c, d
struct Import : StmtOf<StmtKind::Import> {
  std::vector<ImportAlias> names;
};

// from a.b import x, y as z   (from a import *: one alias with name "*")
struct ImportFrom : StmtOf<StmtKind::ImportFrom> {
  std::string module;  // dotted
  std::vector<ImportAlias> names;
};

// --------------------------------------------------------------------- module

struct Module {
  SourcePtr source;
  Body body;
};

// The text printed by `msl --emit=ast`: an indented tree, one node per line,
// with its line:col. Stable: tests compare against it.
std::string dump(const Module& m);
std::string dump(const Expr& e);

}  // namespace msl::ast
