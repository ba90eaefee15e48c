// The profiler's timeline (kernels/trace.h) of a real training run: a
// LeNet-shaped network trained by Model.train in graph mode with
// msl.Profiler, its trace.json parsed with the checkpoint library's JSON
// reader (independent of the writer) and checked: every event is a
// complete event with a name, category, thread, start and duration; every
// kernel and compiled-graph run that overlaps a training step lies inside
// it (the events nest); kernels name their source line (conv2d's is in
// the Conv2d layer: graph mode inlines the network); and the events
// inside a step cover at least 95% of its wall time (Model.train marks the
// host's parts, the callbacks and the network's call, as `host` spans;
// what is left is the interpreter between them). The Cells' table (cell_statistic.txt)
// agrees with the kernels' scopes in trace.json: each Cell's own time is
// the sum of its kernels', a Cell's total includes its sub-Cells', and
// conv2d's kernels belong to the conv layers' scopes.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>

#include "../temp_dir.h"
#include "interp/checkpoint/checkpoint.h"
#include "interp/core/interp.h"

using namespace msl;
namespace fs = std::filesystem;

namespace {

const char* kProgram =
    "import numpy as np\n"
    "import msl\n"
    "from msl import nn, Model\n"
    "import msl.dataset as ds\n"
    "msl.set_seed(1)\n"
    "np.random.seed(1)\n"
    "class LeNet(nn.Cell):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode='valid')\n"
    "        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode='valid')\n"
    "        self.pool = nn.MaxPool2d(2, 2)\n"
    "        self.relu = nn.ReLU()\n"
    "        self.flatten = nn.Flatten()\n"
    "        self.fc1 = nn.Dense(256, 120)\n"
    "        self.fc2 = nn.Dense(120, 10)\n"
    "    def construct(self, x):\n"
    "        x = self.pool(self.relu(self.conv1(x)))\n"
    "        x = self.pool(self.relu(self.conv2(x)))\n"
    "        return self.fc2(self.relu(self.fc1(self.flatten(x))))\n"
    "x = np.random.randn(256, 1, 28, 28).astype(np.float32)\n"
    "y = np.random.randint(0, 10, 256).astype(np.int32)\n"
    "data = ds.NumpySlicesDataset((x, y), column_names=['image', 'label'], shuffle=False).batch(64)\n"
    "net = LeNet()\n"
    "loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')\n"
    "model = Model(net, loss, nn.Momentum(net.trainable_params(), 0.01, 0.9))\n"
    "profiler = msl.Profiler(output_path=OUT)\n"
    "model.train(3, data)\n"
    "profiler.analyse()\n";

struct Event {
  std::string name, cat;
  int64_t tid = 0;
  double ts = 0, dur = 0;
  std::string site;
  std::string scope;
};

const checkpoint::Json* member(const checkpoint::Json& o, const std::string& key) {
  for (const checkpoint::JsonMember& m : o.members)
    if (m.first == key) return &m.second;
  return nullptr;
}

// Runs kProgram (after `prelude`) with the profiler writing to `dir`, and
// returns its trace.json parsed.
checkpoint::Json train_and_load(const fs::path& dir, const std::string& prelude) {
  std::string out;
  Interp::Options opts;
  opts.write_stdout = [&out](std::string_view s) { out += s; };
  opts.write_stderr = [&out](std::string_view s) { out += s; };
  opts.stdlib_dir = std::string(MSL_STDLIB_DIR);
  Interp I(std::move(opts));
  std::string program = "OUT = '" + dir.string() + "'\n" + prelude + kProgram;
  try {
    I.run_source(std::make_shared<SourceFile>((dir / "lenet.msl").string(), program));
  } catch (MslError& e) {
    FAIL(I.format_exception(e.exc));
  }
  std::ifstream f(dir / "trace.json");
  REQUIRE(f);
  std::stringstream text;
  text << f.rdbuf();
  return checkpoint::parse_json(text.str());
}

}  // namespace

