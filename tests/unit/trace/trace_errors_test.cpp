// What a trace cannot capture is a clear MSL exception naming the traced
// function and what it did: values needed at trace time, in-place
// primitives, tracers leaking out of their trace or into a nested
// one, and results a graph cannot return. Shape errors surface at trace
// time, as the eager call would raise them.
#include "trace_fixture.h"

using namespace msl;
using namespace msl::trace_test;

namespace {

const TraceInput kVec = TraceInput::tensor(DType::Float32, {3});

}  // namespace

TEST_CASE("needing a traced value is a TypeError that names the function and the operation") {
  Fixture f;
  f.run(
      "def branch(x):\n"
      "    if x:\n"
      "        return x\n"
      "    return -x\n"
      "def item(x):\n"
      "    return x.sum().item()\n"
      "def to_float(x):\n"
      "    return float(x[0])\n"
      "def show(x):\n"
      "    print(x)\n"
      "    return x\n"
      "def as_numpy(x):\n"
      "    return x.asnumpy()\n"
      "def attr(x):\n"
      "    return _C.reduce_sum(x, axes=x)\n"
      "def loop(x):\n"
      "    while x.sum() > 0:\n"
      "        x = x - 1\n"
      "    return x\n"
      "def negate(x):\n"
      "    return not x\n");
  std::string e = f.trace_error("branch", {kVec});
  CHECK(contains(e, "TypeError: tracing 'branch': the truth value of a tensor"));
  CHECK(contains(e, "Tracer(shape=[3], dtype=Float32)"));
  CHECK(contains(f.trace_error("item", {kVec}), "TypeError: tracing 'item': Tensor.item() needs the value"));
  CHECK(contains(f.trace_error("to_float", {kVec}), "TypeError: tracing 'to_float': Tensor.__float__ needs the value"));
  CHECK(contains(f.trace_error("show", {kVec}), "TypeError: tracing 'show': str() or print() of a tensor"));
  CHECK(f.out.empty());  // nothing was printed
  CHECK(contains(f.trace_error("as_numpy", {kVec}), "tracing 'as_numpy': Tensor.asnumpy() needs the value"));
  CHECK(contains(f.trace_error("attr", {kVec}), "tracing 'attr': the attribute 'axes' of reduce_sum() needs"));
  CHECK(contains(f.trace_error("loop", {kVec}), "TypeError: tracing 'loop': the truth value"));
  CHECK(contains(
      f.trace_error("negate", {kVec}),
      "TypeError: tracing 'negate': the truth value of a tensor (an `if`, `while`, `and`, `or`, `not` or bool())"));
}

TEST_CASE("random primitives are recorded to draw when the graph runs; in-place primitives cannot be traced") {
  Fixture f;
  f.run(
      "def noisy(x):\n"
      "    return x + _C.random_normal(shape=[3])\n"
      "def drop(x):\n"
      "    y, mask = _C.dropout(x, keep_prob=0.5)\n"
      "    return y\n"
      "def write(x):\n"
      "    return _C.assign(x, _C.zeros_like(x))\n"
      "def store(x):\n"
      "    t = _C.zeros([3])\n"
      "    t[0] = x[0]\n"
      "    return t\n");
  // A random primitive, with traced inputs (dropout) or without (a draw
  // of a shape), is recorded without its draw: the graph draws afresh each
  // time it runs (tests/ops/nn/dropout_training.msl,
  // tests/ops/random/draw_in_grad.msl).
  CHECK(f.trace_error("noisy", {kVec}) == "no error");
  CHECK(f.trace_error("drop", {kVec}) == "no error");
  CHECK(contains(f.trace_error("write", {kVec}), "RuntimeError: tracing 'write': assign() writes into its input"));
  CHECK(contains(f.trace_error("store", {kVec}),
                 "RuntimeError: tracing 'store': writing into a concrete tensor (x[...] = v) with traced values"));
}

TEST_CASE("a tracer that escapes its trace raises when used later") {
  Fixture f;
  f.run(
      "saved = []\n"
      "def leak(x):\n"
      "    saved.append(x)\n"
      "    return x * 2\n");
  ir::FuncGraph* g = f.trace("leak", {kVec});
  REQUIRE(g);
  std::string msg =
      "RuntimeError: a tracer of the trace of 'leak' was used after that trace ended: "
      "Tracer(shape=[3], dtype=Float32) escaped from the traced function";
  CHECK(contains(f.error_of("y = saved[0] + 1"), msg));
  CHECK(contains(f.error_of("y = _C.exp(saved[0])"), msg));
  CHECK(contains(f.error_of("y = saved[0].shape"), msg));
  CHECK(contains(f.error_of("y = saved[0].sum()"), msg));
  CHECK(contains(f.error_of("y = saved[0][0]"), msg));
  CHECK(contains(f.error_of("y = bool(saved[0])"), msg));
  // repr still works, so messages can show the tracer.
  CHECK(f.error_of("r = repr(saved[0])") == "no error");
  CHECK(f.I().to_str(f.eval("r")) == "Tracer(shape=[3], dtype=Float32)");
  CHECK(f.I().to_str(f.eval("isinstance(saved[0], _C.Tensor) and _C.is_tensor(saved[0])")) == "True");
}

