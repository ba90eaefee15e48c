// The fingerprint of a callable's live objects (interp/graph/graph_disk_cache.h),
// the key of the disk cache of compiled graphs: the same program built in
// two interpreters has one fingerprint; what a compiled graph reads (a
// Cell's hyperparameter, a global its code names, a closure cell, a
// non-Parameter tensor's elements, a Parameter's shape) changes it; what it
// does not read (Parameter values, a global no function names, a local that
// shadows a global's name) leaves it; objects the walk cannot describe make
// it fail; cycles end.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "interp/graph/graph_disk_cache.h"
#include "interp/core/interp.h"
#include "interp/tensor/tensor_object.h"

using namespace msl;

namespace {

const char* kNet = R"(
import msl
from msl import nn, ops, Tensor, Parameter

FACTOR = 2.0
OTHER = 1
out = 5


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 2)
        self.bias = Parameter(Tensor([0.5, -0.5], msl.float32), name="extra_bias")
        self.scale = 0.1
        self.table = Tensor([1.0, 2.0], msl.float32)

    def construct(self, x):
        out = self.dense(x) * self.scale + self.bias
        return out * FACTOR + self.table


def make_adder(k):
    def add(x):
        return x + k
    return add


net = Net()
adder = make_adder(3.0)
)";

struct Script {
  Interp I;
  explicit Script(const std::string& source) : I(options()) { run(source); }
  static Interp::Options options() {
    Interp::Options o;
    o.stdlib_dir = std::string(MSL_STDLIB_DIR);
    o.write_stdout = [](std::string_view) {};
    return o;
  }
  void run(const std::string& code) {
    try {
      I.run_source(std::make_shared<SourceFile>("t.msl", code), I.main_module());
    } catch (MslError& e) {
      FAIL(I.format_exception(e.exc));
    }
  }
  Fingerprint of(const char* name) { return fingerprint_of(I, I.main_module()->get(I.intern(name))); }
};

}  // namespace

TEST_CASE("the same program in two interpreters has one fingerprint; Parameters are listed in walk order") {
  Script a(kNet), b(kNet);
  Fingerprint fa = a.of("net"), fb = b.of("net");
  REQUIRE_MESSAGE(fa.ok, fa.why);
  REQUIRE(fb.ok);
  CHECK(fa.digest == fb.digest);
  CHECK(fa.digest.size() == 32);
  // Attributes are walked sorted by name: `_cells` (the Dense's weight and
  // bias) before `bias`; both interpreters list them alike.
  REQUIRE(fa.params.size() == 3);
  REQUIRE(fb.params.size() == 3);
  const char* want[] = {"dense.weight", "dense.bias", "extra_bias"};
  for (size_t i = 0; i < 3; ++i) {
    CHECK(tensor_obj(fa.params[i])->param->name == want[i]);
    CHECK(tensor_obj(fb.params[i])->param->name == want[i]);
  }
  CHECK(a.of("adder").digest == b.of("adder").digest);
  CHECK(a.of("adder").digest != fa.digest);
}

TEST_CASE("what a compiled graph reads changes the fingerprint; what it does not read leaves it") {
  Script s(kNet);
  const std::string base = s.of("net").digest;
  auto after = [&](const std::string& code) {
    s.run(code);
    return s.of("net").digest;
  };
  // Not read by any graph: Parameter values, an unnamed global, a global
  // whose name only a local of construct shares.
  CHECK(after("net.bias.set_data(Tensor([7.0, 8.0], msl.float32))") == base);
  CHECK(after("OTHER = 2") == base);
  CHECK(after("out = 6") == base);
  // Read: a hyperparameter, a global construct names, a tensor constant's
  // elements, a Parameter's shape; each change is a new fingerprint.
  std::string scaled = after("net.scale = 0.2");
  CHECK(scaled != base);
  CHECK(after("net.scale = 0.1") == base);  // back to the same value: the same key
  CHECK(after("FACTOR = 3.0") != base);
  s.run("FACTOR = 2.0");
  CHECK(after("net.table = Tensor([1.0, 2.5], msl.float32)") != base);
  s.run("net.table = Tensor([1.0, 2.0], msl.float32)");
  CHECK(after("net.bias.set_data(Tensor([7.0, 8.0, 9.0], msl.float32))") != base);
  s.run("net.bias.set_data(Tensor([7.0, 8.0], msl.float32))");
  CHECK(s.of("net").digest == base);
  // A closure cell's value.
  std::string adder = s.of("adder").digest;
  s.run("adder = make_adder(4.0)");
  CHECK(s.of("adder").digest != adder);
}

TEST_CASE("objects the walk cannot describe make the fingerprint fail; cycles end") {
  Script s(kNet);
  s.run("net.names = {'a', 'b'}");
  Fingerprint f = s.of("net");
  CHECK_FALSE(f.ok);
  CHECK(f.why == "a set object");
  CHECK(f.digest.empty());
  s.run("del net.names\nnet.me = net\nnet.pair = [net, (net.dense, net)]");
  Fingerprint g = s.of("net");
  REQUIRE_MESSAGE(g.ok, g.why);
  CHECK(g.params.size() == 3);  // each Parameter once, however often it is reached
}
