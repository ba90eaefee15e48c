// IndentLexer: Python's layout rules on top of the generated MSLLexer. The
// header lists what it does; this file keeps to that order.
#include "lang/indent_lexer.h"

#include <cstdio>

#include "lang/parser.h"
#include "MSLParser.h"
#include "lang/utf8.h"

namespace msl {

using antlr4::CommonToken;
using antlr4::Token;
using L = grammar::MSLLexer;
using P = grammar::MSLParser;

namespace {

bool is_compound_keyword(size_t type) {
  switch (type) {
    case L::IF: case L::ELIF: case L::ELSE: case L::WHILE: case L::FOR: case L::TRY:
    case L::EXCEPT: case L::FINALLY: case L::DEF: case L::CLASS: case L::WITH: case L::ASYNC:
      return true;
    default:
      return false;
  }
}

// "'if' statement", as in "Expected an indented block after 'if' statement".
std::string header_description(size_t type) {
  switch (type) {
    case L::DEF: return "function definition";
    case L::CLASS: return "class definition";
    case L::IF: return "'if' statement";
    case L::ELIF: return "'elif' statement";
    case L::ELSE: return "'else' statement";
    case L::WHILE: return "'while' statement";
    case L::FOR: return "'for' statement";
    case L::TRY: return "'try' statement";
    case L::EXCEPT: return "'except' statement";
    case L::FINALLY: return "'finally' statement";
    case L::WITH: return "'with' statement";
    default: return "'async' statement";
  }
}

char32_t opener_of(char32_t closer) { return closer == ')' ? '(' : closer == ']' ? '[' : '{'; }

std::string code_point_name(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  return buf;
}

bool printable(char32_t cp) {
  if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA1)) return false;
  if (cp == 0xAD || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
      (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB))
    return false;
  return true;
}

}  // namespace

