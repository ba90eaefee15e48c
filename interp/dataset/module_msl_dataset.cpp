// The native module `msl._dataset`: the bindings of the data pipeline's C++
// core (dataset_core.h) for stdlib/msl/dataset.
//
// The MSL side owns the pipeline's structure (sources, map, shuffle, batch,
// repeat); this module does the heavy per-row work. Transform chains come
// in as lists of tuples, ("resize", h, w, "linear"), parsed here into
// ImageOps, and run over a chunk of rows on worker threads:
//  - `apply(ops, images, seeds, workers)` runs a chunk and waits;
//  - `submit(...)` returns a Job at once and `Job.result()` waits for it,
//    so the pipeline keeps chunks in flight while the training loop runs
//    (the prefetch queue is the list of pending Jobs on the MSL side).
// Row i of a chunk is handled by worker i % workers with seed seeds[i];
// results are placed by index, so the output never depends on scheduling.
// Batches of an array source through native maps take a shorter road:
// `batch_stream` (below) gathers, maps and stacks a whole batch in one job
// on the shared worker pool (dataset_pool.h).
// Workers see only kernels::Tensor values (thread-safe reference counts),
// never MSL objects; wrapping happens on the interpreter thread.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <future>

#include "interp/builtins/builtins.h"
#include "interp/dataset/dataset_core.h"
#include "interp/dataset/dataset_pool.h"
#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"

