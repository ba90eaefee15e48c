// Lowering of value attributes, methods, keyword calls of host callables
// and subscripts as calls of host adapters (lang/ir/lower_host.cpp): which
// adapter each expression gets and the order of its arguments, the contract
// interp/graph/graph_host_adapter.cpp reads them back by.
#include <doctest/doctest.h>

#include "lower_test_util.h"

using namespace msl;
using namespace msl::lower_test;

namespace {

// A host object that prints as the adapter it stands for.
struct NamedHost final : ir::HostObject {
  explicit NamedHost(std::string n) : n_(std::move(n)) {}
  std::string name() const override { return n_; }
  std::string n_;
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

// `$kind|attr or callee|keywords or index` for each adapter.
ir::ConstValue describe(const ir::HostAdapter& h) {
  using K = ir::HostAdapter::Kind;
  using P = ir::HostAdapter::IndexPart::Kind;
  std::string s;
  switch (h.kind) {
    case K::GetAttr: s = "getattr|" + h.attr; break;
    case K::Method: s = "method|" + h.attr + "|" + join(h.keywords); break;
    case K::Call: {
      auto callee = std::get_if<ir::HostRef>(&h.callee);
      s = "call|" + (callee ? (*callee)->name() : std::string("-")) + "|" + join(h.keywords);
      break;
    }
    case K::Raise: s = "raise|" + h.attr; break;
    case K::MakeDict: {
      std::vector<std::string> keys;
      for (const ir::ConstValue& k : h.keys) keys.push_back(ir::const_value_str(k));
      s = "dict|" + join(keys);
      break;
    }
    case K::GetItem:
    case K::SetItem: {
      std::vector<std::string> parts;
      for (const auto& p : h.index) {
        if (p.kind == P::Value) parts.push_back("v");
        if (p.kind == P::None) parts.push_back("n");
        if (p.kind == P::Ellipsis) parts.push_back("e");
        if (p.kind == P::Slice)
          parts.push_back(std::string("s") + (p.lower ? "1" : "0") + (p.upper ? "1" : "0") + (p.step ? "1" : "0"));
      }
      s = std::string(h.kind == K::SetItem ? "setitem|" : "getitem|") + (h.index_is_tuple ? "tuple|" : "") + join(parts);
      break;
    }
  }
  return ir::HostRef(std::make_shared<const NamedHost>(s));
}

// Resolves `lib.f` to a host function (a library callable).
ir::Resolver with_lib(ir::Resolver base) {
  return [base](const std::string& name) {
    if (name != "lib.f") return base(name);
    ir::ResolvedName r;
    r.kind = ir::ResolvedName::Kind::Constant;
    r.value = ir::HostRef(std::make_shared<const NamedHost>("lib.f"));
    return r;
  };
}

Lowered lower_with_adapters(const std::string& text) { return lower_source(text, with_lib, describe); }

}  // namespace

TEST_CASE("attributes and methods of values call adapters: the value first, keyword values last") {
  Lowered r = lower_with_adapters(
      "def f(x, k):\n"
      "    n = x.shape[0]\n"
      "    return x.sum(k, keep_dims=True, axis=n)\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @f(%para1_x, %para2_k) {\n"
        "  %0 = $getattr|shape(%para1_x)\n"
        "  %1(n) = $getitem|v(%0, 0)\n"
        "  %2 = $method|sum|keep_dims,axis(%para1_x, %para2_k, True, %1)\n"
        "  return(%2)\n"
        "}\n");
  CHECK(ir::verify_module(*r.module).empty());
}

TEST_CASE("keyword calls of host callables: a known callee is part of the adapter, a computed one its first argument") {
  Lowered r = lower_with_adapters(
      "def f(x, g):\n"
      "    return lib.f(x, axis=1), g(x, 2, axis=-1), lib.f(x)\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @f(%para1_x, %para2_g) {\n"
        "  %0 = $call|lib.f|axis(%para1_x, 1)\n"
        "  %1 = neg(1)\n"
        "  %2 = $call|-|axis(%para2_g, %para1_x, 2, %1)\n"
        "  %3 = $lib.f(%para1_x)\n"
        "  %4 = make_tuple(%0, %2, %3)\n"
        "  return(%4)\n"
        "}\n");
}

TEST_CASE("subscripts: slices, None, Ellipsis and values in order; constant items of tuple displays stay tuple_getitem") {
  Lowered r = lower_with_adapters(
      "def f(x, i):\n"
      "    a = x[1:, None, ..., i, ::2]\n"
      "    b = x[:i]\n"
      "    c = x[0]\n"
      "    d = (a, b)[-1]\n"
      "    return c, d\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @f(%para1_x, %para2_i) {\n"
        "  %0(c) = $getitem|v(%para1_x, 0)\n"
        "  %1(a) = $getitem|tuple|s100,n,e,v,s001(%para1_x, 1, %para2_i, 2)\n"
        "  %2(b) = $getitem|s010(%para1_x, %para2_i)\n"
        "  %3 = make_tuple(%1, %2)\n"
        "  %4(d) = tuple_getitem(%3, -1)\n"
        "  %5 = make_tuple(%0, %4)\n"
        "  return(%5)\n"
        "}\n");
}

TEST_CASE("without an adapter maker, value attributes, keyword calls and slices are graph-mode errors") {
  Lowered a = lower_source("def f(x):\n    return x.shape\n");
  CHECK(a.error_text().find("t.msl:2:12: error: attribute access on a value is not supported in graph mode") !=
        std::string::npos);
  Lowered b = lower_source("def f(x):\n    return x[1:]\n");
  CHECK(b.error_text().find("t.msl:2:12: error: this subscript is not supported in graph mode") != std::string::npos);
  Lowered c = lower_source("def f(x, g):\n    return g(x, axis=1)\n");
  CHECK(c.error_text().find("error: keyword arguments in a call of a computed function is not supported") !=
        std::string::npos);
}
