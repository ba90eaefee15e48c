// The native module `msl._comm`: what msl.communication needs from
// kernels/comm/communicator.h (the collectives themselves are primitives of
// msl._core).
//
//   init(backend)            backend: None or a name ("mpi", "nccl", ...)
//   release()                frees the groups, finalizes MPI
//   initialized() backend()  state: bool, "mpi" or "local"
//   rank(group) size(group) local_rank(group) local_size(group)
//   create_group(name, ranks) destroy_group(name)
//   timeout()                seconds a collective waits for its peers
#include <fmt/format.h>

#include "interp/builtins/builtins.h"
#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"
#include "kernels/comm/communicator.h"

namespace msl {

namespace {

namespace comm = kernels::comm;

std::string group_arg(Interp& I, const char* fname, Args& a) {
  Value v[1];
  bind_positional(I, fname, a, 1, 1, v);
  return arg_str(I, v[0], fmt::format("{}() argument 'group'", fname))->s;
}

Value f_init(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "init", a, 1, 1, v);
  std::string backend = v[0].is_none() ? "" : arg_str(I, v[0], "init() argument 'backend_name'")->s;
  kernel_call(I, [&] { comm::init(backend); });
  return Value::none();
}

Value f_release(Interp& I, Args& a, Object*) {
  bind_positional(I, "release", a, 0, 0, nullptr);
  kernel_call(I, [&] { comm::release(); });
  return Value::none();
}

Value f_initialized(Interp& I, Args& a, Object*) {
  bind_positional(I, "initialized", a, 0, 0, nullptr);
  return Value::boolean(comm::initialized());
}

Value f_backend(Interp& I, Args& a, Object*) {
  bind_positional(I, "backend", a, 0, 0, nullptr);
  return str_value(comm::backend_name());
}

Value f_timeout(Interp& I, Args& a, Object*) {
  bind_positional(I, "timeout", a, 0, 0, nullptr);
  return Value::number(comm::timeout_seconds());
}

// rank(group), size(group), local_rank(group), local_size(group).
Value group_query(Interp& I, Args& a, const char* fname, int (*query)(const std::string&)) {
  std::string g = group_arg(I, fname, a);
  return Value::integer(kernel_call(I, [&] { return query(g); }));
}

Value f_rank(Interp& I, Args& a, Object*) { return group_query(I, a, "rank", comm::rank); }
Value f_size(Interp& I, Args& a, Object*) { return group_query(I, a, "size", comm::size); }
Value f_local_rank(Interp& I, Args& a, Object*) { return group_query(I, a, "local_rank", comm::local_rank); }
Value f_local_size(Interp& I, Args& a, Object*) { return group_query(I, a, "local_size", comm::local_size); }

Value f_create_group(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "create_group", a, 2, 2, v);
  std::string name = arg_str(I, v[0], "create_group() argument 'group'")->s;
  const std::vector<Value>* items = nullptr;
  if (v[1].is(Kind::List)) items = &static_cast<List*>(v[1].obj())->items;
  if (v[1].is(Kind::Tuple)) items = &static_cast<Tuple*>(v[1].obj())->items;
  if (items == nullptr) raise_type_error(I, "create_group() argument 'rank_ids' must be a list of ints");
  std::vector<int> ranks;
  for (const Value& r : *items) {
    int64_t k = arg_index(I, r);
    if (k < INT32_MIN || k > INT32_MAX) raise_value_error(I, fmt::format("create_group: rank {} is out of range", k));
    ranks.push_back(static_cast<int>(k));
  }
  kernel_call(I, [&] { comm::create_group(name, ranks); });
  return Value::none();
}

Value f_destroy_group(Interp& I, Args& a, Object*) {
  std::string g = group_arg(I, "destroy_group", a);
  kernel_call(I, [&] { comm::destroy_group(g); });
  return Value::none();
}

}  // namespace

void init_module_msl_comm(Interp& I, Module& m) {
  struct {
    const char* name;
    NativeFn fn;
  } const fns[] = {
      {"init", f_init},
      {"release", f_release},
      {"initialized", f_initialized},
      {"backend", f_backend},
      {"timeout", f_timeout},
      {"rank", f_rank},
      {"size", f_size},
      {"local_rank", f_local_rank},
      {"local_size", f_local_size},
      {"create_group", f_create_group},
      {"destroy_group", f_destroy_group},
  };
  for (auto& f : fns) I.def_native(&m, f.name, f.fn);
}

}  // namespace msl
