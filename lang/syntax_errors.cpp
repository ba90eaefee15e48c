// SyntaxErrorStrategy: Python-like syntax error messages and line-based
// recovery. See syntax_errors.h for the rules; `message_for` below is the
// table of messages, most specific first.
#include "lang/syntax_errors.h"

#include "MSLParser.h"
#include "lang/indent_lexer.h"
#include "lang/utf8.h"

namespace msl {

using antlr4::Parser;
using antlr4::ParserRuleContext;
using antlr4::Token;
using antlr4::misc::IntervalSet;
using P = grammar::MSLParser;

namespace {

bool is_layout(size_t type) {
  return type == P::NEWLINE || type == P::INDENT || type == P::DEDENT || type == Token::EOF;
}

bool can_start_expression(size_t type) {
  switch (type) {
    case P::NAME: case P::INTEGER: case P::FLOAT_NUMBER: case P::STRING: case P::OPEN_PAREN:
    case P::OPEN_BRACK: case P::OPEN_BRACE: case P::MINUS: case P::ADD: case P::NOT_OP: case P::NOT:
    case P::LAMBDA: case P::NONE: case P::TRUE: case P::FALSE: case P::ELLIPSIS: case P::AWAIT:
    case P::STAR: case P::YIELD:
      return true;
    default:
      return false;
  }
}

bool can_end_expression(size_t type) {
  switch (type) {
    case P::NAME: case P::INTEGER: case P::FLOAT_NUMBER: case P::STRING: case P::CLOSE_PAREN:
    case P::CLOSE_BRACK: case P::CLOSE_BRACE: case P::NONE: case P::TRUE: case P::FALSE: case P::ELLIPSIS:
      return true;
    default:
      return false;
  }
}

// Tokens after which an operand must follow.
bool needs_operand_after(size_t type) {
  switch (type) {
    case P::ADD: case P::MINUS: case P::STAR: case P::DIV: case P::IDIV: case P::MOD: case P::AT:
    case P::POWER: case P::LEFT_SHIFT: case P::RIGHT_SHIFT: case P::AND_OP: case P::OR_OP: case P::XOR:
    case P::NOT_OP: case P::LESS_THAN: case P::GREATER_THAN: case P::EQUALS: case P::GT_EQ: case P::LT_EQ:
    case P::NOT_EQ_2: case P::AND: case P::OR: case P::NOT: case P::IN: case P::IS: case P::ASSIGN:
    case P::ADD_ASSIGN: case P::SUB_ASSIGN: case P::MULT_ASSIGN: case P::AT_ASSIGN: case P::DIV_ASSIGN:
    case P::MOD_ASSIGN: case P::AND_ASSIGN: case P::OR_ASSIGN: case P::XOR_ASSIGN: case P::LEFT_SHIFT_ASSIGN:
    case P::RIGHT_SHIFT_ASSIGN: case P::POWER_ASSIGN: case P::IDIV_ASSIGN: case P::IF: case P::ELIF:
    case P::WHILE: case P::ASSERT: case P::DEL: case P::ARROW:
      return true;
    default:
      return false;
  }
}

bool is_keyword(size_t type) { return type >= P::DEF && type <= P::AWAIT; }

// The keyword that starts the compound statement whose header is being
// parsed, or nullptr when the error is not in a header (in a block, or a
// simple statement).
const char* header_keyword(antlr4::RuleContext* ctx) {
  for (; ctx != nullptr; ctx = dynamic_cast<antlr4::RuleContext*>(ctx->parent)) {
    switch (ctx->getRuleIndex()) {
      case P::RuleSuite: case P::RuleSimple_stmt: case P::RuleSmall_stmt: case P::RuleLambdef:
      case P::RuleLambdef_nocond: case P::RuleAtom: case P::RuleTrailer:
        return nullptr;
      case P::RuleIf_stmt: return "if";
      case P::RuleElif_clause: return "elif";
      case P::RuleElse_clause: return "else";
      case P::RuleWhile_stmt: return "while";
      case P::RuleFor_stmt: return "for";
      case P::RuleTry_stmt: return "try";
      case P::RuleExcept_block: case P::RuleExcept_clause: return "except";
      case P::RuleFinally_clause: return "finally";
      case P::RuleFuncdef: return "def";
      case P::RuleClassdef: return "class";
      case P::RuleWith_stmt: return "with";
      default: break;
    }
  }
  return nullptr;
}

std::string quoted(Token* t) {
  if (t->getType() == P::NEWLINE) return "end of line";
  if (t->getType() == Token::EOF) return "end of file";
  std::string text = t->getText(), out;
  size_t i = 0, n = 0;
  while (i < text.size()) {
    size_t at = i;
    char32_t cp = 0;
    utf8::decode(text, i, cp);
    if (++n > 20) {
      out += "...";
      break;
    }
    if (cp == '\n') {
      out += "\\n";
    } else {
      out.append(text, at, i - at);
    }
  }
  return "'" + out + "'";
}

struct Message {
  std::string text, help;
  const char* type = "SyntaxError";
  bool at_previous_end = false;  // point just after the previous token
};

}  // namespace

void SyntaxErrorStrategy::report(Parser* recognizer, Token* t, ParserRuleContext* ctx, const IntervalSet& expected,
                                 Kind kind) {
  if (++seen_ > kMaxErrors) throw TooManySyntaxErrors();
  if (t == nullptr) t = recognizer->getCurrentToken();
  antlr4::TokenStream* tokens = recognizer->getTokenStream();
  size_t type = t->getType();
  if ((type == P::INDENT || type == P::DEDENT) && prior_ + out_->size() > 0) return;

  size_t index = t->getTokenIndex();
  Token* prev = nullptr;
  if (index != INVALID_INDEX && index > 0) prev = tokens->get(index - 1);
  size_t ptype = prev ? prev->getType() : Token::EOF;
  // First token of the logical line, and the one after it.
  Token* first = t;
  if (index != INVALID_INDEX) {
    size_t i = index;
    while (i > 0 && !is_layout(tokens->get(i - 1)->getType())) --i;
    first = tokens->get(i);
  }
  Token* second = nullptr;
  if (first->getTokenIndex() != INVALID_INDEX && first->getType() != Token::EOF)
    second = tokens->get(first->getTokenIndex() + 1);
  // Open brackets between the line start and the offending token.
  int depth = 0;
  if (index != INVALID_INDEX) {
    for (size_t i = first->getTokenIndex(); i < index; ++i) {
      size_t ty = tokens->get(i)->getType();
      if (ty == P::OPEN_PAREN || ty == P::OPEN_BRACK || ty == P::OPEN_BRACE) ++depth;
      if (ty == P::CLOSE_PAREN || ty == P::CLOSE_BRACK || ty == P::CLOSE_BRACE) --depth;
    }
  }
  bool line_ends_with_colon = false;
  if (first->getTokenIndex() != INVALID_INDEX) {
    size_t n = tokens->size();
    for (size_t i = first->getTokenIndex(); i + 1 < n; ++i) {
      if (is_layout(tokens->get(i + 1)->getType())) {
        line_ends_with_colon = tokens->get(i)->getType() == P::COLON;
        break;
      }
    }
  }
  const char* header = header_keyword(ctx);
  bool at_layout = is_layout(type);
  std::string first_text = first->getText();

  Message m;
  if (type == P::WALRUS) {
    m.text = "Assignment expressions (':=') are not supported in MSL.";
    m.help = "assign the value in a statement of its own first";
  } else if (type == P::INDENT) {
    m.text = "Unexpected indent.";
    m.type = "IndentationError";
  } else if (type == P::DEDENT) {
    m.text = "Unexpected unindent.";
    m.type = "IndentationError";
  } else if (first->getType() == P::NAME && (first_text == "match" || first_text == "case") && second &&
             !is_layout(second->getType()) && second->getType() != P::ASSIGN && second->getType() != P::DOT &&
             line_ends_with_colon) {
    m.text = "'" + first_text + "' statements are not supported in MSL.";
    m.help = "use an if/elif chain";
    t = first;
  } else if (first->getType() == P::NAME && first_text == "print" && t == second &&
             (type == P::STRING || type == P::NAME || type == P::INTEGER || type == P::FLOAT_NUMBER)) {
    m.text = "Missing parentheses in call to 'print'.";
    m.help = "write print(...)";
  } else if (header && expected.contains(static_cast<size_t>(P::COLON)) && type != P::ASSIGN &&
             (at_layout || (kind == Kind::Missing && !line_ends_with_colon))) {
    m.text = "Expected ':'.";
    m.help = std::string("add ':' at the end of the '") + header + "' line";
    m.at_previous_end = true;
  } else if (type == P::ASSIGN && (first->getType() == P::IF || first->getType() == P::ELIF ||
                                   first->getType() == P::WHILE || first->getType() == P::ASSERT)) {
    m.text = "Invalid syntax. Maybe you meant '==' instead of '='?";
  } else if (prev && needs_operand_after(ptype) && !can_start_expression(type)) {
    m.text = "Expected an expression after '" + prev->getText() + "'.";
    m.at_previous_end = at_layout;
  } else if (t == first && (type == P::ELSE || type == P::ELIF)) {
    m.text = "'" + t->getText() + "' does not follow an 'if' block at the same indentation.";
    if (type == P::ELSE) m.text = "'else' does not follow an 'if', 'for', 'while' or 'try' block at the same indentation.";
  } else if (t == first && (type == P::EXCEPT || type == P::FINALLY)) {
    m.text = "'" + t->getText() + "' does not follow a 'try' block at the same indentation.";
  } else if (expected.contains(static_cast<size_t>(P::EXCEPT)) && expected.contains(static_cast<size_t>(P::FINALLY))) {
    m.text = "Expected 'except' or 'finally' block.";
  } else if (is_keyword(type) && expected.contains(static_cast<size_t>(P::NAME)) && !can_start_expression(type)) {
    m.text = "'" + t->getText() + "' is a keyword and cannot be used as a name.";
  } else if (depth > 0 && can_start_expression(type) && can_end_expression(ptype) && type != P::STAR &&
             type != P::MINUS && type != P::ADD) {
    m.text = "Invalid syntax. Perhaps you forgot a comma?";
  } else if (expected.contains(static_cast<size_t>(P::ELSE)) && expected.size() == 1) {
    m.text = "Expected 'else' after 'if' expression.";
    m.at_previous_end = at_layout;
  } else if (kind == Kind::Missing && expected.size() == 1 && expected.getMinElement() != P::NEWLINE) {
    m.text = "Expected " + recognizer->getVocabulary().getDisplayName(expected.getMinElement()) + ".";
    m.at_previous_end = at_layout;
  } else if (expected.contains(static_cast<size_t>(P::IN)) && !expected.contains(static_cast<size_t>(P::NAME)) && type != P::IN) {
    m.text = "Expected 'in'.";
  } else if (expected.contains(static_cast<size_t>(P::IMPORT)) && expected.size() <= 3) {
    m.text = "Expected 'import'.";
  } else if (type == P::NEWLINE) {
    m.text = "Invalid syntax: the statement ends too early.";
    m.at_previous_end = true;
  } else if (type == Token::EOF && prev == nullptr) {
    m.text = "Expected an expression.";
  } else if (type == Token::EOF) {
    m.text = "Unexpected end of file.";
    m.at_previous_end = true;
  } else {
    m.text = "Invalid syntax at " + quoted(t) + ".";
  }

  Diagnostic d;
  d.source = source_;
  d.message = std::move(m.text);
  d.help = std::move(m.help);
  d.error_type = m.type;
  if (m.at_previous_end && prev) {
    Span s = token_span(*prev);
    d.span.line = d.span.end_line = s.end_line;
    d.span.col = s.end_col;
    d.span.end_col = s.end_col + 1;
  } else {
    d.span = token_span(*t);
    if (d.span.end_line != d.span.line) {
      d.span.end_line = d.span.line;
      d.span.end_col = d.span.col + 1;
    }
  }
  bool end = type == Token::EOF;
  if (type == P::DEDENT && index != INVALID_INDEX) {
    end = true;
    for (size_t i = index; i < tokens->size() && end; ++i) {
      size_t ty = tokens->get(i)->getType();
      end = ty == P::DEDENT || ty == Token::EOF;
    }
  }
  out_->push_back(std::move(d));
  at_end_.resize(out_->size() - 1, false);
  at_end_.push_back(end);
}

void SyntaxErrorStrategy::reportError(Parser* recognizer, const antlr4::RecognitionException& e) {
  if (inErrorRecoveryMode(recognizer)) return;
  beginErrorCondition(recognizer);
  IntervalSet expected;
  try {
    expected = e.getExpectedTokens();
  } catch (...) {
  }
  auto* ctx = dynamic_cast<ParserRuleContext*>(e.getCtx());
  if (ctx == nullptr) ctx = recognizer->getContext();
  Kind kind = dynamic_cast<const antlr4::NoViableAltException*>(&e) ? Kind::NoViableAlt : Kind::Mismatch;
  report(recognizer, e.getOffendingToken(), ctx, expected, kind);
}

void SyntaxErrorStrategy::reportUnwantedToken(Parser* recognizer) {
  if (inErrorRecoveryMode(recognizer)) return;
  beginErrorCondition(recognizer);
  report(recognizer, recognizer->getCurrentToken(), recognizer->getContext(), getExpectedTokens(recognizer),
         Kind::Unwanted);
}

void SyntaxErrorStrategy::reportMissingToken(Parser* recognizer) {
  if (inErrorRecoveryMode(recognizer)) return;
  beginErrorCondition(recognizer);
  report(recognizer, recognizer->getCurrentToken(), recognizer->getContext(), getExpectedTokens(recognizer),
         Kind::Missing);
}

void SyntaxErrorStrategy::recover(Parser* recognizer, std::exception_ptr) {
  antlr4::TokenStream* in = recognizer->getTokenStream();
  if (lastErrorIndex == static_cast<int>(in->index()) && lastErrorStates.contains(recognizer->getState())) {
    // No progress since the last error in this state: move on by one token,
    // or this rule would fail here forever.
    if (in->LA(1) != Token::EOF) recognizer->consume();
  }
  lastErrorIndex = static_cast<int>(in->index());
  lastErrorStates.add(recognizer->getState());
  while (!is_layout(in->LA(1))) recognizer->consume();
}

void SyntaxErrorStrategy::sync(Parser* recognizer) {
  // At the end of a line or block, let the next match() or prediction report
  // the problem: it knows better (a missing ':' is repaired there).
  size_t la = recognizer->getTokenStream()->LA(1);
  if (la == P::NEWLINE || la == P::DEDENT) return;
  DefaultErrorStrategy::sync(recognizer);
}

void SyntaxErrorStrategy::reset(Parser* recognizer) { endErrorCondition(recognizer); }

Token* SyntaxErrorStrategy::singleTokenDeletion(Parser* recognizer) {
  // While recovering, the current token is likely the first of the next
  // statement; and a NEWLINE/INDENT/DEDENT is never an extra token.
  if (inErrorRecoveryMode(recognizer) || is_layout(recognizer->getTokenStream()->LA(1))) return nullptr;
  return DefaultErrorStrategy::singleTokenDeletion(recognizer);
}

}  // namespace msl
