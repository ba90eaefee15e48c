// Shared set-up of the trace tests: an interpreter with the standard
// library, MSL source run in its __main__ module, tensors in and out, and
// the comparison of a traced graph (run by the graph executor) with the
// same MSL function called eagerly on the same tensors.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jit/exec/executor.h"
#include "interp/core/interp.h"
#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"
#include "interp/tensor/trace.h"
#include "lang/ir/ir_module.h"
#include "lang/ir/printer.h"
#include "lang/ir/verifier.h"

namespace msl::trace_test {

using kernels::Dims;
using kernels::DType;
using kernels::Tensor;
using trace::TraceInput;

struct Fixture {
  std::string out;
  std::unique_ptr<Interp> interp;
  ir::IrModule module;

  Fixture() {
    Interp::Options opts;
    opts.write_stdout = [this](std::string_view s) { out += s; };
    opts.write_stderr = [this](std::string_view s) { out += s; };
    opts.stdlib_dir = MSL_STDLIB_DIR;
    interp = std::make_unique<Interp>(std::move(opts));
    run("import msl._core as _C\nimport msl\nimport msl.ops as ops\nimport msl._bprop as _bprop\n");
  }
  Interp& I() { return *interp; }

  // Runs MSL statements in __main__ (an MSL exception fails the test with its traceback).
  void run(const std::string& source) {
    try {
      I().run_source(std::make_shared<SourceFile>("<test>", source), I().main_module());
    } catch (MslError& e) {
      FAIL(I().format_exception(e.exc));
    }
  }
  // The value of an MSL expression evaluated in __main__.
  Value eval(const std::string& expr) {
    return I().eval_expression(std::make_shared<SourceFile>("<test>", expr), I().main_module());
  }

  TensorClass* tensor_class() {
    Value c = eval("_C.Tensor");
    return static_cast<TensorClass*>(c.as<Class>());
  }
  Value wrap(const Tensor& t) { return wrap_tensor(tensor_class(), Tensor(t)); }

  // Traces `fn_expr` (an MSL expression naming a function); fails the test
  // with the MSL traceback when tracing raises.
  ir::FuncGraph* trace(const std::string& fn_expr, const std::vector<TraceInput>& args,
                       const std::vector<std::pair<std::string, Value>>& kwargs = {},
                       const std::string& name = "traced") {
    try {
      ir::FuncGraph* g = trace::trace_function(I(), module, eval(fn_expr), args, kwargs, name);
      std::vector<std::string> errs = ir::verify_graph(*g);
      CHECK_MESSAGE(errs.empty(), (errs.empty() ? "" : errs[0]) << "\n" << ir::print_graph(*g));
      return g;
    } catch (MslError& e) {
      FAIL(I().format_exception(e.exc));
    }
    return nullptr;
  }

  // The `Type: message` of what tracing raises, or "no error".
  std::string trace_error(const std::string& fn_expr, const std::vector<TraceInput>& args,
                          const std::vector<std::pair<std::string, Value>>& kwargs = {}) {
    try {
      trace::trace_function(I(), module, eval(fn_expr), args, kwargs, "failing");
    } catch (MslError& e) {
      return I().exception_summary(e.exc);
    }
    return "no error";
  }
  std::string error_of(const std::string& source) {
    try {
      I().run_source(std::make_shared<SourceFile>("<test>", source), I().main_module());
    } catch (MslError& e) {
      return I().exception_summary(e.exc);
    }
    return "no error";
  }
};

inline TraceInput spec(DType d, Dims shape) { return TraceInput::tensor(d, shape); }

// A tensor with deterministic, distinct, non-integer values (so that a
// swapped operand or a wrong axis shows up), offset by `seed`.
inline Tensor sample(DType d, Dims shape, double seed = 0) {
  std::vector<double> v(static_cast<size_t>(shape.product()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(1.0 + seed + 0.7 * static_cast<double>(i)) * 2.0;
  if (kernels::is_integral(d) || d == DType::Bool)
    for (double& x : v) x = d == DType::Bool ? (x > 0) : std::round(x * 3);
  return ir::tensor_from_values(d, shape, v);
}

// Both results as flat (shape, dtype, values) lists: tensors, or tuples of them.
inline void flatten(const exec::RtValue& v, std::vector<Tensor>& out) {
  if (v.is<exec::RtTuple>()) {
    for (const auto& x : v.tuple()) flatten(x, out);
    return;
  }
  REQUIRE_MESSAGE(v.is<Tensor>(), "graph result is a " << exec::type_name(v));
  out.push_back(v.tensor());
}

inline void flatten(Interp& I, const Value& v, std::vector<Tensor>& out) {
  if (v.is(Kind::Tuple) || v.is(Kind::List)) {
    for (const Value& x : I.to_vector(v)) flatten(I, x, out);
    return;
  }
  REQUIRE_MESSAGE(is_tensor(v), "eager result is a " << I.type_name(v));
  out.push_back(tensor_of(v));
}

inline void check_same(const Tensor& graph, const Tensor& eager) {
  REQUIRE(graph.shape() == eager.shape());
  REQUIRE(graph.dtype() == eager.dtype());
  for (int64_t i = 0; i < graph.numel(); ++i) {
    double a = graph.item_at(i), b = eager.item_at(i);
    CHECK_MESSAGE((a == b || (std::isnan(a) && std::isnan(b))), "element " << i << ": graph " << a << " eager " << b);
  }
}

// Runs the traced graph on `inputs` and calls the MSL function eagerly on
// the same tensors (constants and keywords as given); checks that both give
// the same tensors, value for value. Returns the graph's result.
inline exec::RtValue run_both(Fixture& f, ir::FuncGraph* g, const std::string& fn_expr,
                              const std::vector<Value>& eager_args, const std::vector<Tensor>& inputs,
                              const std::vector<std::pair<std::string, Value>>& kwargs = {}) {
  std::vector<exec::RtValue> rt;
  for (const Tensor& t : inputs) rt.emplace_back(t);
  exec::RtValue got = exec::run_graph(*g, rt);
  std::vector<Value> args = eager_args;
  std::vector<std::pair<Ref<Str>, Value>> kw;
  for (const auto& [k, v] : kwargs) kw.emplace_back(Ref<Str>(f.I().intern(k)), v);
  Value want;
  try {
    want = f.I().call(f.eval(fn_expr), args, kw);
  } catch (MslError& e) {
    FAIL(f.I().format_exception(e.exc));
  }
  std::vector<Tensor> a, b;
  flatten(got, a);
  flatten(f.I(), want, b);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) check_same(a[i], b[i]);
  return got;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace msl::trace_test
