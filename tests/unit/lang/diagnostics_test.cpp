// format_diagnostic / render_source_excerpt: the one format, carets lined up
// under tabs and wide characters.
#include <doctest/doctest.h>

#include "lang/diagnostics.h"
#include "lang_test_util.h"

using namespace msl;

namespace {
Diagnostic at(const std::string& text, Span span, std::string message, std::string help = {}) {
  Diagnostic d;
  d.source = test::source(text, "m.msl");
  d.span = span;
  d.message = std::move(message);
  d.help = std::move(help);
  return d;
}
}  // namespace

TEST_CASE("diagnostics: the format") {
  CHECK(format_diagnostic(at("a = 1\nb = foo(a)\n", {2, 5, 2, 11}, "Something is wrong.", "fix it")) ==
        "m.msl:2:5: error: Something is wrong.\n"
        "    b = foo(a)\n"
        "        ^^^^^^\n"
        "help: fix it\n");
  // No help line when there is no help; at least one caret.
  CHECK(format_diagnostic(at("x\n", {1, 2, 1, 2}, "End.")) ==
        "m.msl:1:2: error: End.\n"
        "    x\n"
        "     ^\n");
  // A multi-line span is underlined to the end of its first line.
  CHECK(format_diagnostic(at("s = '''a\nb'''\n", {1, 5, 2, 5}, "Multi.")) ==
        "m.msl:1:5: error: Multi.\n"
        "    s = '''a\n"
        "        ^^^^\n");
  // Without a position: just the message.
  Diagnostic none;
  none.message = "Usage.";
  CHECK(format_diagnostic(none) == "error: Usage.\n");
  Diagnostic warn = at("x\n", {1, 1, 1, 2}, "Careful.");
  warn.severity = Diagnostic::Severity::Warning;
  CHECK(format_diagnostic(warn) == "m.msl:1:1: warning: Careful.\n    x\n    ^\n");
}

TEST_CASE("diagnostics: tabs and wide characters keep the caret aligned") {
  SourceFile tabs("t.msl", "if x:\n\ty = bad\n");
  CHECK(render_source_excerpt(tabs, {2, 6, 2, 9}, 4) ==
        "            y = bad\n"
        "                ^^^\n");
  SourceFile wide("w.msl", "标签 = oops + 1\n");
  CHECK(render_source_excerpt(wide, {1, 6, 1, 10}, 2) ==
        "  标签 = oops + 1\n"
        "         ^^^^\n");
  // Invalid UTF-8 and control characters are never printed raw.
  SourceFile bad("b.msl", "x = '\xff\x07'\n");
  CHECK(render_source_excerpt(bad, {1, 6, 1, 7}, 0) ==
        "x = '\xef\xbf\xbd?'\n"
        "     ^\n");
  // Out of range: nothing.
  CHECK(render_source_excerpt(tabs, {9, 1, 9, 2}, 4) == "");
}

TEST_CASE("diagnostics: error types") {
  auto r = parse_module(test::source("if x:\n\ty = 1\n        z = 2\n"));
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].error_type == "IndentationError");
  CHECK(format_diagnostic(r.errors[0]) ==
        "test.msl:3:1: error: Inconsistent use of tabs and spaces in indentation.\n"
        "            z = 2\n"
        "    ^^^^^^^^\n"
        "help: indent with spaces only (4 per level)\n");
}
