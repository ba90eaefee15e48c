// to_blocked and from_blocked, and the blocked-layout helpers of
// blocked_layout.h.
//
// float32 moves through a cached oneDNN reorder between the plain
// descriptor (with the input's actual strides) and nChw16c / nChw8c: its
// JIT kernel is what the convolutions would otherwise run inside every
// call. Other dtypes and block sizes take copy_strided through a view of
// the plain side as [N, C/b, H, W, b]: channel c = cb*b + i is at plain
// offset cb*(b*sC) + i*sC, so the view has strides (sN, b*sC, sH, sW, sC)
// and any plain strides work. (The blocked side cannot be viewed as
// [N, C, H, W]: its channel index is not one stride.)
#include "kernels/blocked_layout.h"

#include <fmt/format.h>

#include "kernels/dnnl_common.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

namespace msl::kernels {

namespace {

using dnnl::memory;

const char* layout_name(int64_t block) { return block == 16 ? "nChw16c" : "nChw8c"; }

// A cached float32 reorder between a plain layout and nChw{b}c.
struct ReorderPlan {
  memory plain, blocked;
  dnnl::reorder prim;
  std::mutex mu;
};

onednn::PrimitiveCache<ReorderPlan>& reorder_plans() {
  static auto* c = new onednn::PrimitiveCache<ReorderPlan>(128);
  return *c;
}

// Reorders between the floating-point tensors `plain` (any positive
// strides) and the contiguous blocked `blocked`, in the direction
// `to_blocked`.
void dnnl_reorder(const Tensor& plain, const Tensor& blocked, int64_t block, bool to_blocked) {
  Dims dims = plain.shape();
  onednn::SerialScope serial(plain.numel() < onednn::kSerialElements);
  onednn::Key key;
  key.add(to_blocked ? 1 : 0).add(block).add(int64_t(plain.dtype())).add(onednn::thread_count()).add(dims);
  key.add(plain.strides());
  auto plan = reorder_plans().get(key, [&] {
    auto p = std::make_shared<ReorderPlan>();
    memory::data_type dt = onednn::dnnl_type(plain.dtype());
    p->plain = onednn::unbound(onednn::strided_md(dims, plain.strides(), dt));
    p->blocked = onednn::unbound(onednn::blocked_md(dims, block, dt));
    p->prim = to_blocked ? dnnl::reorder(p->plain, p->blocked) : dnnl::reorder(p->blocked, p->plain);
    return p;
  });
  std::lock_guard<std::mutex> lock(plan->mu);
  onednn::bind(plan->plain, plain.raw());
  onednn::bind(plan->blocked, blocked.raw());
  if (to_blocked)
    onednn::execute(plan->prim, {{DNNL_ARG_FROM, &plan->plain}, {DNNL_ARG_TO, &plan->blocked}});
  else
    onednn::execute(plan->prim, {{DNNL_ARG_FROM, &plan->blocked}, {DNNL_ARG_TO, &plan->plain}});
}

bool reorder_applies(const Tensor& t, int64_t block) {
  bool floating = t.dtype() == DType::Float32 || is_half(t.dtype());
  return floating && (block == 8 || block == 16) && t.numel() > 0;
}

}  // namespace

Tensor plain_as_blocked_view(const Tensor& plain, int64_t block) {
  const Dims& s = plain.strides();
  Dims shape{plain.dim(0), plain.dim(1) / block, plain.dim(2), plain.dim(3), block};
  return Tensor::view(plain, shape, Dims{s[0], block * s[1], s[2], s[3], s[1]}, plain.offset());
}

int64_t layout_block(const char* op, const Attrs& attrs) {
  std::string layout = attrs.get_str("layout", "");
  if (layout.empty()) return 0;
  if (layout == "nChw16c") return 16;
  if (layout == "nChw8c") return 8;
  throw ValueError(fmt::format("{}: layout must be \"\", \"nChw16c\" or \"nChw8c\", got \"{}\"", op, layout));
}

Dims logical_shape(const char* op, const char* what, const Dims& shape, int64_t block, bool plain_ok) {
  if (shape.size() == 4 && plain_ok) return shape;
  if (shape.size() != 5)
    throw ShapeError(fmt::format("{}: with layout {} the {} must be blocked (N, C/{}, H, W, {}){}, got {}", op,
                                 layout_name(block), what, block, block, plain_ok ? " or plain (N, C, H, W)" : "",
                                 shape.str()));
  if (shape[4] != block)
    throw ShapeError(fmt::format("{}: the {} {} has blocks of {} channels but layout {} has {}", op, what, shape.str(),
                                 shape[4], layout_name(block), block));
  return {shape[0], shape[1] * block, shape[2], shape[3]};
}

Dims blocked_shape(const char* op, const char* what, const Dims& logical, int64_t block) {
  if (logical[1] % block)
    throw ShapeError(fmt::format("{}: layout {} needs the {}'s channels to be a multiple of {}, got {}", op,
                                 layout_name(block), what, block, logical.str()));
  return {logical[0], logical[1] / block, logical[2], logical[3], block};
}

void unblock_into(const Tensor& blocked, const Tensor& plain) {
  if (plain.numel() == 0) return;
  int64_t block = blocked.dim(4);
  if (reorder_applies(blocked, block) && plain.is_contiguous())
    dnnl_reorder(plain, blocked.contiguous(), block, false);
  else
    copy_strided(blocked, plain_as_blocked_view(plain, block));
}

Tensor unblock(const Tensor& blocked) {
  Tensor plain(blocked.dtype(), Dims{blocked.dim(0), blocked.dim(1) * blocked.dim(4), blocked.dim(2), blocked.dim(3)});
  unblock_into(blocked, plain);
  return plain;
}

void block_into(const Tensor& plain, const Tensor& blocked_out) {
  if (plain.numel() == 0) return;
  int64_t block = blocked_out.dim(4);
  if (reorder_applies(plain, block))
    dnnl_reorder(onednn::with_positive_strides(plain), blocked_out, block, true);
  else
    copy_strided(plain_as_blocked_view(plain, block), blocked_out);
}

namespace onednn {

dnnl::memory::desc blocked_md(const Dims& logical, int64_t block, dnnl::memory::data_type dt) {
  memory::dims d(logical.begin(), logical.end());
  return memory::desc(d, dt, block == 16 ? memory::format_tag::nChw16c : memory::format_tag::nChw8c);
}

}  // namespace onednn

// ------------------------------------------------------------- primitives

void infer_to_blocked(const InferArgs& args) {
  const char* op = "to_blocked";
  const Dims& xs = args.in[0].shape;
  int64_t block = args.attrs.get_int("block", 0);
  if (xs.size() != 4) throw ShapeError(fmt::format("{}: the input must be 4-D (N, C, H, W), got {}", op, xs.str()));
  if (block < 1) throw ValueError(fmt::format("{}: block must be >= 1, got {}", op, block));
  if (xs[1] % block)
    throw ShapeError(
        fmt::format("{}: block {} does not divide the {} channels of the input {}", op, block, xs[1], xs.str()));
  args.out[0] = TensorSpec{args.in[0].dtype, Dims{xs[0], xs[1] / block, xs[2], xs[3], block}};
}

void cpu_to_blocked(const KernelArgs& args) {
  if (args.out[0].numel() == 0) return;
  block_into(args.in[0], args.out[0]);
}

void infer_from_blocked(const InferArgs& args) {
  const Dims& xs = args.in[0].shape;
  if (xs.size() != 5)
    throw ShapeError(fmt::format("from_blocked: the input must be 5-D (N, C/b, H, W, b), got {}", xs.str()));
  args.out[0] = TensorSpec{args.in[0].dtype, Dims{xs[0], xs[1] * xs[4], xs[2], xs[3]}};
}

void cpu_from_blocked(const KernelArgs& args) { unblock_into(args.in[0], args.out[0]); }

}  // namespace msl::kernels
