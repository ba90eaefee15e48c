// The native module `msl._summary`: TensorBoard event files for
// msl.train.summary (SummaryRecord, SummaryCollector) and `msl summary`.
//
//   open_writer(dir, prefix, suffix) -> (id, path)   a new event file
//   write_summary(id, step, values)  one Summary event; values: a list of
//                                    (kind, tag, value), kind "scalar"
//                                    (a number or a one-element Tensor),
//                                    "image", "histogram" or "tensor" (a Tensor)
//   write_graph(id, step, nodes)     one GraphDef event; nodes: a list of
//                                    (name, op, [input names], shape or None)
//   flush(id), close(id)             write and fsync (close: then forget id)
//   read_events(path) -> [(wall_time, step, file_version or None,
//                          graph nodes or None, [(tag, kind, payload), ...])]
//       payload: scalar float; image (height, width, colorspace, png bytes
//       count); histogram (min, max, num, sum, sum_squares, [limits],
//       [counts]); tensor (dtype name, shape tuple, [values])
//   check_file(path) -> (records, truncated_tail)   framing and CRCs only
//
// Writers are kept by id in a process-wide table: MSL has no bytes type and
// the file must stay open between calls. Errors: a failed system call is
// the OSError subclass Python raises; a corrupt file or a value that
// cannot be summarized, a ValueError naming the problem.
#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>

#include "interp/builtins/builtins.h"
#include "interp/core/native_args.h"
#include "interp/summary/event_file.h"
#include "interp/summary/summary_events.h"
#include "interp/tensor/tensor_object.h"

namespace msl {

namespace {

using summary::EventFileWriter;

struct Writers {
  std::mutex mu;
  std::map<int64_t, std::unique_ptr<EventFileWriter>> open;
  int64_t next = 1;
};
Writers& writers() {
  // Destroyed at exit, closing (flushing) the files a program left open.
  static Writers w;
  return w;
}

EventFileWriter& writer_of(Interp& I, const Value& id) {
  int64_t n = arg_index(I, id);
  std::lock_guard<std::mutex> lock(writers().mu);
  auto it = writers().open.find(n);
  if (it == writers().open.end()) raise_value_error(I, fmt::format("no open event file with id {} (closed?)", n));
  return *it->second;
}

std::string str_arg(Interp& I, const Value& v, const char* what) {
  if (!v.is(Kind::Str)) raise_type_error(I, fmt::format("{} must be a str, not {}", what, I.type_name(v)));
  const std::string& s = v.as<Str>()->s;
  if (s.find('\0') != std::string::npos) raise_value_error(I, fmt::format("{}: embedded null character", what));
  return s;
}

const std::vector<Value>& items_of(Interp& I, const Value& v, const char* what) {
  if (v.is(Kind::List)) return v.as<List>()->items;
  if (v.is(Kind::Tuple)) return v.as<Tuple>()->items;
  raise_type_error(I, fmt::format("{} must be a list or tuple, not {}", what, I.type_name(v)));
}

template <class F>
auto summary_call(Interp& I, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const summary::SystemError& e) {
    raise_os_error(I, e.err, e.path);
  } catch (const summary::FormatError& e) {
    raise_value_error(I, e.what());
  } catch (const std::invalid_argument& e) {
    raise_value_error(I, e.what());
  } catch (...) {
    raise_current_kernel_error(I);
  }
}

const kernels::Tensor& tensor_value(Interp& I, const Value& v, const std::string& tag) {
  if (is_tracer(v))
    raise_type_error(I, fmt::format("summary '{}': the value is a tensor being traced; summaries record the values "
                                    "of a run",
                                    tag));
  if (!is_tensor(v)) raise_type_error(I, fmt::format("summary '{}': expected a Tensor, not {}", tag, I.type_name(v)));
  return tensor_of(v);
}

Value f_open_writer(Interp& I, Args& a, Object*) {
  Value v[3];
  bind_positional(I, "open_writer", a, 3, 3, v);
  std::string dir = str_arg(I, v[0], "open_writer() dir"), prefix = str_arg(I, v[1], "open_writer() prefix"),
              suffix = str_arg(I, v[2], "open_writer() suffix");
  auto w = summary_call(I, [&] { return std::make_unique<EventFileWriter>(dir, prefix, suffix); });
  std::string path = w->path();
  std::lock_guard<std::mutex> lock(writers().mu);
  int64_t id = writers().next++;
  writers().open[id] = std::move(w);
  return new_tuple({Value::integer(id), str_value(path)});
}

Value f_write_summary(Interp& I, Args& a, Object*) {
  Value v[3];
  bind_positional(I, "write_summary", a, 3, 3, v);
  EventFileWriter& w = writer_of(I, v[0]);
  int64_t step = arg_index(I, v[1]);
  summary::SummaryBuilder b;
  for (const Value& item : items_of(I, v[2], "write_summary() values")) {
    const auto& kv = items_of(I, item, "a summary value");
    if (kv.size() != 3) raise_type_error(I, "a summary value must be a (kind, tag, value) triple");
    std::string kind = str_arg(I, kv[0], "a summary kind"), tag = str_arg(I, kv[1], "a summary tag");
    const Value& x = kv[2];
    if (kind == "scalar") {
      double d;
      if (x.is_int() || x.is_float() || x.is_bool()) {
        d = arg_float(I, x);
      } else {
        const kernels::Tensor& t = tensor_value(I, x, tag);
        if (t.numel() != 1)
          raise_value_error(I, fmt::format("summary '{}': a scalar needs one element, got shape {}", tag, t.shape().str()));
        d = summary_call(I, [&] { return t.item(); });
      }
      b.add_scalar(tag, d);
    } else if (kind == "image" || kind == "histogram" || kind == "tensor") {
      const kernels::Tensor& t = tensor_value(I, x, tag);
      summary_call(I, [&] {
        if (kind == "image") b.add_image(tag, t);
        else if (kind == "histogram") b.add_histogram(tag, t);
        else b.add_tensor(tag, t);
      });
    } else {
      raise_value_error(I, fmt::format("unknown summary kind '{}' (scalar, image, histogram or tensor)", kind));
    }
  }
  std::string event = b.event(summary::wall_time_now(), step);
  summary_call(I, [&] { w.write_event(event); });
  return Value::none();
}

Value f_write_graph(Interp& I, Args& a, Object*) {
  Value v[3];
  bind_positional(I, "write_graph", a, 3, 3, v);
  EventFileWriter& w = writer_of(I, v[0]);
  int64_t step = arg_index(I, v[1]);
  std::vector<summary::GraphNode> nodes;
  for (const Value& item : items_of(I, v[2], "write_graph() nodes")) {
    const auto& f = items_of(I, item, "a graph node");
    if (f.size() != 4) raise_type_error(I, "a graph node must be a (name, op, inputs, shape) tuple");
    summary::GraphNode n{str_arg(I, f[0], "a node name"), str_arg(I, f[1], "a node op"), {}, {}, false};
    for (const Value& in : items_of(I, f[2], "a node's inputs")) n.inputs.push_back(str_arg(I, in, "a node input"));
    if (!f[3].is_none()) {
      n.has_shape = true;
      for (const Value& d : items_of(I, f[3], "a node's shape")) n.shape.push_back(arg_index(I, d));
    }
    nodes.push_back(std::move(n));
  }
  std::string event = summary::graph_event(summary::wall_time_now(), step, nodes);
  summary_call(I, [&] { w.write_event(event); });
  return Value::none();
}

Value f_flush(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "flush", a, 1, 1, v);
  EventFileWriter& w = writer_of(I, v[0]);
  summary_call(I, [&] { w.flush(); });
  return Value::none();
}