namespace msl {

namespace {

using dataset::DatasetError;
using dataset::ImageOp;
using kernels::Tensor;

// Per-interpreter state: the classes results are made of.
struct DatasetState final : NativeData {
  explicit DatasetState(Ref<Class> c) : NativeData(std::move(c)) {}
  Class* tensor_cls = nullptr;
  Ref<Class> job_cls;
  Ref<Class> batch_stream_cls;
};

struct JobObj final : NativeData {
  explicit JobObj(Ref<Class> c) : NativeData(std::move(c)) {}
  std::future<std::vector<Tensor>> done;
  Class* tensor_cls = nullptr;
  bool taken = false;
};

DatasetState* state(Object* data) { return static_cast<DatasetState*>(data); }

// Runs f() translating DatasetError (and kernel errors) into MSL exceptions.
template <class F>
auto checked(Interp& I, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const DatasetError& e) {
    raise_exc(I, "RuntimeError", e.what());
  } catch (...) {
    raise_current_kernel_error(I);
  }
}

// The engine works on the host: tensors come in through to_host and go out
// to the default device (both no-ops on the CPU).
Tensor tensor_arg(Interp& I, const Value& v, const char* fname) {
  if (!is_tensor(v)) raise_type_error(I, fmt::format("{}: expected a Tensor, got {}", fname, I.type_name(v)));
  return tensor_of(v).to_host();
}

Value wrap_tensor_out(Class* cls, Tensor&& t) {
  return wrap_tensor(cls, t.to_device(kernels::default_device()));
}

std::vector<Value> items_of(Interp& I, const Value& v, const char* fname) {
  if (v.is(Kind::List)) return v.as<List>()->items;
  if (v.is(Kind::Tuple)) return v.as<Tuple>()->items;
  raise_type_error(I, fmt::format("{}: expected a list or tuple, got {}", fname, I.type_name(v)));
}

std::vector<double> floats_of(Interp& I, const Value& v, const char* fname) {
  std::vector<double> out;
  for (auto& x : items_of(I, v, fname)) out.push_back(arg_float(I, x));
  return out;
}

Value wrap(DatasetState* s, Tensor&& t) { return wrap_tensor_out(s->tensor_cls, std::move(t)); }

// ("resize", h, w, "linear") and friends -> ImageOp; see vision.msl.
ImageOp parse_op(Interp& I, const Value& spec) {
  std::vector<Value> p = items_of(I, spec, "map");
  if (p.empty() || !p[0].is(Kind::Str)) raise_type_error(I, "map: a transform description must start with its name");
  const std::string& name = p[0].as<Str>()->s;
  auto need = [&](size_t n) {
    if (p.size() != n)
      raise_value_error(I, fmt::format("map: transform '{}' takes {} parameters, got {}", name, n - 1, p.size() - 1));
  };
  auto mode = [&](const Value& v) {
    std::string m = arg_str(I, v, "interpolation")->s;
    if (m == "linear" || m == "bilinear") return dataset::Interpolation::Linear;
    if (m == "nearest") return dataset::Interpolation::Nearest;
    raise_value_error(I, fmt::format("unsupported interpolation '{}' (use Inter.LINEAR or Inter.NEAREST)", m));
  };
  ImageOp op{};
  if (name == "decode") {
    need(1);
    op.kind = ImageOp::Decode;
  } else if (name == "resize") {
    need(4);
    op.kind = ImageOp::Resize;
    op.h = arg_index(I, p[1]);
    op.w = arg_index(I, p[2]);
    op.mode = mode(p[3]);
  } else if (name == "center_crop") {
    need(3);
    op.kind = ImageOp::CenterCrop;
    op.h = arg_index(I, p[1]);
    op.w = arg_index(I, p[2]);
  } else if (name == "random_crop") {
    need(6);
    op.kind = ImageOp::RandomCrop;
    op.h = arg_index(I, p[1]);
    op.w = arg_index(I, p[2]);
    std::vector<double> pad = floats_of(I, p[3], "RandomCrop padding");
    if (pad.size() != 4) raise_value_error(I, "RandomCrop: padding must have 4 values");
    for (int i = 0; i < 4; ++i) op.pad[i] = static_cast<int64_t>(pad[static_cast<size_t>(i)]);
    op.pad_if_needed = I.truthy(p[4]);
    op.fill = arg_float(I, p[5]);
  } else if (name == "random_hflip") {
    need(2);
    op.kind = ImageOp::RandomHFlip;
    op.prob = arg_float(I, p[1]);
  } else if (name == "random_crop_decode_resize") {
    need(7);
    op.kind = ImageOp::RandomCropDecodeResize;
    op.h = arg_index(I, p[1]);
    op.w = arg_index(I, p[2]);
    std::vector<double> scale = floats_of(I, p[3], "scale"), ratio = floats_of(I, p[4], "ratio");
    if (scale.size() != 2 || ratio.size() != 2 || scale[0] > scale[1] || ratio[0] > ratio[1] || scale[0] < 0 ||
        ratio[0] <= 0)
      raise_value_error(I, "RandomCropDecodeResize: scale and ratio must be (min, max) ranges, ratio > 0");
    op.scale_lo = scale[0], op.scale_hi = scale[1], op.ratio_lo = ratio[0], op.ratio_hi = ratio[1];
    op.mode = mode(p[5]);
    op.max_attempts = static_cast<int>(arg_index(I, p[6]));
  } else if (name == "rescale") {
    need(3);
    op.kind = ImageOp::Rescale;
    op.a = arg_float(I, p[1]);
    op.b = arg_float(I, p[2]);
  } else if (name == "normalize") {
    need(3);
    op.kind = ImageOp::Normalize;
    op.mean = floats_of(I, p[1], "Normalize mean");
    op.std = floats_of(I, p[2], "Normalize std");
  } else if (name == "hwc2chw") {
    need(1);
    op.kind = ImageOp::HWC2CHW;
  } else if (name == "type_cast") {
    need(2);
    op.kind = ImageOp::TypeCast;
    op.dtype = dtype_arg(I, p[1], "TypeCast");
  } else {
    raise_value_error(I, fmt::format("map: unknown transform '{}'", name));
  }
  if ((op.kind == ImageOp::Resize && (op.h <= 0 || op.w < 0)) ||
      ((op.kind == ImageOp::CenterCrop || op.kind == ImageOp::RandomCrop ||
        op.kind == ImageOp::RandomCropDecodeResize) &&
       (op.h <= 0 || op.w <= 0)))
    raise_value_error(I, fmt::format("{}: size must be positive, got ({}, {})", name, op.h, op.w));
  return op;
}

struct ChunkArgs {
  std::vector<ImageOp> ops;
  std::vector<Tensor> rows;
  std::vector<uint64_t> seeds;
  int workers = 1;
};

ChunkArgs chunk_args(Interp& I, Args& a, const char* fname) {
  Value v[4];
  bind_args(I, fname, a, {"ops", "images", "seeds", "num_workers"}, 4, v);
  ChunkArgs c;
  for (auto& s : items_of(I, v[0], fname)) c.ops.push_back(parse_op(I, s));
  for (auto& t : items_of(I, v[1], fname)) c.rows.push_back(tensor_arg(I, t, fname));
  for (auto& s : items_of(I, v[2], fname)) c.seeds.push_back(static_cast<uint64_t>(arg_index(I, s)));
  if (c.seeds.size() != c.rows.size())
    raise_value_error(I, fmt::format("{}: {} seeds for {} images", fname, c.seeds.size(), c.rows.size()));
  int64_t w = arg_index(I, v[3]);
  if (w < 1 || w > 256) raise_value_error(I, fmt::format("num_parallel_workers must be in 1..256, got {}", w));
  c.workers = static_cast<int>(w);
  return c;
}

Value wrap_all(DatasetState* s, std::vector<Tensor>&& rows) {
  std::vector<Value> out;
  out.reserve(rows.size());
  for (auto& t : rows) out.push_back(wrap(s, std::move(t)));
  return new_list(std::move(out));
}

// ------------------------------------------------------------- natives

Value f_apply(Interp& I, Args& a, Object* data) {
  ChunkArgs c = chunk_args(I, a, "apply");
  return wrap_all(state(data),
                  checked(I, [&] { return dataset::run_chunk(c.ops, std::move(c.rows), c.seeds, c.workers); }));
}

Value f_submit(Interp& I, Args& a, Object* data) {
  ChunkArgs c = chunk_args(I, a, "submit");
  Ref<JobObj> job(new JobObj(state(data)->job_cls));
  job->tensor_cls = state(data)->tensor_cls;
  job->done = dataset::submit_chunk(std::move(c.ops), std::move(c.rows), std::move(c.seeds), c.workers);
  return job.value();
}

Value job_result(Interp& I, Args& a, Object*) {
  if (a.pos.empty() || !a.pos[0].is(Kind::NativeData) || !dynamic_cast<JobObj*>(a.pos[0].obj()))
    raise_type_error(I, "result() requires a Job");
  auto* job = static_cast<JobObj*>(a.pos[0].obj());
  if (job->taken) raise_value_error(I, "Job.result(): the result was already taken");
  job->taken = true;
  std::vector<Tensor> rows = checked(I, [&] { return job->done.get(); });
  std::vector<Value> out;
  for (auto& t : rows) out.push_back(wrap_tensor_out(job->tensor_cls, std::move(t)));
  return new_list(std::move(out));
}

// ------------------------------------------------------------- fused batches
//
// batch_stream(columns, stages, order, batch_size, drop_remainder, workers,
// prefetch): the batches of an array source whose rows are `order`, through
// map() stages [(column, ops), ...] in pipeline order. The MSL side draws
// the seeds of random stages (random_stages() lists them) and submits
// batches itself; with no random stage take() keeps `prefetch` batches in
// flight on its own, so a batch costs the interpreter one call.

struct BatchStreamObj final : NativeData {
  explicit BatchStreamObj(Ref<Class> c) : NativeData(std::move(c)) {}
  std::shared_ptr<const dataset::BatchPlan> plan;
  std::vector<int64_t> random_stage_index;  // stage position of each seed slot
  std::vector<int64_t> order;
  size_t pos = 0;
  size_t batch = 1;
  bool drop_remainder = false;
  size_t prefetch = 1;
  std::deque<std::future<std::vector<Tensor>>> pending;
  Class* tensor_cls = nullptr;

