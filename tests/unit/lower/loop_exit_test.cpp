// break / continue / return inside while and for-range bodies (also under
// ifs): the structure of the lowered loop graphs (not unrolled, tail calls,
// the continuation graph of a loop that returns), and the results of
// running them with the debug-mode executor against C++ reference loops.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "jit/exec/executor.h"
#include "lower_test_util.h"

using namespace msl;
using namespace msl::lower_test;
using exec::RtValue;

namespace {
// Lowers `src` (no errors allowed, verifier clean) and runs graph `name`.
RtValue run_lowered(const Lowered& r, const std::string& name, std::vector<RtValue> args, exec::ExecOptions opts = {}) {
  const ir::FuncGraph* g = r.graph(name);
  REQUIRE(g != nullptr);
  return exec::run_graph(*g, std::move(args), std::move(opts));
}

int64_t as_int(const RtValue& v) {
  REQUIRE_MESSAGE(v.is<int64_t>(), exec::type_name(v));
  return v.as<int64_t>();
}

Lowered lower_ok(const std::string& src) {
  Lowered r = lower_source(src);
  REQUIRE_MESSAGE(r.errors.empty(), r.error_text());
  CHECK(ir::verify_module(*r.module).empty());
  return r;
}
}  // namespace

TEST_CASE("for-range with continue and break: structure and results") {
  Lowered r = lower_ok(
      "def f(n, limit):\n"
      "    s = 0\n"
      "    for i in range(n):\n"
      "        if i % 2 == 1:\n"
      "            continue\n"
      "        s = s + i * i\n"
      "        if s > limit:\n"
      "            break\n"
      "    return s\n");
  // Not unrolled: f, loop, body, exit and two branch graphs per if (the
  // second if lives in the first one's false branch).
  CHECK(r.module->graphs().size() == 8);
  ir::FuncGraph* loop = r.graph("f_for");
  // continue: the true branch of the first if tail-calls the loop with the next counter.
  ir::FuncGraph* cont = r.graph("f_for_body_true");
  REQUIRE(cont != nullptr);
  CHECK(cont->output()->callee()->as_graph() == loop);
  CHECK(count_calls(*cont, kernels::Prim::add) == 1);
  // break: the innermost true branch returns the carried values as the loop's tuple.
  ir::FuncGraph* brk = r.graph("f_for_body_false_true");
  REQUIRE(brk != nullptr);
  CHECK(brk->output()->is_call_of(ir::IrOp::make_tuple));
  // Falling off the end of the body is the next iteration.
  CHECK(r.graph("f_for_body_false_false")->output()->callee()->as_graph() == loop);

  auto ref = [](int64_t n, int64_t limit) {
    int64_t s = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (i % 2 == 1) continue;
      s += i * i;
      if (s > limit) break;
    }
    return s;
  };
  for (auto [n, limit] : std::vector<std::pair<int64_t, int64_t>>{{0, 10}, {1, 10}, {10, 1000}, {10, 20}, {30, 100}})
    CHECK(as_int(run_lowered(r, "f", {n, limit})) == ref(n, limit));
  CHECK(ref(10, 20) == 56);  // 0 + 4 + 16 + 36: stops after i = 6
}

TEST_CASE("while True with break, continue in elif and in a nested if") {
  Lowered r = lower_ok(
      "def g(n):\n"
      "    i = 0\n"
      "    s = 0\n"
      "    while True:\n"
      "        i = i + 1\n"
      "        if i > n:\n"
      "            break\n"
      "        elif i % 3 == 0:\n"
      "            continue\n"
      "        else:\n"
      "            if i % 5 == 0:\n"
      "                s = s + 100\n"
      "                continue\n"
      "        s = s + i\n"
      "    return (s, i)\n");
  auto ref = [](int64_t n) {
    int64_t i = 0, s = 0;
    while (true) {
      i = i + 1;
      if (i > n) break;
      if (i % 3 == 0) continue;
      if (i % 5 == 0) {
        s += 100;
        continue;
      }
      s += i;
    }
    return std::pair{s, i};
  };
  for (int64_t n : {0, 1, 5, 16}) {
    RtValue v = run_lowered(r, "g", {n});
    REQUIRE(v.is<exec::RtTuple>());
    REQUIRE(v.tuple().size() == 2);
    CHECK(as_int(v.tuple()[0]) == ref(n).first);
    CHECK(as_int(v.tuple()[1]) == ref(n).second);
  }
}