Value f_close(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "close", a, 1, 1, v);
  EventFileWriter& w = writer_of(I, v[0]);
  summary_call(I, [&] { w.close(); });
  std::lock_guard<std::mutex> lock(writers().mu);
  writers().open.erase(arg_index(I, v[0]));
  return Value::none();
}

Value doubles(const std::vector<double>& xs) {
  std::vector<Value> out;
  out.reserve(xs.size());
  for (double x : xs) out.push_back(Value::number(x));
  return new_list(std::move(out));
}

Value ints(const std::vector<int64_t>& xs) {
  std::vector<Value> out;
  for (int64_t x : xs) out.push_back(Value::integer(x));
  return new_tuple(std::move(out));
}

Value payload(const summary::DecodedValue& d) {
  if (d.kind == "scalar") return Value::number(d.scalar);
  if (d.kind == "image")
    return new_tuple({Value::integer(d.height), Value::integer(d.width), Value::integer(d.colorspace),
                      Value::integer(static_cast<int64_t>(d.png.size()))});
  if (d.kind == "histogram")
    return new_tuple({Value::number(d.min), Value::number(d.max), Value::number(d.num), Value::number(d.sum),
                      Value::number(d.sum_squares), doubles(d.bucket_limit), doubles(d.bucket)});
  if (d.kind == "tensor") return new_tuple({str_value(d.dtype), ints(d.shape), doubles(d.values)});
  return Value::none();
}

Value f_read_events(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "read_events", a, 1, 1, v);
  std::string path = str_arg(I, v[0], "read_events() path");
  auto events = summary_call(I, [&] { return summary::read_events(path); });
  std::vector<Value> out;
  for (const auto& e : events) {
    Value graph = Value::none();
    if (e.has_graph) {
      std::vector<Value> nodes;
      for (const auto& n : e.graph_nodes) {
        std::vector<Value> inputs;
        for (const auto& in : n.inputs) inputs.push_back(str_value(in));
        nodes.push_back(new_tuple({str_value(n.name), str_value(n.op), new_list(std::move(inputs)),
                                   n.has_shape ? ints(n.shape) : Value::none()}));
      }
      graph = new_list(std::move(nodes));
    }
    std::vector<Value> values;
    for (const auto& d : e.values) values.push_back(new_tuple({str_value(d.tag), str_value(d.kind), payload(d)}));
    out.push_back(new_tuple({Value::number(e.wall_time), Value::integer(e.step),
                             e.file_version.empty() ? Value::none() : str_value(e.file_version), graph,
                             new_list(std::move(values))}));
  }
  return new_list(std::move(out));
}

Value f_check_file(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "check_file", a, 1, 1, v);
  std::string path = str_arg(I, v[0], "check_file() path");
  auto rf = summary_call(I, [&] { return summary::read_record_file(path); });
  return new_tuple({Value::integer(static_cast<int64_t>(rf.records.size())), Value::boolean(rf.truncated_tail)});
}

}  // namespace

void init_module_msl_summary(Interp& I, Module& m) {
  I.def_native(&m, "open_writer", f_open_writer);
  I.def_native(&m, "write_summary", f_write_summary);
  I.def_native(&m, "write_graph", f_write_graph);
  I.def_native(&m, "flush", f_flush);
  I.def_native(&m, "close", f_close);
  I.def_native(&m, "read_events", f_read_events);
  I.def_native(&m, "check_file", f_check_file);
}

}  // namespace msl
