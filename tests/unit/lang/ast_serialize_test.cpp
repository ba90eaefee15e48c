// The AST's byte encoding (lang/ast_serialize.h): every standard-library
// module and a sampler of every node kind read back to the same tree (the
// same `ast::dump`, which prints every node with its position), and
// truncated or altered bytes never crash the reader.
#include "lang/ast_serialize.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "lang/parser.h"

using namespace msl;

namespace {

std::unique_ptr<ast::Module> parse_ok(const std::string& name, const std::string& text) {
  ParseResult r = parse_module(std::make_shared<SourceFile>(name, text));
  REQUIRE_MESSAGE(r.errors.empty(), name);
  return std::move(r.module);
}

// Every expression and statement kind, with positions, f-string fields and
// specs, all parameter shapes and constants of each kind.
const char* kSampler = R"(import a.b as c, d
from e import (f, g as h)
from m import *
x: int = -1 + 2 * 3 ** 4 // 5 % 6 @ y - (7 << 1 >> 2 | 3 ^ 4 & ~5)
s = f"{x!r:>{w}} and {y=} {{lit}}" "tail"
t = (1,), [2.5, *z], {'k': 1, **q}, {1, 2}, ..., None, True, False, 0 if 0 else 'str\n'
u = [i for i in range(3) if i if not i], {i for i in z}, {k: v for k, v in q.items()}, list(j for j in z)
v = a.b[1:2, ::3, ..., None][c](1, *d, k=2, **e) < 3 <= 4 is not None and 5 in z or 6 not in z
w = lambda p, q=1, *r, s, t=2, **u: p
@dec
@dec2(1)
def fn(a: int, b=2, *args, c, d: str = 'x', **kw) -> int:
    """doc"""
    global G
    def inner():
        nonlocal a
        a += 1
        del a
    for i, (j, *k) in enumerate(z):
        if i:
            continue
        elif j:
            break
        else:
            pass
    else:
        pass
    while a:
        a -= 1
    else:
        pass
    try:
        raise ValueError('v') from None
    except (TypeError, ValueError) as e:
        raise
    except Exception:
        pass
    else:
        assert a, 'msg'
    finally:
        return
    return a
class K(Base):
    y = 1
    def m(self):
        return super().m()
)";

}  // namespace

TEST_CASE("the AST encoding reads back every node kind and every standard-library module") {
  auto sampler = parse_ok("sampler.msl", kSampler);
  SourcePtr other = std::make_shared<SourceFile>("other.msl", kSampler);
  std::unique_ptr<ast::Module> back = ast::deserialize(ast::serialize(*sampler), other);
  REQUIRE(back != nullptr);
  CHECK(back->source == other);  // positions refer to the text it was read for
  CHECK(ast::dump(*back) == ast::dump(*sampler));

  namespace fs = std::filesystem;
  fs::path stdlib = std::filesystem::path(MSL_STDLIB_DIR);
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(stdlib)) {
    if (entry.path().extension() != ".msl") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    auto m = parse_ok(entry.path().string(), text.str());
    auto read = ast::deserialize(ast::serialize(*m), m->source);
    REQUIRE_MESSAGE(read != nullptr, entry.path().string());
    CHECK_MESSAGE(ast::dump(*read) == ast::dump(*m), entry.path().string());
    ++files;
  }
  CHECK(files > 50);
}

TEST_CASE("damaged encodings are refused, never followed") {
  auto m = parse_ok("sampler.msl", kSampler);
  std::string bytes = ast::serialize(*m);
  // Every strict prefix runs out of bytes; a trailing byte is left over.
  for (size_t n = 0; n < bytes.size(); ++n) CHECK(ast::deserialize(bytes.substr(0, n), m->source) == nullptr);
  CHECK(ast::deserialize(bytes + '\0', m->source) == nullptr);
  // Any altered byte gives no tree or some well-formed tree (a changed
  // name or position), which the checksummed cache container never lets
  // through anyway; what matters is that the reader stays in bounds.
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char x : {0x01, 0x80, 0xff}) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(static_cast<unsigned char>(bad[i]) ^ x);
      if (auto t = ast::deserialize(bad, m->source)) CHECK(!ast::dump(*t).empty());
    }
  }
  // Nesting far past anything the parser makes is refused before it could
  // exhaust the stack: a version, one statement, then 100000 `-(` prefixes.
  std::string deep = bytes.substr(0, 1) + "\x01";  // version 1, one statement
  deep += static_cast<char>(ast::StmtKind::Expr);
  deep += std::string(4, '\x01');  // its span
  for (int i = 0; i < 100000; ++i) {
    deep += static_cast<char>(static_cast<int>(ast::ExprKind::Unary) + 1);
    deep += std::string(4, '\x01');
    deep += static_cast<char>(ast::UnaryOp::Neg);
  }
  CHECK(ast::deserialize(deep, m->source) == nullptr);
}