TEST_CASE("nested loops: break leaves only the inner loop") {
  Lowered r = lower_ok(
      "def h(n):\n"
      "    total = 0\n"
      "    for i in range(n):\n"
      "        j = 0\n"
      "        while j < n:\n"
      "            if j * i > 6:\n"
      "                break\n"
      "            total = total + j\n"
      "            j = j + 1\n"
      "        total = total + 1000\n"
      "    return total\n");
  auto ref = [](int64_t n) {
    int64_t total = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (j * i > 6) break;
        total += j;
      }
      total += 1000;
    }
    return total;
  };
  for (int64_t n : {0, 1, 3, 6}) CHECK(as_int(run_lowered(r, "h", {n})) == ref(n));
}

TEST_CASE("return inside a while: the statements after the loop are its continuation") {
  Lowered r = lower_ok(
      "def first_over(n, limit):\n"
      "    i = 0\n"
      "    while i < n:\n"
      "        if i * i > limit:\n"
      "            return i\n"
      "        i = i + 1\n"
      "    i = i + 100\n"
      "    return -i\n");
  // The rest after the loop is lowered once, into @..._after(i), which the
  // exit calls; the function returns the loop's result.
  ir::FuncGraph* f = r.graph("first_over");
  ir::FuncGraph* after = r.graph("first_over_while_after");
  REQUIRE(after != nullptr);
  CHECK(after->parent() == f);
  CHECK(after->params().size() == 1);
  CHECK(f->output()->callee()->as_graph() == r.graph("first_over_while"));
  CHECK(r.graph("first_over_while_exit")->output()->callee()->as_graph() == after);
  CHECK(count_calls(*after, kernels::Prim::add) == 1);
  CHECK(as_int(run_lowered(r, "first_over", {int64_t{10}, int64_t{20}})) == 5);
  CHECK(as_int(run_lowered(r, "first_over", {int64_t{10}, int64_t{0}})) == 1);
  CHECK(as_int(run_lowered(r, "first_over", {int64_t{3}, int64_t{20}})) == -103);
}

TEST_CASE("return from an inner for returns from the function; break goes to the continuation") {
  Lowered r = lower_ok(
      "def find(n, target):\n"
      "    count = 0\n"
      "    for i in range(n):\n"
      "        for j in range(i):\n"
      "            if i * j == target:\n"
      "                return count\n"
      "            count = count + 1\n"
      "        if count > 40:\n"
      "            break\n"
      "        count = count + 10\n"
      "    return count * 2\n");
  auto ref = [](int64_t n, int64_t target) {
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < i; ++j) {
        if (i * j == target) return count;
        count += 1;
      }
      if (count > 40) break;
      count += 10;
    }
    return count * 2;
  };
  for (auto [n, t] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {5, 6}, {5, 7}, {8, 12}, {8, 1000}, {3, 2}})
    CHECK(as_int(run_lowered(r, "find", {n, t})) == ref(n, t));
  CHECK(ref(5, 6) != ref(5, 7));  // the two paths differ
}

TEST_CASE("return inside a loop inside a branch, and a loop whose body only returns") {
  Lowered r = lower_ok(
      "def f(x, n):\n"
      "    if x > 0:\n"
      "        k = 0\n"
      "        while k < n:\n"
      "            x = x * 2\n"
      "            if x > 50:\n"
      "                return x\n"
      "            k = k + 1\n"
      "        x = x + 1\n"
      "    return x - 1\n");
  auto ref = [](int64_t x, int64_t n) {
    if (x > 0) {
      for (int64_t k = 0; k < n; ++k) {
        x *= 2;
        if (x > 50) return x;
      }
      x += 1;
    }
    return x - 1;
  };
  for (auto [x, n] : std::vector<std::pair<int64_t, int64_t>>{{-3, 5}, {3, 2}, {3, 10}, {7, 3}})
    CHECK(as_int(run_lowered(r, "f", {x, n})) == ref(x, n));
}

TEST_CASE("prints inside loops with break and return keep program order") {
  Lowered r = lower_ok(
      "def p(n):\n"
      "    for i in range(n):\n"
      "        if i == 3:\n"
      "            break\n"
      "        if i == 1:\n"
      "            continue\n"
      "        print(i)\n"
      "    print(100)\n"
      "    return n\n"
      "def q(n):\n"
      "    i = 0\n"
      "    while True:\n"
      "        print(i)\n"
      "        if i == n:\n"
      "            print(-1)\n"
      "            return i\n"
      "        i = i + 1\n");
  std::vector<std::string> lines;
  exec::ExecOptions o;
  o.print = [&](const std::string& s) { lines.push_back(s); };
  CHECK(as_int(run_lowered(r, "p", {int64_t{10}}, o)) == 10);
  CHECK(lines == std::vector<std::string>{"0", "2", "100"});
  lines.clear();
  CHECK(as_int(run_lowered(r, "q", {int64_t{2}}, o)) == 2);
  CHECK(lines == std::vector<std::string>{"0", "1", "2", "-1"});
}

