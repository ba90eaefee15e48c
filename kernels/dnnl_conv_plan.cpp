// Convolution geometry and plan operands shared by the oneDNN convolutions
// (see dnnl_conv_plan.h).
#include "kernels/dnnl_conv_plan.h"

#include <fmt/format.h>

#include "kernels/blocked_layout.h"
#include "kernels/errors.h"

namespace msl::kernels {

ConvGeom conv_geometry(const char* op, const Dims& xs, const Dims& ws, const Attrs& attrs) {
  if (xs.size() != 4) throw ShapeError(fmt::format("{}: the input must be 4-D (N, C, H, W), got {}", op, xs.str()));
  if (ws.size() != 4)
    throw ShapeError(fmt::format("{}: the weight must be 4-D (O, C/groups, kh, kw), got {}", op, ws.str()));
  ConvGeom g;
  g.n = xs[0], g.c = xs[1], g.h = xs[2], g.w = xs[3];
  g.o = ws[0], g.kh = ws[2], g.kw = ws[3];
  g.groups = attrs.get_int("groups", 1);
  if (g.groups < 1) throw ValueError(fmt::format("{}: groups must be >= 1, got {}", op, g.groups));
  if (g.c % g.groups)
    throw ValueError(fmt::format("{}: groups={} does not divide the {} input channels", op, g.groups, g.c));
  if (g.o % g.groups)
    throw ValueError(fmt::format("{}: groups={} does not divide the {} output channels", op, g.groups, g.o));
  if (ws[1] * g.groups != g.c)
    throw ShapeError(fmt::format("{}: input has {} channels but the weight expects {} (groups={})", op, g.c,
                                 ws[1] * g.groups, g.groups));
  if (g.kh < 1 || g.kw < 1)
    throw ShapeError(fmt::format("{}: the kernel must not be empty, got weight {}", op, ws.str()));
  g.win = make_window(op, attrs, g.h, g.w, g.kh, g.kw, true);
  return g;
}

ForwardConvCall forward_conv_call(const char* op, const Dims& x, const Dims& w, const Attrs& attrs) {
  int64_t block = layout_block(op, attrs);
  ForwardConvCall c;
  c.g = conv_geometry(op, block ? logical_shape(op, "input", x, block, true) : x, w, attrs);
  c.x_block = block && x.size() == 5 ? block : 0;
  c.y_block = block;
  c.out_shape = block ? blocked_shape(op, "output", c.g.y_shape(), block) : c.g.y_shape();
  return c;
}

namespace onednn {

dnnl::memory::desc conv_weights_md(const Dims& shape, const Dims& strides, int64_t groups, dnnl::memory::data_type dt) {
  if (groups == 1) return strided_md(shape, strides, dt);
  Dims d{groups, shape[0] / groups, shape[1], shape[2], shape[3]};
  Dims s{strides[0] * (shape[0] / groups), strides[0], strides[1], strides[2], strides[3]};
  return strided_md(d, s, dt);
}

dnnl::algorithm conv_algorithm(const ConvGeom& g) {
  return g.win.ho >= 4 && g.win.wo >= 4 ? dnnl::algorithm::convolution_auto : dnnl::algorithm::convolution_direct;
}

dnnl::memory::desc tagged_md(const Dims& shape, dnnl::memory::data_type dt, dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(dnnl::memory::dims(shape.begin(), shape.end()), dt, tag);
}

dnnl::memory::desc any_md(const Dims& shape, dnnl::memory::data_type dt) {
  return tagged_md(shape, dt, dnnl::memory::format_tag::any);
}

Key& add_conv_geometry(Key& key, const ConvGeom& g) {
  key.add(g.n).add(g.c).add(g.h).add(g.w).add(g.o).add(g.kh).add(g.kw).add(g.groups);
  return key.add(g.win.sh).add(g.win.sw).add(g.win.dh).add(g.win.dw).add(g.win.pt).add(g.win.pb).add(g.win.pl).add(
      g.win.pr);
}

void ConvOperands::plan_operands(const dnnl::memory::desc (&user_md)[3], const dnnl::memory::desc (&inner_md)[3],
                                 const dnnl::memory::desc& scratch_md) {
  ScratchLayout layout;
  for (int i = 0; i < 3; ++i) {
    user[i] = unbound(user_md[i]);
    if (user_md[i] == inner_md[i]) continue;
    reordered[i] = true;
    inner[i] = unbound(inner_md[i]);
    offset[i] = layout.add(inner_md[i].get_size());
    fast[i] = BlockedCopy::plan(user_md[i], inner_md[i]);
    if (!fast[i].ok()) reorder[i] = i < 2 ? dnnl::reorder(user[i], inner[i]) : dnnl::reorder(inner[i], user[i]);
  }
  scratchpad_offset = layout.add(scratch_md.get_size());
  scratchpad = unbound(scratch_md);
  scratch_bytes = layout.total;
}

void ConvOperands::bind_operands(const Tensor* const (&t)[3], const Scratch& scratch, const dnnl::memory* (&args)[3]) {
  for (int i = 0; i < 3; ++i) {
    bind(user[i], t[i]->raw());
    args[i] = &user[i];
    if (!reordered[i]) continue;
    bind(inner[i], scratch.at(offset[i]));
    args[i] = &inner[i];
    if (i == 2) continue;
    if (fast[i].ok())
      fast[i].to_blocked(static_cast<const float*>(t[i]->raw()), reinterpret_cast<float*>(scratch.at(offset[i])));
    else
      execute(reorder[i], {{DNNL_ARG_FROM, &user[i]}, {DNNL_ARG_TO, &inner[i]}});
  }
  bind(scratchpad, scratch.at(scratchpad_offset));
}

void ConvOperands::finish_result() {
  if (!reordered[2]) return;
  if (fast[2].ok())
    fast[2].to_plain(static_cast<const float*>(inner[2].get_data_handle()), static_cast<float*>(user[2].get_data_handle()));
  else
    execute(reorder[2], {{DNNL_ARG_FROM, &inner[2]}, {DNNL_ARG_TO, &user[2]}});
}

}  // namespace onednn
}  // namespace msl::kernels