TEST_CASE("profiler timeline of a LeNet training run") {
  msl::test::TempDir dir;
  msl::test::ScopedEnv no_cache("XDG_CACHE_HOME", "off");  // compile phases appear every run
  checkpoint::Json root = train_and_load(dir.path, "");
  const checkpoint::Json* list = member(root, "traceEvents");
  REQUIRE(list);
  std::vector<Event> events;
  for (const checkpoint::Json& e : list->items) {
    const checkpoint::Json* ph = member(e, "ph");
    REQUIRE(ph);
    if (ph->str == "M") continue;  // metadata: the process name
    CHECK(ph->str == "X");
    Event ev;
    REQUIRE(member(e, "name"));
    REQUIRE(member(e, "cat"));
    REQUIRE(member(e, "tid"));
    REQUIRE(member(e, "ts"));
    REQUIRE(member(e, "dur"));
    ev.name = member(e, "name")->str;
    ev.cat = member(e, "cat")->str;
    ev.tid = member(e, "tid")->integer;
    ev.ts = member(e, "ts")->number;
    ev.dur = member(e, "dur")->number;
    CHECK(ev.dur >= 0);
    if (const checkpoint::Json* args = member(e, "args")) {
      if (const checkpoint::Json* site = member(*args, "site")) ev.site = site->str;
      if (const checkpoint::Json* scope = member(*args, "scope")) ev.scope = scope->str;
    }
    events.push_back(ev);
  }
  auto count = [&](const std::string& cat) {
    return std::count_if(events.begin(), events.end(), [&](const Event& e) { return e.cat == cat; });
  };
  // 3 epochs of 4 batches; conv2d forward and both backward kernels ran;
  // the compiled step was compiled (its passes are compile events).
  CHECK(count("step") == 12);
  CHECK(count("graph") >= 12);
  CHECK(count("compile") >= 1);
  CHECK(count("data") >= 1);
  CHECK(std::any_of(events.begin(), events.end(), [](const Event& e) { return e.name == "conv2d_backprop_filter"; }));
  // Kernels on the interpreter's thread name the .msl line they came from
  // (the layer's, once graph mode inlined the network).
  int64_t main_tid = 0;
  for (const Event& e : events)
    if (e.cat == "step") main_tid = e.tid;
  for (const Event& e : events) {
    if (e.cat != "kernel" || e.tid != main_tid) continue;
    std::string what = e.name + " has no source line: " + e.site;
    CHECK_MESSAGE(e.site.find(".msl:") != std::string::npos, what);
  }
  CHECK(std::any_of(events.begin(), events.end(),
                    [](const Event& e) { return e.site.find("stdlib/msl/nn/layer/conv.msl:") != std::string::npos; }));

  std::vector<double> coverage;
  for (const Event& s : events) {
    if (s.cat != "step") continue;
    double a = s.ts, b = s.ts + s.dur;
    std::vector<std::pair<double, double>> inside;
    for (const Event& e : events) {
      if (&e == &s || e.tid != s.tid || e.ts >= b || e.ts + e.dur <= a) continue;
      // Nesting: whatever overlaps a step on its thread lies within it
      // (1 us of slack for the microsecond rounding of the two clocks' reads).
      std::string what = e.name + " in " + s.name;
      CHECK_MESSAGE(e.ts >= a - 1e-3, what);
      CHECK_MESSAGE(e.ts + e.dur <= b + 1e-3, what);
      inside.emplace_back(std::max(e.ts, a), std::min(e.ts + e.dur, b));
    }
    std::sort(inside.begin(), inside.end());
    double covered = 0, lo = -1, hi = -1;
    for (auto [x0, x1] : inside) {
      if (x0 > hi) {
        covered += hi - lo;
        lo = x0;
        hi = x1;
      } else {
        hi = std::max(hi, x1);
      }
    }
    covered += hi - lo;
    coverage.push_back(covered / s.dur);
  }
  REQUIRE(coverage.size() == 12);
  // The first step compiles (lowering and specialization are not spans
  // yet); the later ones are kernels and graph runs but for the
  // interpreter's calls between them. The median of the steady steps:
  std::vector<double> steady(coverage.begin() + 1, coverage.end());
  std::sort(steady.begin(), steady.end());
  double median = steady[steady.size() / 2];
  MESSAGE("median coverage of a step by its events: " << median);
  CHECK(median >= 0.95);
  CHECK(fs::exists(dir.path / "op_statistic.txt"));

  // The Cells' table against the kernels' scopes.
  std::map<std::string, double> own_ms;
  double all_ms = 0;
  for (const Event& e : events) {
    if (e.cat != "kernel") continue;
    own_ms[e.scope.empty() ? "(no Cell)" : e.scope] += e.dur / 1e3;
    all_ms += e.dur / 1e3;
    if (e.name == "conv2d" && e.tid == main_tid)
      CHECK_MESSAGE((e.scope.ends_with("/conv1-Conv2d") || e.scope.ends_with("/conv2-Conv2d")), e.scope);
  }
  std::ifstream cells(dir.path / "cell_statistic.txt");
  REQUIRE(cells);
  std::string line;
  std::getline(cells, line);  // header
  struct Row {
    double total = 0, self = 0;
  };
  std::map<std::string, Row> rows;
  while (std::getline(cells, line)) {
    std::istringstream ls(line);
    std::string name, pct;
    long kernels = 0;
    Row r;
    ls >> name >> kernels >> r.total >> r.self >> pct;
    if (name == "(no") {  // "(no Cell)"
      std::string rest;
      name = "(no Cell)";
      std::istringstream again(line.substr(line.find(')') + 1));
      again >> kernels >> r.total >> r.self;
    }
    rows[name] = r;
  }
  REQUIRE(rows.count("Default"));
  double tops = rows["Default"].total + (rows.count("(no Cell)") ? rows["(no Cell)"].total : 0);
  CHECK(tops == doctest::Approx(all_ms).epsilon(1e-3));
  bool conv1 = false, fc1 = false;
  for (const auto& [name, r] : rows) {
    INFO(name);
    CHECK(r.total >= r.self - 1e-3);
    CHECK(r.self == doctest::Approx(own_ms[name]).epsilon(1e-3).scale(1.0));
    conv1 = conv1 || name.ends_with("/conv1-Conv2d");
    fc1 = fc1 || name.ends_with("/fc1-Dense");
    // A Cell's total: its own kernels and its direct sub-Cells' totals.
    double children = 0;
    for (const auto& [other, o] : rows)
      if (other.size() > name.size() + 1 && other.starts_with(name + "/") &&
          other.find('/', name.size() + 1) == std::string::npos)
        children += o.total;
    if (name != "(no Cell)") CHECK(r.total == doctest::Approx(r.self + children).epsilon(1e-3).scale(1.0));
  }
  CHECK(conv1);
  CHECK(fc1);
}