TEST_CASE("a long loop with break runs in constant stack depth (tail calls)") {
  Lowered r = lower_ok(
      "def f(n):\n"
      "    s = 0\n"
      "    i = 0\n"
      "    while True:\n"
      "        if i >= n:\n"
      "            break\n"
      "        s = s + i\n"
      "        i = i + 1\n"
      "    return s\n");
  CHECK(as_int(run_lowered(r, "f", {int64_t{5000}})) == 5000 * 4999 / 2);
}

TEST_CASE("break in a nested def is its own loop's; the enclosing loop is unaffected") {
  Lowered r = lower_ok(
      "def f(n):\n"
      "    s = 0\n"
      "    for i in range(n):\n"
      "        def first_even(m):\n"
      "            k = 0\n"
      "            while k < m:\n"
      "                if k % 2 == 0:\n"
      "                    break\n"
      "                k = k + 1\n"
      "            return k\n"
      "        s = s + first_even(i) + i\n"
      "    return s\n");
  CHECK(as_int(run_lowered(r, "f", {int64_t{5}})) == 0 + 1 + 2 + 3 + 4);
}

TEST_CASE("IR text: continue tail-calls the loop, break returns the carried tuple") {
  Lowered r = lower_ok(
      "def f(n):\n"
      "    i = 0\n"
      "    while i < n:\n"
      "        i = i + 1\n"
      "        if i == 2:\n"
      "            continue\n"
      "        if i == 5:\n"
      "            break\n"
      "    return i\n");
  CHECK(r.text() ==
        "subgraph @f(%para1_n) {\n"
        "  %0 = @f_while(0)\n"
        "  %1(i) = tuple_getitem(%0, 0)\n"
        "  return(%1)\n"
        "}\n"
        "subgraph @f_while(%para1_i) parent=@f {\n"
        "  %0 = less(%para1_i, @f.%para1_n)\n"
        "  %1 = switch(%0, @f_while_body, @f_while_exit)\n"
        "  %2 = %1()\n"
        "  return(%2)\n"
        "}\n"
        "subgraph @f_while_body() parent=@f_while {\n"
        "  %0(i) = add(@f_while.%para1_i, 1)\n"
        "  %1 = equal(%0, 2)\n"
        "  %2 = switch(%1, @f_while_body_true, @f_while_body_false)\n"
        "  %3 = %2()\n"
        "  return(%3)\n"
        "}\n"
        "subgraph @f_while_exit() parent=@f_while {\n"
        "  %0 = make_tuple(@f_while.%para1_i)\n"
        "  return(%0)\n"
        "}\n"
        "subgraph @f_while_body_true() parent=@f_while_body {\n"
        "  %0 = @f_while(@f_while_body.%0)\n"
        "  return(%0)\n"
        "}\n"
        "subgraph @f_while_body_false() parent=@f_while_body {\n"
        "  %0 = equal(@f_while_body.%0, 5)\n"
        "  %1 = switch(%0, @f_while_body_false_true, @f_while_body_false_false)\n"
        "  %2 = %1()\n"
        "  return(%2)\n"
        "}\n"
        "subgraph @f_while_body_false_true() parent=@f_while_body_false {\n"
        "  %0 = make_tuple(@f_while_body.%0)\n"
        "  return(%0)\n"
        "}\n"
        "subgraph @f_while_body_false_false() parent=@f_while_body_false {\n"
        "  %0 = @f_while(@f_while_body.%0)\n"
        "  return(%0)\n"
        "}\n");
}

