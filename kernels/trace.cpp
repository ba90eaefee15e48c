#include "kernels/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string_view>
#include <vector>

#include "kernels/json_text.h"
#include "kernels/op_site.h"

namespace msl::kernels {

namespace trace_detail {
std::atomic<bool> enabled{false};
}

namespace {

// What an event needs, kept raw while recording (a kernel's name is its
// primitive, its arguments its input shapes and site): formatting waits
// for stop_trace, so a recorded kernel costs two clock reads and a copy.
constexpr int kShapesKept = 4;
struct Event {
  std::string name;  // empty for a primitive's kernel
  Prim prim = Prim::add;
  const char* category = "";
  int64_t start_ns = 0, dur_ns = 0;
  uint32_t tid = 0;
  const std::string* site_file = nullptr;
  uint32_t site_line = 0;
  const std::string* scope = nullptr;  // the Cell (kernels/op_site.h)
  int n_inputs = 0;  // shapes kept (the first kShapesKept; -1: none, use args)
  Dims inputs[kShapesKept];
  std::string args;
};

std::mutex g_mu;
std::vector<Event> g_events;
std::atomic<uint32_t> g_next_tid{1};

// Small, stable thread numbers for the timeline's rows.
uint32_t thread_number() {
  thread_local uint32_t tid = g_next_tid.fetch_add(1);
  return tid;
}

void with_site(Event& e) {
  if (const OpSite* s = current_op_site()) {
    e.site_file = s->file();
    e.site_line = s->line();
    e.scope = s->scope();
  } else {
    e.scope = current_cell_scope();
  }
}

void append(Event&& e) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_events.push_back(std::move(e));
}

std::string site_text(const Event& e) {
  return e.site_file ? fmt::format("{}:{}", *e.site_file, e.site_line) : "-";
}

std::string kernel_table(const std::vector<Event>& events) {
  struct Row {
    std::string name;
    int64_t calls = 0, ns = 0;
  };
  std::map<std::string, Row> by_name;
  int64_t total = 0;
  for (const Event& e : events) {
    if (std::string_view(e.category) != "kernel") continue;
    std::string name = e.name.empty() ? prim_name(e.prim) : e.name;
    Row& r = by_name[name];
    r.name = name;
    ++r.calls;
    r.ns += e.dur_ns;
    total += e.dur_ns;
  }
  std::vector<Row> rows;
  for (auto& [name, r] : by_name) rows.push_back(r);
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ns > b.ns; });
  std::string out = fmt::format("{:<36}{:>10}{:>12}{:>12}{:>8}\n", "kernel", "calls", "total ms", "mean us", "%");
  for (const Row& r : rows)
    out += fmt::format("{:<36}{:>10}{:>12.3f}{:>12.2f}{:>7.1f}%\n", r.name, r.calls, r.ns / 1e6,
                       r.ns / 1e3 / static_cast<double>(r.calls), total ? 100.0 * static_cast<double>(r.ns) / total : 0.0);
  out += fmt::format("{:<36}{:>10}{:>12.3f}\n", "all kernels", "", total / 1e6);
  return out;
}

// The kernels' time by Cell scope, as MindInsight lists it: for each scope
// that ran kernels or holds scopes that did, its total (its own kernels and
// its sub-Cells') and its own; slowest total first, the share of all
// kernel time.
std::string cell_table(const std::vector<Event>& events) {
  struct Row {
    int64_t calls = 0, self_ns = 0, total_ns = 0;
  };
  std::map<std::string, Row> rows;
  int64_t total = 0;
  for (const Event& e : events) {
    if (std::string_view(e.category) != "kernel") continue;
    total += e.dur_ns;
    std::string scope = e.scope ? *e.scope : "(no Cell)";
    Row& own = rows[scope];
    ++own.calls;
    own.self_ns += e.dur_ns;
    // Every enclosing scope ("Default/a-A/b-B" is in "Default/a-A" and "Default").
    for (std::string prefix = scope;;) {
      rows[prefix].total_ns += e.dur_ns;
      size_t cut = prefix.rfind('/');
      if (cut == std::string::npos) break;
      prefix.resize(cut);
    }
  }
  std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second.total_ns != b.second.total_ns ? a.second.total_ns > b.second.total_ns : a.first < b.first;
  });
  std::string out = fmt::format("{:<60}{:>9}{:>12}{:>12}{:>8}\n", "cell", "kernels", "total ms", "self ms", "%");
  for (const auto& [scope, r] : sorted)
    out += fmt::format("{:<60}{:>9}{:>12.3f}{:>12.3f}{:>7.1f}%\n", scope, r.calls, r.total_ns / 1e6, r.self_ns / 1e6,
                       total ? 100.0 * static_cast<double>(r.total_ns) / total : 0.0);
  return out;
}

}  // namespace

