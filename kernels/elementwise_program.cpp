// EwProgram's construction, validation and canonical text
// (elementwise_program.h): what an elementwise loop computes, apart from how
// a renderer generates it. The text is the compile cache's key,
// so two programs that read their inputs alike print alike.
#include <fmt/format.h>

#include <stdexcept>

#include "kernels/elementwise_program.h"

namespace msl::kernels {

int EwProgram::input(int k, EwIndexing how) {
  EwValue v;
  v.op = EwOp::Input;
  v.input = k;
  if (k >= num_inputs) num_inputs = k + 1;
  how = how.normalized();
  if (k >= 0 && (!how.full() || k < static_cast<int>(indexing.size()))) {
    if (k >= static_cast<int>(indexing.size())) indexing.resize(static_cast<size_t>(k) + 1);
    indexing[static_cast<size_t>(k)] = how;
  }
  values.push_back(v);
  return static_cast<int>(values.size()) - 1;
}

EwIndexing EwProgram::input_indexing(int k) const {
  return k >= 0 && k < static_cast<int>(indexing.size()) ? indexing[static_cast<size_t>(k)] : EwIndexing{};
}

namespace {

// "(i / 4) % 3", or with a lane "((i / 32) % 3) * 16 + i % 16": the
// program text's and the error messages' way of writing a pattern.
std::string pattern_text(const EwIndexing& how) {
  if (how.lane == 1) return fmt::format("(i / {}) % {}", how.inner, how.count);
  return fmt::format("((i / {}) % {}) * {} + i % {}", how.inner, how.count, how.lane, how.lane);
}

}  // namespace

EwIndexing EwProgram::broadcast() const {
  EwIndexing shared;
  auto join = [&](EwIndexing how, const char* what, size_t k) {
    if (how.full() || how.scalar()) return;
    if (!shared.full() && !(how == shared))
      throw std::invalid_argument(
          fmt::format("elementwise program: {} {} is indexed as {}, another input or sum as {}; one pattern per "
                      "program",
                      what, k, pattern_text(how), pattern_text(shared)));
    shared = how;
  };
  for (int k = 0; k < num_inputs; ++k) join(input_indexing(k), "input", static_cast<size_t>(k));
  for (size_t r = 0; r < reductions.size(); ++r) join(reductions[r].how, "sum", r);
  return shared;
}

int EwProgram::constant(float c) {
  EwValue v;
  v.op = EwOp::Const;
  v.constant = c;
  values.push_back(v);
  return static_cast<int>(values.size()) - 1;
}

int EwProgram::unary(EwOp op, int a) {
  EwValue v;
  v.op = op;
  v.a = a;
  values.push_back(v);
  return static_cast<int>(values.size()) - 1;
}

int EwProgram::binary(EwOp op, int a, int b) {
  EwValue v;
  v.op = op;
  v.a = a;
  v.b = b;
  values.push_back(v);
  return static_cast<int>(values.size()) - 1;
}

namespace {

const char* op_name(EwOp op) {
  switch (op) {
    case EwOp::Input: return "input";
    case EwOp::Const: return "const";
#define MSL_X(e, prim, arity) \
  case EwOp::e:               \
    return #prim;
      MSL_EW_OPS(MSL_X)
#undef MSL_X
  }
  return "?";
}

bool is_binary(EwOp op) {
  switch (op) {
#define MSL_X(e, prim, arity) \
  case EwOp::e:               \
    return arity == 2;
    MSL_EW_OPS(MSL_X)
#undef MSL_X
    default: return false;
  }
}

// Full (count 0, lane 1), or a pattern with inner, count, lane >= 1, lane
// dividing inner, whose period inner * count and size count * lane are
// int64 (a program read from bytes may say anything).
bool well_formed(const EwIndexing& how) {
  if (how.full()) return how.lane == 1;
  int64_t product;
  return how.count > 0 && how.inner >= 1 && how.lane >= 1 && how.inner % how.lane == 0 &&
         !__builtin_mul_overflow(how.inner, how.count, &product) &&
         !__builtin_mul_overflow(how.count, how.lane, &product);
}

}  // namespace

void validate_program(const EwProgram& p) {
  if (p.values.empty() || (p.outputs.empty() && p.reductions.empty()))
    throw std::invalid_argument("elementwise program: no output value");
  for (int o : p.outputs)
    if (o < 0 || o >= static_cast<int>(p.values.size()))
      throw std::invalid_argument(fmt::format("elementwise program: output %{} is not a value", o));
  for (const EwReduction& r : p.reductions)
    if (r.value < 0 || r.value >= static_cast<int>(p.values.size()) || r.how.full() || !well_formed(r.how))
      throw std::invalid_argument(fmt::format("elementwise program: sum of %{} at {}", r.value, pattern_text(r.how)));
  if (p.indexing.size() > static_cast<size_t>(p.num_inputs))
    throw std::invalid_argument(
        fmt::format("elementwise program: indexing for {} inputs of {}", p.indexing.size(), p.num_inputs));
  for (size_t k = 0; k < p.indexing.size(); ++k)
    if (!well_formed(p.indexing[k]))
      throw std::invalid_argument(
          fmt::format("elementwise program: input {} has indexing {}", k, pattern_text(p.indexing[k])));
  p.broadcast();
  for (size_t i = 0; i < p.values.size(); ++i) {
    const EwValue& v = p.values[i];
    int n = static_cast<int>(i);
    if (v.op == EwOp::Input && (v.input < 0 || v.input >= p.num_inputs))
      throw std::invalid_argument(
          fmt::format("elementwise program: value {} reads input {} of {}", i, v.input, p.num_inputs));
    if (v.op == EwOp::Input || v.op == EwOp::Const) continue;
    if (v.a < 0 || v.a >= n || (is_binary(v.op) && (v.b < 0 || v.b >= n)))
      throw std::invalid_argument(
          fmt::format("elementwise program: value {} ({}) uses a value not defined before it", i, op_name(v.op)));
  }
}

std::string EwProgram::text() const {
  std::string s = fmt::format("inputs {}\n", num_inputs);
  for (int k = 0; k < num_inputs; ++k)
    if (EwIndexing how = input_indexing(k); !how.full()) s += fmt::format("input {} at {}\n", k, pattern_text(how));
  for (size_t i = 0; i < values.size(); ++i) {
    const EwValue& v = values[i];
    if (v.op == EwOp::Input)
      s += fmt::format("%{} = input {}\n", i, v.input);
    else if (v.op == EwOp::Const)
      s += fmt::format("%{} = const {:a}\n", i, v.constant);
    else if (is_binary(v.op))
      s += fmt::format("%{} = {} %{} %{}\n", i, op_name(v.op), v.a, v.b);
    else
      s += fmt::format("%{} = {} %{}\n", i, op_name(v.op), v.a);
  }
  s += "out";
  for (int o : outputs) s += fmt::format(" %{}", o);
  s += "\n";
  for (const EwReduction& r : reductions) s += fmt::format("sum %{} at {}\n", r.value, pattern_text(r.how));
  return s;
}

}  // namespace msl::kernels