TEST_CASE("IR text: a for-range that returns calls its continuation @f_for_after from the exit") {
  Lowered r = lower_ok(
      "def f(n):\n"
      "    s = 0\n"
      "    for i in range(n):\n"
      "        if s > 10:\n"
      "            return i\n"
      "        s = s + i\n"
      "    return s\n");
  CHECK(r.text() ==
        "subgraph @f(%para1_n) {\n"
        "  %0 = @f_for(0, 0)\n"
        "  return(%0)\n"
        "}\n"
        "subgraph @f_for(%para1_i, %para2_s) parent=@f {\n"
        "  %0 = less(%para1_i, @f.%para1_n)\n"
        "  %1 = switch(%0, @f_for_body, @f_for_exit)\n"
        "  %2 = %1()\n"
        "  return(%2)\n"
        "}\n"
        "subgraph @f_for_after(%para1_s) parent=@f {\n"
        "  return(%para1_s)\n"
        "}\n"
        "subgraph @f_for_body() parent=@f_for {\n"
        "  %0 = greater(@f_for.%para2_s, 10)\n"
        "  %1 = switch(%0, @f_for_body_true, @f_for_body_false)\n"
        "  %2 = %1()\n"
        "  return(%2)\n"
        "}\n"
        "subgraph @f_for_exit() parent=@f_for {\n"
        "  %0 = @f_for_after(@f_for.%para2_s)\n"
        "  return(%0)\n"
        "}\n"
        "subgraph @f_for_body_true() parent=@f_for_body {\n"
        "  return(@f_for.%para1_i)\n"
        "}\n"
        "subgraph @f_for_body_false() parent=@f_for_body {\n"
        "  %0(i) = add(@f_for.%para1_i, 1)\n"
        "  %1(s) = add(@f_for.%para2_s, @f_for.%para1_i)\n"
        "  %2 = @f_for(%0, %1)\n"
        "  return(%2)\n"
        "}\n");
}

TEST_CASE("else clauses of loops run when the loop ends without break") {
  Lowered r = lower_ok(
      "def search(n, target):\n"
      "    i = 0\n"
      "    found = -1\n"
      "    while i < n:\n"
      "        if i * i == target:\n"
      "            found = i\n"
      "            break\n"
      "        i = i + 1\n"
      "    else:\n"
      "        found = -100\n"
      "    return found * 10 + i\n"
      "def first_div(n, d):\n"
      "    s = 0\n"
      "    for i in range(1, n):\n"
      "        s = s + i\n"
      "        if i % d == 0:\n"
      "            return i\n"
      "    else:\n"
      "        if s > 20:\n"
      "            return -s\n"
      "        s = s * 2\n"
      "    return s + 1000\n"
      "def over_tuple(x):\n"
      "    s = 0\n"
      "    for w in (3, 5, 7):\n"
      "        if w == x:\n"
      "            break\n"
      "        s = s + w\n"
      "    else:\n"
      "        s = s * 100\n"
      "    for w in (1, 2):\n"
      "        s = s + w\n"
      "    else:\n"
      "        if x == 0:\n"
      "            return -1\n"
      "    return s\n");
  auto search = [](int64_t n, int64_t target) {
    int64_t i = 0, found = -1;
    bool broke = false;
    for (; i < n; ++i)
      if (i * i == target) {
        found = i;
        broke = true;
        break;
      }
    if (!broke) found = -100;
    return found * 10 + i;
  };
  for (auto [n, t] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {5, 9}, {5, 10}, {3, 9}})
    CHECK(as_int(run_lowered(r, "search", {n, t})) == search(n, t));
  CHECK(search(5, 9) == 33);
  CHECK(search(5, 10) == -995);
  auto first_div = [](int64_t n, int64_t d) {
    int64_t s = 0;
    for (int64_t i = 1; i < n; ++i) {
      s += i;
      if (i % d == 0) return i;
    }
    if (s > 20) return -s;
    s *= 2;
    return s + 1000;
  };
  for (auto [n, d] : std::vector<std::pair<int64_t, int64_t>>{{10, 4}, {4, 7}, {9, 100}, {1, 2}})
    CHECK(as_int(run_lowered(r, "first_div", {n, d})) == first_div(n, d));
  auto over_tuple = [](int64_t x) {
    int64_t s = 0;
    bool broke = false;
    for (int64_t w : {3, 5, 7}) {
      if (w == x) {
        broke = true;
        break;
      }
      s += w;
    }
    if (!broke) s *= 100;
    s += 1 + 2;
    if (x == 0) return int64_t{-1};
    return s;
  };
  for (int64_t x : {0, 3, 5, 7, 9}) CHECK(as_int(run_lowered(r, "over_tuple", {x})) == over_tuple(x));
}

TEST_CASE("break or continue in a loop's else clause (an outer loop's) is an error") {
  Lowered r = lower_source(
      "def f(n):\n"
      "    for i in range(n):\n"
      "        while n:\n"
      "            n = n - 1\n"
      "        else:\n"
      "            break\n"
      "    return n\n");
  REQUIRE(r.errors.size() == 1);
  std::string e = format_diagnostic(r.errors[0]);
  CHECK(e.substr(0, e.find('\n')) ==
        "t.msl:6:13: error: 'break' in the 'else' clause of a loop is not supported in graph mode");
}