  size_t next_rows() const {
    size_t left = order.size() - pos;
    if (left >= batch) return batch;
    return drop_remainder ? 0 : left;
  }
  void submit(std::vector<std::vector<uint64_t>> seeds) {
    size_t n = next_rows();
    std::vector<int64_t> rows(order.begin() + static_cast<std::ptrdiff_t>(pos),
                              order.begin() + static_cast<std::ptrdiff_t>(pos + n));
    pending.push_back(dataset::submit_batch(plan, std::move(rows), std::move(seeds)));
    pos += n;
  }
  void fill() {
    while (plan->random_stages == 0 && pending.size() < prefetch && next_rows() > 0) submit({});
  }
};

BatchStreamObj* stream_self(Interp& I, Args& a, const char* fname) {
  if (a.pos.empty() || !a.pos[0].is(Kind::NativeData) || !dynamic_cast<BatchStreamObj*>(a.pos[0].obj()))
    raise_type_error(I, fmt::format("{}() requires a BatchStream", fname));
  return static_cast<BatchStreamObj*>(a.pos[0].obj());
}

Value f_batch_stream(Interp& I, Args& a, Object* data) {
  const char* fname = "batch_stream";
  Value v[7];
  bind_positional(I, fname, a, 7, 7, v);
  auto plan = std::make_shared<dataset::BatchPlan>();
  for (auto& c : items_of(I, v[0], fname)) {
    const Tensor& t = tensor_arg(I, c, fname);
    if (t.ndim() < 1) raise_value_error(I, "batch_stream: a column must have at least one axis");
    if (!plan->columns.empty() && t.dim(0) != plan->columns[0].dim(0))
      raise_value_error(I, fmt::format("batch_stream: columns have {} and {} rows", plan->columns[0].dim(0), t.dim(0)));
    plan->columns.push_back(checked(I, [&] { return t.contiguous(); }));
  }
  Ref<BatchStreamObj> s(new BatchStreamObj(state(data)->batch_stream_cls));
  for (auto& st : items_of(I, v[1], fname)) {
    std::vector<Value> p = items_of(I, st, fname);
    if (p.size() != 2) raise_value_error(I, "batch_stream: a stage is (column, ops)");
    dataset::BatchStage stage;
    int64_t col = arg_index(I, p[0]);
    if (col < 0 || col >= static_cast<int64_t>(plan->columns.size()))
      raise_value_error(I, fmt::format("batch_stream: column {} out of range", col));
    stage.column = static_cast<int>(col);
    for (auto& spec : items_of(I, p[1], fname)) stage.ops.push_back(parse_op(I, spec));
    if (std::any_of(stage.ops.begin(), stage.ops.end(), [](const ImageOp& op) { return op.is_random(); })) {
      stage.seed_slot = plan->random_stages++;
      s->random_stage_index.push_back(static_cast<int64_t>(plan->stages.size()));
    }
    plan->stages.push_back(std::move(stage));
  }
  int64_t n = plan->columns.empty() ? 0 : plan->columns[0].dim(0);
  for (auto& x : items_of(I, v[2], fname)) {
    int64_t i = arg_index(I, x);
    if (i < 0 || i >= n) raise_exc(I, "IndexError", fmt::format("batch_stream: row {} out of range for {} rows", i, n));
    s->order.push_back(i);
  }
  int64_t bs = arg_index(I, v[3]), workers = arg_index(I, v[5]), prefetch = arg_index(I, v[6]);
  if (bs < 1) raise_value_error(I, fmt::format("batch_stream: batch_size must be positive, got {}", bs));
  if (workers < 1 || workers > 256)
    raise_value_error(I, fmt::format("num_parallel_workers must be in 1..256, got {}", workers));
  if (prefetch < 1) raise_value_error(I, fmt::format("batch_stream: prefetch must be positive, got {}", prefetch));
  if (plan->columns.empty() && !s->order.empty()) raise_value_error(I, "batch_stream: no columns");
  plan->workers = static_cast<int>(workers);
  s->batch = static_cast<size_t>(bs);
  s->drop_remainder = I.truthy(v[4]);
  s->prefetch = static_cast<size_t>(prefetch);
  s->tensor_cls = state(data)->tensor_cls;
  s->plan = std::move(plan);
  return s.value();
}

Value stream_random_stages(Interp& I, Args& a, Object*) {
  BatchStreamObj* s = stream_self(I, a, "random_stages");
  std::vector<Value> out;
  for (int64_t i : s->random_stage_index) out.push_back(Value::integer(i));
  return new_list(std::move(out));
}

Value stream_next_rows(Interp& I, Args& a, Object*) {
  return Value::integer(static_cast<int64_t>(stream_self(I, a, "next_rows")->next_rows()));
}

Value stream_in_flight(Interp& I, Args& a, Object*) {
  return Value::integer(static_cast<int64_t>(stream_self(I, a, "in_flight")->pending.size()));
}

// submit(seeds): the next batch, seeds[k] holding one seed per row for the
// k-th random stage.
Value stream_submit(Interp& I, Args& a, Object*) {
  BatchStreamObj* s = stream_self(I, a, "submit");
  if (a.pos.size() != 2) raise_type_error(I, "submit() takes the seed lists");
  if (s->next_rows() == 0) raise_value_error(I, "submit(): no rows left to batch");
  std::vector<std::vector<uint64_t>> seeds;
  for (auto& list : items_of(I, a.pos[1], "submit")) {
    seeds.emplace_back();
    for (auto& x : items_of(I, list, "submit")) seeds.back().push_back(static_cast<uint64_t>(arg_index(I, x)));
  }
  checked(I, [&] { s->submit(std::move(seeds)); });
  return Value();
}

// take(): the columns of the oldest batch in flight, or None at the end.
Value stream_take(Interp& I, Args& a, Object*) {
  BatchStreamObj* s = stream_self(I, a, "take");
  checked(I, [&] { s->fill(); });
  if (s->pending.empty()) return Value();
  auto job = std::move(s->pending.front());
  s->pending.pop_front();
  checked(I, [&] { s->fill(); });  // the workers go on while the caller trains on this batch
  std::vector<Tensor> cols = checked(I, [&] { return job.get(); });
  std::vector<Value> out;
  out.reserve(cols.size());
  for (auto& t : cols) out.push_back(wrap_tensor_out(s->tensor_cls, std::move(t)));
  return new_list(std::move(out));
}

// check_ops(ops): raises for a transform description batch_stream or
// apply would reject (map() calls it at construction).
Value f_check_ops(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "check_ops", a, 1, 1, v);
  for (auto& spec : items_of(I, v[0], "map")) parse_op(I, spec);
  return Value();
}

