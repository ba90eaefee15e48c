// The kernel primitive each operator of the language stands for on
// tensors: one table for graph mode's lowering (lang/ir) and for eager
// tensor operators (interp/tensor/tensor_ops.cpp).
#pragma once

#include "kernels/primitives.h"
#include "lang/ast.h"

namespace msl {

// The primitive of binary operator `op` (+ add, @ matmul, ...). `&`, `|`
// and `^` are logical_and, logical_or and not_equal, which is what they
// mean on bool tensors only (`bitwise` is set for them, so a caller that
// may see integers can refuse them); false for the shifts.
inline bool binary_op_prim(ast::BinOp op, kernels::Prim& p, bool* bitwise = nullptr) {
  using ast::BinOp;
  using kernels::Prim;
  if (bitwise) *bitwise = op == BinOp::BitAnd || op == BinOp::BitOr || op == BinOp::BitXor;
  switch (op) {
    case BinOp::Add: p = Prim::add; return true;
    case BinOp::Sub: p = Prim::sub; return true;
    case BinOp::Mul: p = Prim::mul; return true;
    case BinOp::Div: p = Prim::div; return true;
    case BinOp::FloorDiv: p = Prim::floordiv; return true;
    case BinOp::Mod: p = Prim::mod; return true;
    case BinOp::Pow: p = Prim::pow; return true;
    case BinOp::MatMul: p = Prim::matmul; return true;
    case BinOp::BitAnd: p = Prim::logical_and; return true;
    case BinOp::BitOr: p = Prim::logical_or; return true;
    case BinOp::BitXor: p = Prim::not_equal; return true;  // xor of bools
    default: return false;
  }
}

// The primitive of comparison `op`; false for `is`, `in` and their negations.
inline bool compare_op_prim(ast::CmpOp op, kernels::Prim& p) {
  using ast::CmpOp;
  using kernels::Prim;
  switch (op) {
    case CmpOp::Lt: p = Prim::less; return true;
    case CmpOp::Le: p = Prim::less_equal; return true;
    case CmpOp::Gt: p = Prim::greater; return true;
    case CmpOp::Ge: p = Prim::greater_equal; return true;
    case CmpOp::Eq: p = Prim::equal; return true;
    case CmpOp::Ne: p = Prim::not_equal; return true;
    default: return false;
  }
}

}  // namespace msl
