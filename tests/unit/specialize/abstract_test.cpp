// Abstract values: printing (MindSpore's type syntax), equality and join.
#include "spec_test_util.h"

using namespace msl;
using namespace msl::jit;
using jit::test::f32;
using kernels::DType;

TEST_CASE("abstract: values print as MindSpore prints types") {
  CHECK(to_string(f32({2, 3})) == "Tensor[Float32](2, 3)");
  CHECK(to_string(abs_tensor(DType::Int64, {})) == "Tensor[Int64]()");
  CHECK(to_string(abs_scalar(ScalarKind::Int)) == "Int64");
  CHECK(to_string(abs_const(int64_t{3})) == "Int64=3");
  CHECK(to_string(abs_const(0.5)) == "Float32=0.5");
  CHECK(to_string(abs_const(true)) == "Bool=True");
  CHECK(to_string(abs_const(std::string("s"))) == "String=\"s\"");
  CHECK(to_string(abs_const(ir::NoneValue{})) == "None");
  CHECK(to_string(abs_tuple({f32({2}), abs_scalar(ScalarKind::Float)})) == "(Tensor[Float32](2), Float32)");
  CHECK(to_string(abs_tuple({f32({2})})) == "(Tensor[Float32](2),)");
  CHECK(to_string(abs_tuple({})) == "()");
  CHECK(to_string(abstract_of_constant(ir::PrimRef{kernels::Prim::add, {}})) == "Func");
  CHECK(to_string(AbsValue(AbsEnv{})) == "Env");
  CHECK(to_string(AbsValue(AbsState{})) == "State");
  CHECK(to_string(AbsValue(AbsAny{})) == "Any");
  CHECK(to_string(abstract_of_constant(ir::tensor_from_values(DType::Float64, {2}, {1, 2}))) == "Tensor[Float64](2)");
}

TEST_CASE("abstract: equality distinguishes constants, kinds, shapes and function identities") {
  CHECK(abs_const(int64_t{3}) == abs_const(int64_t{3}));
  CHECK(abs_const(int64_t{3}) != abs_const(int64_t{4}));
  CHECK(abs_const(int64_t{1}) != abs_const(true));  // same number, other kind
  CHECK(abs_const(int64_t{3}) != abs_scalar(ScalarKind::Int));
  CHECK(f32({2, 3}) != f32({3, 2}));
  CHECK(f32({2}) != abs_tensor(DType::Float64, {2}));
  ir::IrModule m;
  ir::FuncGraph* g = m.new_graph("g");
  ir::FuncGraph* h = m.new_graph("h");
  CHECK(abs_graph_func(g) == abs_graph_func(g));
  CHECK(abs_graph_func(g) != abs_graph_func(h));
  CHECK(abstract_of_constant(ir::PrimRef{kernels::Prim::reduce_sum, {{"axes", std::vector<int64_t>{0}}}}) !=
        abstract_of_constant(ir::PrimRef{kernels::Prim::reduce_sum, {{"axes", std::vector<int64_t>{1}}}}));
  CHECK(identity_key(abs_graph_func(g)) != identity_key(abs_graph_func(h)));
}

TEST_CASE("abstract: join broadens scalar constants, unites functions and rejects differing tensors") {
  CHECK(*join(abs_const(int64_t{0}), abs_const(int64_t{0})) == abs_const(int64_t{0}));
  CHECK(*join(abs_const(int64_t{0}), abs_const(int64_t{1})) == abs_scalar(ScalarKind::Int));
  CHECK(*join(abs_const(int64_t{0}), abs_scalar(ScalarKind::Int)) == abs_scalar(ScalarKind::Int));
  CHECK(*join(AbsBottom{}, f32({2})) == f32({2}));
  CHECK(*join(f32({2}), AbsBottom{}) == f32({2}));
  CHECK(join(AbsAny{}, f32({2}))->is<AbsAny>());
  CHECK(*join(abs_tuple({abs_const(1.0), f32({2})}), abs_tuple({abs_const(2.0), f32({2})})) ==
        abs_tuple({abs_scalar(ScalarKind::Float), f32({2})}));

  ir::IrModule m;
  ir::FuncGraph* g = m.new_graph("g");
  ir::FuncGraph* h = m.new_graph("h");
  AbsValue both = *join(abs_graph_func(g), abs_graph_func(h));
  REQUIRE(both.is<AbsFunc>());
  CHECK(both.get_if<AbsFunc>()->callees.size() == 2);
  CHECK(*join(both, abs_graph_func(g)) == both);  // already in the set

  JoinFailure why;
  CHECK_FALSE(join(abs_tuple({abs_const(1.0), f32({2})}), abs_tuple({abs_const(1.0), f32({3})}), &why));
  CHECK(why.path == std::vector<size_t>{1});
  CHECK(why.left == "Tensor[Float32](2)");
  CHECK(why.right == "Tensor[Float32](3)");
  JoinFailure why2;
  CHECK_FALSE(join(abs_const(int64_t{1}), abs_const(1.0), &why2));
  CHECK(why2.left == "Int64=1");
  CHECK(why2.right == "Float32=1.0");
  CHECK_FALSE(join(f32({2}), abs_tensor(DType::Float16, {2})));
  CHECK_FALSE(join(abs_tuple({f32({2})}), abs_tuple({f32({2}), f32({2})})));
  CHECK_FALSE(join(f32({}), abs_scalar(ScalarKind::Float)));
}