Value f_read_idx(Interp& I, Args& a, Object* data) {
  Value v[1];
  bind_positional(I, "read_idx", a, 1, 1, v);
  std::string path = arg_str(I, v[0], "path")->s;
  return wrap(state(data), checked(I, [&] { return dataset::read_idx(path); }));
}

Value f_read_cifar10(Interp& I, Args& a, Object* data) {
  Value v[1];
  bind_positional(I, "read_cifar10", a, 1, 1, v);
  std::vector<std::string> files;
  for (auto& f : items_of(I, v[0], "read_cifar10")) files.push_back(arg_str(I, f, "path")->s);
  Tensor images, labels;
  checked(I, [&] { dataset::read_cifar10(files, images, labels); });
  return new_tuple({wrap(state(data), std::move(images)), wrap(state(data), std::move(labels))});
}

// read_file(path, gunzip=False): the file's bytes as a 1-D uint8 tensor,
// remembered as the file's so that a decode error on them names it.
Value f_read_file(Interp& I, Args& a, Object* data) {
  Value v[2];
  bind_args(I, "read_file", a, {"path", "gunzip"}, 1, v);
  std::string path = arg_str(I, v[0], "path")->s;
  bool gunzip = given(v[1]) && I.truthy(v[1]);
  return wrap(state(data), checked(I, [&] {
                Tensor t = dataset::read_file_bytes(path, gunzip);
                dataset::remember_image_file(t, path);
                return t;
              }));
}

