// Helpers shared by the graph executor tests: parse IR text, build tensors,
// read results back as doubles.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "jit/exec/executor.h"
#include "lang/ir/ir_module.h"
#include "lang/ir/ir_parser.h"

namespace exec_test {

using msl::exec::RtValue;

// Parses `text` into a fresh module (kept alive by the returned pointer).
inline std::unique_ptr<msl::ir::IrModule> parse(const std::string& text) {
  auto m = std::make_unique<msl::ir::IrModule>();
  msl::ir::IrParseResult r = msl::ir::parse_ir(text, *m, "t.ir");
  REQUIRE_MESSAGE(r.ok(), r.error);
  return m;
}

// Runs graph `name` of the module.
inline RtValue run(const msl::ir::IrModule& m, const std::string& name, std::vector<RtValue> args,
                   msl::exec::ExecOptions opts = {}) {
  const msl::ir::FuncGraph* g = m.find_graph(name);
  REQUIRE(g != nullptr);
  return msl::exec::run_graph(*g, std::move(args), std::move(opts));
}

inline msl::kernels::Tensor tensor(msl::kernels::DType dt, const msl::kernels::Dims& shape,
                                   const std::vector<double>& v) {
  return msl::ir::tensor_from_values(dt, shape, v);
}

inline std::vector<double> values(const RtValue& v) {
  REQUIRE_MESSAGE(v.is<msl::kernels::Tensor>(), msl::exec::type_name(v));
  const msl::kernels::Tensor& t = v.tensor();
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.item_at(i));
  return out;
}

inline double scalar(const RtValue& v) {
  if (auto i = v.get_if<int64_t>()) return static_cast<double>(*i);
  if (auto d = v.get_if<double>()) return *d;
  REQUIRE_MESSAGE(v.is<msl::kernels::Tensor>(), msl::exec::type_name(v));
  return v.tensor().item();
}

// The ExecError message of running graph `name`, or "" when it succeeds.
inline std::string run_error(const msl::ir::IrModule& m, const std::string& name, std::vector<RtValue> args,
                             msl::exec::ExecOptions opts = {}) {
  try {
    run(m, name, std::move(args), std::move(opts));
  } catch (const msl::exec::ExecError& e) {
    return e.what();
  }
  return "";
}

}  // namespace exec_test