Span token_span(const Token& t) {
  Span s;
  s.line = s.end_line = static_cast<uint32_t>(t.getLine());
  s.col = static_cast<uint32_t>(t.getCharPositionInLine() + 1);
  s.end_col = s.col + 1;
  size_t type = t.getType();
  if (type == Token::EOF || type == L::NEWLINE || type == P::INDENT || type == P::DEDENT) return s;
  std::string text = t.getText();
  uint32_t line = s.line, col = s.col;
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    utf8::decode(text, i, cp);
    if (cp == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  if (line == s.line && col == s.col) ++col;
  s.end_line = line;
  s.end_col = col;
  return s;
}

IndentLexer::IndentLexer(antlr4::CharStream* input, SourcePtr source, Options options)
    : lexer_(input), source_(std::move(source)), options_(options) {
  lexer_.removeErrorListeners();
  if (options_.start_line != 1 || options_.start_col != 1) {
    lexer_.setLine(options_.start_line);
    lexer_.setCharPositionInLine(options_.start_col - 1);
  }
}

void IndentLexer::error_at(size_t line, size_t col, size_t len, std::string message, std::string help,
                           const char* type) {
  Diagnostic d;
  d.source = source_;
  d.span.line = static_cast<uint32_t>(line);
  d.span.col = static_cast<uint32_t>(col);
  d.span.end_line = static_cast<uint32_t>(line);
  d.span.end_col = static_cast<uint32_t>(col + (len ? len : 1));
  d.message = std::move(message);
  d.help = std::move(help);
  d.error_type = type;
  errors_.push_back(std::move(d));
}

void IndentLexer::error(const Token& at, std::string message, std::string help, const char* type) {
  Span s = token_span(at);
  size_t len = s.end_line == s.line && s.end_col > s.col ? s.end_col - s.col : 1;
  error_at(s.line, s.col, len, std::move(message), std::move(help), type);
}

void IndentLexer::set_cutoff(size_t line, size_t col) {
  if (cutoff_.valid() && (cutoff_.line < line || (cutoff_.line == line && cutoff_.col <= col))) return;
  cutoff_.line = cutoff_.end_line = static_cast<uint32_t>(line);
  cutoff_.col = static_cast<uint32_t>(col);
  cutoff_.end_col = static_cast<uint32_t>(col + 1);
}

std::unique_ptr<CommonToken> IndentLexer::make(size_t type, std::string text, size_t line, size_t col0,
                                               size_t start, size_t stop) {
  // A synthetic token (empty text) has no input stream: CommonToken would
  // otherwise read its text from the stream at [start, stop].
  antlr4::CharStream* in = text.empty() ? nullptr : lexer_.getInputStream();
  auto t = std::make_unique<CommonToken>(std::make_pair<antlr4::TokenSource*, antlr4::CharStream*>(this, std::move(in)),
                                         type, Token::DEFAULT_CHANNEL, start, stop);
  t->setLine(line);
  t->setCharPositionInLine(col0);
  t->setText(std::move(text));
  return t;
}

void IndentLexer::consume_char() { lexer_.getInterpreter<antlr4::atn::LexerATNSimulator>()->consume(lexer_.getInputStream()); }

// ------------------------------------------------------------------ strings

std::unique_ptr<Token> IndentLexer::scan_string(std::unique_ptr<Token> start) {
  antlr4::CharStream* in = lexer_.getInputStream();
  std::string opening = start->getText();
  char32_t quote = static_cast<char32_t>(opening.back());
  bool triple = false;
  if (in->LA(1) == quote && in->LA(2) == quote) {
    consume_char();
    consume_char();
    triple = true;
  } else if (in->LA(1) == quote) {
    consume_char();  // the empty string '' or ""
    goto done;
  }
  for (;;) {
    size_t c = in->LA(1);
    if (c == Token::EOF) break;
    if (c == '\\') {
      consume_char();
      if (in->LA(1) != Token::EOF) consume_char();
      continue;
    }
    if (c == quote) {
      if (!triple) {
        consume_char();
        goto done;
      }
      if (in->LA(2) == quote && in->LA(3) == quote) {
        consume_char();
        consume_char();
        consume_char();
        goto done;
      }
      consume_char();
      continue;
    }
    if (c == '\n' && !triple) break;
    consume_char();
  }
  // Unterminated.
  {
    size_t stop = in->index() - 1;
    std::string text = in->getText(antlr4::misc::Interval(start->getStartIndex(), stop));
    auto t = make(L::STRING, text, start->getLine(), start->getCharPositionInLine(), start->getStartIndex(), stop);
    if (triple) {
      eof_in_triple_string_ = true;
      error_at(start->getLine(), start->getCharPositionInLine() + 1, opening.size() + 2,
               "Unterminated triple-quoted string literal (opened on line " + std::to_string(start->getLine()) + ").",
               std::string("close it with ") + (quote == '"' ? "\"\"\"" : "'''"));
      set_cutoff(start->getLine(), start->getCharPositionInLine() + 1);
    } else {
      error(*t, "Unterminated string literal.",
            std::string("close it with ") + static_cast<char>(quote) + " on the same line, or use a triple-quoted string");
    }
    return t;
  }
done:
  size_t stop = in->index() - 1;
  std::string text = in->getText(antlr4::misc::Interval(start->getStartIndex(), stop));
  auto t = make(L::STRING, std::move(text), start->getLine(), start->getCharPositionInLine(), start->getStartIndex(),
                stop);
  if (opening.find_first_of("bB") != std::string::npos) {
    error_at(start->getLine(), start->getCharPositionInLine() + 1, opening.size(),
             "Bytes literals are not supported in MSL.", "use a str literal (drop the 'b' prefix)");
  }
  return t;
}

// ------------------------------------------------------------- the driver

std::unique_ptr<Token> IndentLexer::nextToken() {
  while (pending_.empty()) {
    if (done_) {
      antlr4::CharStream* in = lexer_.getInputStream();
      return make(Token::EOF, "", lexer_.getLine(), lexer_.getCharPositionInLine(), in->index(), in->index() - 1);
    }
    std::unique_ptr<Token> t = lexer_.nextToken();
    size_t type = t->getType();
    switch (type) {
      case L::WS:
        if (at_line_start_ && t->getCharPositionInLine() == 0) indent_ws_ = t->getText();
        break;
      case L::COMMENT:
        break;
      case L::LINE_CONTINUATION:
        break;
      case L::NEWLINE:
        indent_ws_.clear();
        if (options_.expression_mode || !brackets_.empty() || at_line_start_) break;
        end_of_line(*t);
        break;
      case Token::EOF:
        end_of_input(*t);
        pending_.push_back(std::move(t));
        done_ = true;
        break;
      case L::STRING:
        significant(scan_string(std::move(t)));
        break;
      case L::ERROR_CHAR: {
        std::string text = t->getText();
        size_t i = 0;
        char32_t cp = 0;
        if (!text.empty()) utf8::decode(text, i, cp);
        if (cp == '\\') {
          if (lexer_.getInputStream()->LA(1) == Token::EOF) {
            eof_after_continuation_ = true;
            error(*t, "Unexpected end of file after line continuation character.");
          } else {
            error(*t, "Unexpected character after line continuation character.",
                  "a '\\' that continues a line must be the last character on it");
          }
        } else if (cp == 0) {
          error(*t, "Source code cannot contain null bytes.");
        } else if (!printable(cp)) {
          error(*t, "Invalid non-printable character " + code_point_name(cp) + ".");
        } else {
          error(*t, "Invalid character '" + text + "' (" + code_point_name(cp) + ").");
        }
        break;  // dropped
      }
      case L::INVALID_NUMBER: {
        std::string text = t->getText();
        std::string message = "Invalid decimal literal.";
        std::string help;
        char c1 = text.size() > 1 ? text[1] : 0;
        if (text.back() == 'j' || text.back() == 'J') {
          message = "Complex number literals are not supported in MSL.";
        } else if (text[0] == '0' && (c1 == 'x' || c1 == 'X')) {
          message = "Invalid hexadecimal literal.";
        } else if (text[0] == '0' && (c1 == 'o' || c1 == 'O')) {
          message = "Invalid octal literal.";
        } else if (text[0] == '0' && (c1 == 'b' || c1 == 'B')) {
          message = "Invalid binary literal.";
        } else if (text[0] == '0' && text.find_first_not_of("0123456789_") == std::string::npos) {
          message = "Leading zeros in decimal integer literals are not permitted.";
          help = "use an 0o prefix for octal integers";
        }
        error(*t, message, help);
        static_cast<CommonToken*>(t.get())->setType(L::INTEGER);
        significant(std::move(t));
        break;
      }
      default:
        significant(std::move(t));
        break;
    }
    prev_raw_type_ = type;
  }
  std::unique_ptr<Token> t = std::move(pending_.front());
  pending_.pop_front();
  return t;
}

void IndentLexer::significant(std::unique_ptr<Token> t) {
  size_t type = t->getType();
  if (at_line_start_ && !options_.expression_mode) {
    indentation(*t);
    if (done_) return;
  }
  if (at_line_start_) {
    first_type_ = type;
    first_line_ = t->getLine();
    line_has_colon_ = false;
  }
  at_line_start_ = false;
  switch (type) {
    case L::OPEN_PAREN: case L::OPEN_BRACK: case L::OPEN_BRACE:
      if (brackets_.size() >= static_cast<size_t>(kMaxNesting)) {
        error(*t, "Too many nested parentheses.",
              "at most " + std::to_string(kMaxNesting) + " brackets may be open at once");
        set_cutoff(t->getLine(), t->getCharPositionInLine() + 1);
        done_ = true;
        return;
      }
      brackets_.push_back({static_cast<char32_t>(t->getText()[0]), t->getLine(), t->getCharPositionInLine() + 1});
      break;
    case L::CLOSE_PAREN: case L::CLOSE_BRACK: case L::CLOSE_BRACE:
      if (!close_bracket(*t, static_cast<char32_t>(t->getText()[0]))) return;
      break;
    case L::COLON:
      if (brackets_.empty()) line_has_colon_ = true;
      break;
    default:
      break;
  }
  Span s = token_span(*t);
  last_type_ = type;
  last_line_ = s.end_line;
  last_end_col_ = s.end_col;
  pending_.push_back(std::move(t));
}

bool IndentLexer::close_bracket(const Token& t, char32_t ch) {
  char32_t open = opener_of(ch);
  std::string closer(1, static_cast<char>(ch));
  if (brackets_.empty()) {
    error(t, "Unmatched '" + closer + "'.", "remove it, or add the opening bracket it was meant to close");
    return false;
  }
  const Bracket& top = brackets_.back();
  if (top.ch == open) {
    brackets_.pop_back();
    return true;
  }
  std::string message = "Closing parenthesis '" + closer + "' does not match opening parenthesis '" +
                        std::string(1, static_cast<char>(top.ch)) + "'";
  if (top.line != t.getLine()) message += " on line " + std::to_string(top.line);
  error(t, message + ".");
  // Recover as if the brackets in between had been closed.
  size_t i = brackets_.size();
  while (i > 0 && brackets_[i - 1].ch != open) --i;
  if (i > 0) {
    brackets_.resize(i - 1);
  } else {
    brackets_.pop_back();
  }
  return true;
}

// ------------------------------------------------------------- indentation

void IndentLexer::empty_block(size_t line, size_t col) {
  pending_.push_back(make(P::INDENT, "", line, col - 1, 0, 0));
  pending_.push_back(make(P::DEDENT, "", line, col - 1, 0, 0));
}

void IndentLexer::indentation(const Token& first) {
  int col = 0, altcol = 0;
  for (char c : indent_ws_) {
    if (c == ' ') {
      ++col, ++altcol;
    } else if (c == '\t') {
      col = (col / 8 + 1) * 8;
      ++altcol;
    } else if (c == '\f') {
      col = altcol = 0;
    }
  }
  size_t line = first.getLine();
  size_t fcol = first.getCharPositionInLine() + 1;
  auto tab_error = [&] {
    error_at(line, 1, fcol > 1 ? fcol - 1 : 1, "Inconsistent use of tabs and spaces in indentation.",
             "indent with spaces only (4 per level)", "IndentationError");
  };
  if (block_expected_ && col <= levels_.back().col) {
    error_at(line, fcol, 1,
             "Expected an indented block after " + header_description(header_type_) + " on line " +
                 std::to_string(header_line_) + ".",
             "indent the body of the block (4 spaces), or write 'pass' if it is empty", "IndentationError");
    empty_block(line, fcol);
    block_expected_ = false;
  }
  const Level& top = levels_.back();
  if (col == top.col) {
    if (altcol != top.altcol) tab_error();
  } else if (col > top.col) {
    if (levels_.size() > static_cast<size_t>(kMaxNesting)) {
      error_at(line, fcol, 1, "Too many levels of indentation.",
               "at most " + std::to_string(kMaxNesting) + " nested blocks are allowed", "IndentationError");
      // The line before expects this block, which never comes: its errors
      // are consequences too.
      set_cutoff(header_line_ ? header_line_ : line, 1);
      done_ = true;
      return;
    }
    if (altcol <= top.altcol) tab_error();
    bool real = prev_ended_colon_ || header_missing_colon_;
    if (!real) error_at(line, fcol, 1, "Unexpected indent.", "remove the extra indentation", "IndentationError");
    levels_.push_back({col, altcol, !real});
    if (real) pending_.push_back(make(P::INDENT, "", line, 0, first.getStartIndex(), first.getStartIndex() - 1));
  } else {
    while (levels_.size() > 1 && col < levels_.back().col) {
      if (!levels_.back().phantom) {
        pending_.push_back(
            make(P::DEDENT, "", line, fcol - 1, first.getStartIndex(), first.getStartIndex() - 1));
      }
      levels_.pop_back();
    }
    if (col != levels_.back().col) {
      error_at(line, fcol, 1, "Unindent does not match any outer indentation level.",
               "indent this line like one of the enclosing blocks", "IndentationError");
      levels_.push_back({col, altcol, true});
    } else if (altcol != levels_.back().altcol) {
      tab_error();
    }
  }
  block_expected_ = prev_ended_colon_ = header_missing_colon_ = false;
}

void IndentLexer::end_of_line(const Token& nl) {
  pending_.push_back(make(L::NEWLINE, nl.getType() == Token::EOF ? "" : "\n", nl.getLine(),
                          nl.getCharPositionInLine(), nl.getStartIndex(), nl.getStopIndex()));
  bool compound = is_compound_keyword(first_type_);
  prev_ended_colon_ = last_type_ == L::COLON;
  block_expected_ = prev_ended_colon_ && compound;
  header_missing_colon_ = compound && !line_has_colon_;
  header_type_ = first_type_;
  header_line_ = first_line_;
  header_end_line_ = last_line_;
  header_end_col_ = last_end_col_;
  at_line_start_ = true;
  indent_ws_.clear();
}

void IndentLexer::end_of_input(const Token& eof) {
  if (prev_raw_type_ == L::LINE_CONTINUATION) eof_after_continuation_ = true;
  if (!brackets_.empty()) {
    eof_in_brackets_ = true;
    const Bracket& inner = brackets_.back();
    std::string help = "close it";
    if (brackets_.size() > 1) {
      help += " (it is inside the '" + std::string(1, static_cast<char>(brackets_.front().ch)) + "' opened on line " +
              std::to_string(brackets_.front().line) + ")";
    }
    error_at(inner.line, inner.col, 1, "'" + std::string(1, static_cast<char>(inner.ch)) + "' was never closed.", help);
    set_cutoff(brackets_.front().line, brackets_.front().col);
  }
  if (options_.expression_mode) return;
  if (!at_line_start_) end_of_line(eof);
  size_t line = eof.getLine(), col0 = eof.getCharPositionInLine();
  if (block_expected_) {
    eof_expecting_block_ = true;
    error_at(header_end_line_, header_end_col_, 1,
             "Expected an indented block after " + header_description(header_type_) + " on line " +
                 std::to_string(header_line_) + ".",
             "indent the body of the block (4 spaces), or write 'pass' if it is empty", "IndentationError");
    pending_.push_back(make(P::INDENT, "", header_end_line_, header_end_col_ - 1, 0, 0));
    pending_.push_back(make(P::DEDENT, "", header_end_line_, header_end_col_ - 1, 0, 0));
    block_expected_ = false;
  }
  while (levels_.size() > 1) {
    if (!levels_.back().phantom) pending_.push_back(make(P::DEDENT, "", line, col0, 0, 0));
    levels_.pop_back();
  }
}

}  // namespace msl