TEST_CASE("a tracer of an outer trace used inside a nested trace is an error") {
  Fixture f;
  static Fixture* current = nullptr;
  current = &f;
  // trace_inner(x) traces `inner`, which reads the outer tracer from a global.
  f.I().def_native(f.I().main_module().get(), "trace_inner", [](Interp& I, Args&, Object*) -> Value {
    trace::trace_function(I, current->module, current->eval("inner"), {TraceInput::tensor(DType::Float32, {3})}, {},
                          "inner");
    return Value();
  });
  f.run(
      "outer_x = None\n"
      "def inner(y):\n"
      "    return y + outer_x\n"
      "def outer(x):\n"
      "    global outer_x\n"
      "    outer_x = x\n"
      "    trace_inner()\n"
      "    return x\n");
  std::string e = f.trace_error("outer", {kVec});
  CHECK(contains(e,
                 "RuntimeError: tracing 'inner': Tracer(shape=[3], dtype=Float32) belongs to the enclosing trace "
                 "of 'outer'"));
  // Both traces ended cleanly: a new trace works.
  CHECK(f.trace("ops.square", {kVec}) != nullptr);
}

TEST_CASE("results a graph cannot return, bad indices and shape errors") {
  Fixture f;
  f.run(
      "def as_dict(x):\n"
      "    return {'x': x}\n"
      "def masked(x):\n"
      "    return x[x > 0.0]\n"
      "def too_many(x):\n"
      "    return x[0, 0]\n"
      "def out_of_range(x):\n"
      "    return x[3]\n"
      "def mismatch(x):\n"
      "    return x * _C.ones([4])\n"
      "def wrap(x):\n"
      "    return _C.Tensor(x)\n"
      "def listed(x):\n"
      "    return _C.add(x, [x, x, x])\n"
      "def tracer_shape(x):\n"
      "    return _C.zeros(x)\n");
  CHECK(contains(f.trace_error("as_dict", {kVec}),
                 "TypeError: tracing 'as_dict': the result contains a value of type 'dict'"));
  // x[mask]'s length depends on the mask's values (x[[0, 2]] traces: gather_nd).
  CHECK(contains(f.trace_error("masked", {kVec}),
                 "RuntimeError: tracing 'masked': indexing with a traced bool mask (x[mask]) gives a shape that "
                 "depends on the mask's values"));
  CHECK(f.trace_error("too_many", {kVec}) ==
        "IndexError: too many indices for tensor: tensor is 1-dimensional, but 2 were indexed");
  CHECK(f.trace_error("out_of_range", {kVec}) == "IndexError: index 3 is out of bounds for axis 0 with size 3");
  CHECK(contains(f.trace_error("mismatch", {kVec}), "ShapeError"));
  CHECK(contains(f.trace_error("wrap", {kVec}), "tracing 'wrap': Tensor: a traced tensor cannot be copied"));
  CHECK(contains(f.trace_error("listed", {kVec}), "tracing 'listed': add: a list holding a traced tensor"));
  CHECK(contains(f.trace_error("tracer_shape", {kVec}), "tracing 'tracer_shape': zeros's shape argument needs"));
  CHECK(contains(f.trace_error("ops.square", {TraceInput::tensor(DType::Float32, {-1})}), "negative dimension"));
}

TEST_CASE("a failed trace leaves a flagged graph that returns None, and the module still verifies") {
  Fixture f;
  f.run(
      "def half(x):\n"
      "    y = x * 2\n"
      "    return y.item()\n");
  CHECK(contains(f.trace_error("half", {kVec}), "Tensor.item() needs the value"));
  ir::FuncGraph* g = f.module.find_graph("failing");
  REQUIRE(g);
  CHECK(g->flags().get_bool("trace_failed"));
  CHECK(ir::print_graph(*g) ==
        "# IR of: failing\nsubgraph @failing(%para1_x) flags[trace_failed=True] {\n  return(None)\n}\n");
  CHECK(ir::verify_module(f.module).empty());
}

TEST_CASE("reading a Parameter that is not an argument is an error, not a constant frozen into the graph") {
  // A library method reading self.weight would otherwise compute with the
  // weight's value at trace time forever (graph mode then runs the call in
  // the interpreter instead).
  Fixture f;
  f.run(
      "w = _C.Parameter(_C.Tensor([1.0, 2.0, 3.0]), name='w')\n"
      "def scaled(x):\n"
      "    return x * w\n"
      "def weight(x):\n"
      "    return w\n"
      "def plain(x):\n"
      "    return x * _C.Tensor([1.0, 2.0, 3.0])\n");
  CHECK(contains(f.trace_error("scaled", {kVec}),
                 "RuntimeError: tracing 'scaled': it reads Parameter 'w', which is not one of its arguments"));
  CHECK(contains(f.trace_error("weight", {kVec}), "tracing 'weight': it reads Parameter 'w'"));
  CHECK(f.trace("plain", {kVec}) != nullptr);  // a plain tensor is a constant, as before
}