// _set_max_image_pixels(n) / _get_max_image_pixels(): the decoder's limit
// behind msl.dataset.config.set_max_image_pixels.
Value f_set_max_image_pixels(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "_set_max_image_pixels", a, 1, 1, v);
  int64_t n = arg_index(I, v[0]);
  if (n < 1) raise_value_error(I, fmt::format("set_max_image_pixels: expected a positive int, got {}", n));
  dataset::set_max_image_pixels(n);
  return Value();
}

Value f_get_max_image_pixels(Interp& I, Args& a, Object*) {
  bind_positional(I, "_get_max_image_pixels", a, 0, 0, nullptr);
  return Value::integer(dataset::max_image_pixels());
}

// _write_bytes(path, uint8_tensor, gzip=False): a test helper.
Value f_write_bytes(Interp& I, Args& a, Object*) {
  Value v[3];
  bind_args(I, "_write_bytes", a, {"path", "data", "gzip"}, 2, v);
  std::string path = arg_str(I, v[0], "path")->s;
  const Tensor& t = tensor_arg(I, v[1], "_write_bytes");
  bool gz = given(v[2]) && I.truthy(v[2]);
  checked(I, [&] { dataset::write_file_bytes(path, t, gz); });
  return Value();
}

Value f_list_image_folder(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "list_image_folder", a, 2, 2, v);
  std::string root = arg_str(I, v[0], "dataset_dir")->s;
  std::vector<std::string> exts;
  for (auto& e : items_of(I, v[1], "extensions")) exts.push_back(arg_str(I, e, "extension")->s);
  dataset::FolderListing l = checked(I, [&] { return dataset::list_image_folder(root, exts); });
  std::vector<Value> files, labels, classes;
  for (auto& f : l.files) files.push_back(str_value(f));
  for (int32_t x : l.labels) labels.push_back(Value::integer(x));
  for (auto& c : l.classes) classes.push_back(str_value(c));
  return new_tuple({new_list(std::move(files)), new_list(std::move(labels)), new_list(std::move(classes))});
}