TEST_CASE("the Cells' table in PyNative") {
  // The same training in PyNative: each Cell's construct runs in the
  // interpreter, which enters the Cell's scope; the conv layers' kernels
  // carry their scopes and the table lists them.
  msl::test::TempDir dir;
  checkpoint::Json root = train_and_load(dir.path, "import msl\nmsl.set_context(mode=msl.PYNATIVE_MODE)\n");
  int convs = 0;
  for (const checkpoint::Json& e : member(root, "traceEvents")->items) {
    const checkpoint::Json* name = member(e, "name");
    const checkpoint::Json* args = member(e, "args");
    if (!name || name->str != "conv2d" || !args) continue;
    const checkpoint::Json* scope = member(*args, "scope");
    REQUIRE(scope);
    CHECK_MESSAGE((scope->str.ends_with("/conv1-Conv2d") || scope->str.ends_with("/conv2-Conv2d")), scope->str);
    ++convs;
  }
  CHECK(convs >= 24);  // 12 steps, two conv layers, the forward pass
  std::ifstream cells(dir.path / "cell_statistic.txt");
  std::stringstream table;
  table << cells.rdbuf();
  CHECK(table.str().find("/conv1-Conv2d ") != std::string::npos);
  CHECK(table.str().find("/fc2-Dense ") != std::string::npos);
}