int64_t trace_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void start_trace() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_events.clear();
  trace_detail::enabled.store(true, std::memory_order_relaxed);
}

void trace_event(std::string name, const char* category, int64_t start_ns, int64_t end_ns, std::string args_json) {
  Event e;
  e.name = std::move(name);
  e.category = category;
  e.start_ns = start_ns;
  e.dur_ns = end_ns - start_ns;
  e.tid = thread_number();
  e.n_inputs = -1;
  e.args = std::move(args_json);
  append(std::move(e));
}

void trace_kernel(Prim p, std::span<const Tensor> in, int64_t start_ns, int64_t end_ns) {
  Event e;
  e.prim = p;
  e.category = "kernel";
  e.start_ns = start_ns;
  e.dur_ns = end_ns - start_ns;
  e.tid = thread_number();
  e.n_inputs = static_cast<int>(std::min<size_t>(in.size(), kShapesKept));
  for (int i = 0; i < e.n_inputs; ++i) e.inputs[i] = in[static_cast<size_t>(i)].defined() ? in[static_cast<size_t>(i)].shape() : Dims{};
  with_site(e);
  append(std::move(e));
}

std::string stop_trace(std::string* table, std::string* cells) {
  trace_detail::enabled.store(false, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g_mu);
  if (table) *table = kernel_table(g_events);
  if (cells) *cells = cell_table(g_events);
  int64_t origin = g_events.empty() ? 0 : g_events.front().start_ns;
  for (const Event& e : g_events) origin = std::min(origin, e.start_ns);
  // Microseconds with nanosecond decimals, as the format expects.
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  out += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"msl\"}}";
  for (const Event& e : g_events) {
    std::string args = e.args;
    if (e.n_inputs >= 0) {
      std::string shapes;
      for (int i = 0; i < e.n_inputs; ++i) {
        // Two appends, not `(i ? " " : "") + str`: GCC 12 warns falsely
        // (-Wrestrict) on that operator+.
        if (i) shapes += ' ';
        shapes += e.inputs[i].str();
      }
      args = "\"inputs\": " + json_quote(shapes) + ", \"site\": " + json_quote(site_text(e));
      if (e.scope) args += ", \"scope\": " + json_quote(*e.scope);
    }
    out += fmt::format(",\n{{\"name\": {}, \"cat\": \"{}\", \"ph\": \"X\", \"pid\": 1, \"tid\": {}, \"ts\": {:.3f}, "
                       "\"dur\": {:.3f}, \"args\": {{{}}}}}",
                       json_quote(e.name.empty() ? prim_name(e.prim) : e.name), e.category, e.tid,
                       (e.start_ns - origin) / 1e3, e.dur_ns / 1e3, args);
  }
  out += "\n]}\n";
  g_events.clear();
  return out;
}

TraceSpan::TraceSpan(std::string name, const char* category) : name_(std::move(name)), category_(category) {
  if (tracing()) start_ = trace_clock_ns();
}

TraceSpan::~TraceSpan() {
  if (start_ < 0 || !tracing()) return;
  Event e;
  e.name = std::move(name_);
  e.category = category_;
  e.start_ns = start_;
  e.dur_ns = trace_clock_ns() - start_;
  e.tid = thread_number();
  e.n_inputs = 0;  // a span: its site only
  with_site(e);
  append(std::move(e));
}

}  // namespace msl::kernels