// rows(t, indices): copies of t[i] for each index (sources fetch chunks).
Value f_rows(Interp& I, Args& a, Object* data) {
  Value v[2];
  bind_positional(I, "rows", a, 2, 2, v);
  Tensor t = tensor_arg(I, v[0], "rows").contiguous();
  if (t.ndim() < 1) raise_value_error(I, "rows: expected a tensor with at least one axis");
  kernels::Dims row_shape;
  for (int i = 1; i < t.ndim(); ++i) row_shape.push_back(t.dim(i));
  size_t row_bytes = static_cast<size_t>(row_shape.product()) * t.itemsize();
  std::vector<Value> out;
  for (auto& x : items_of(I, v[1], "rows")) {
    int64_t i = arg_index(I, x);
    if (i < 0 || i >= t.dim(0))
      raise_exc(I, "IndexError", fmt::format("rows: index {} out of range for {} rows", i, t.dim(0)));
    Tensor r(t.dtype(), row_shape);
    if (row_bytes)
      std::memcpy(r.raw(), static_cast<const char*>(t.raw()) + static_cast<size_t>(i) * row_bytes, row_bytes);
    out.push_back(wrap(state(data), std::move(r)));
  }
  return new_list(std::move(out));
}

Value f_stack(Interp& I, Args& a, Object* data) {
  Value v[1];
  bind_positional(I, "stack", a, 1, 1, v);
  std::vector<Tensor> items;
  for (auto& x : items_of(I, v[0], "stack")) items.push_back(tensor_arg(I, x, "batch"));
  return wrap(state(data), checked(I, [&] { return dataset::stack(items); }));
}

Value f_write_png(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "_write_png", a, 2, 2, v);
  std::string path = arg_str(I, v[0], "path")->s;
  const Tensor& t = tensor_arg(I, v[1], "_write_png");
  checked(I, [&] { dataset::write_png(path, t); });
  return Value();
}

Value f_write_jpeg(Interp& I, Args& a, Object*) {
  Value v[3];
  bind_args(I, "_write_jpeg", a, {"path", "image", "quality"}, 2, v);
  std::string path = arg_str(I, v[0], "path")->s;
  const Tensor& t = tensor_arg(I, v[1], "_write_jpeg");
  int64_t q = given(v[2]) ? arg_index(I, v[2]) : 95;
  if (q < 1 || q > 100) raise_value_error(I, fmt::format("_write_jpeg: quality must be in 1..100, got {}", q));
  checked(I, [&] { dataset::write_jpeg(path, t, static_cast<int>(q)); });
  return Value();
}

}  // namespace

void init_module_msl_dataset(Interp& I, Module& m) {
  Ref<Module> core = I.import_module("msl._core", nullptr);
  Value tensor_cls = core->get(I.intern("Tensor"));
  if (!tensor_cls.is(Kind::Class)) raise_exc(I, "ImportError", "msl._dataset: msl._core has no Tensor class");
  Ref<Class> state_cls = I.new_class("_DatasetState", I.cls_object.get(), "msl._dataset", true);
  Ref<DatasetState> st(new DatasetState(state_cls));
  st->tensor_cls = tensor_cls.as<Class>();
  st->job_cls = I.new_class("Job", I.cls_object.get(), "msl._dataset", true);
  I.def_method(st->job_cls.get(), "result", job_result);
  m.set(I.intern("Job"), st->job_cls.value());
  st->batch_stream_cls = I.new_class("BatchStream", I.cls_object.get(), "msl._dataset", true);
  I.def_method(st->batch_stream_cls.get(), "random_stages", stream_random_stages);
  I.def_method(st->batch_stream_cls.get(), "next_rows", stream_next_rows);
  I.def_method(st->batch_stream_cls.get(), "in_flight", stream_in_flight);
  I.def_method(st->batch_stream_cls.get(), "submit", stream_submit);
  I.def_method(st->batch_stream_cls.get(), "take", stream_take);
  m.set(I.intern("BatchStream"), st->batch_stream_cls.value());

  struct {
    const char* name;
    NativeFn fn;
  } const fns[] = {
      {"apply", f_apply},
      {"submit", f_submit},
      {"batch_stream", f_batch_stream},
      {"check_ops", f_check_ops},
      {"read_idx", f_read_idx},
      {"read_cifar10", f_read_cifar10},
      {"read_file", f_read_file},
      {"_set_max_image_pixels", f_set_max_image_pixels},
      {"_get_max_image_pixels", f_get_max_image_pixels},
      {"list_image_folder", f_list_image_folder},
      {"rows", f_rows},
      {"stack", f_stack},
      {"_write_png", f_write_png},
      {"_write_jpeg", f_write_jpeg},
      {"_write_bytes", f_write_bytes},
  };
  Ref<Object> data(st.get());
  for (auto& f : fns) I.def_native(&m, f.name, f.fn, data);
}

}  // namespace msl
