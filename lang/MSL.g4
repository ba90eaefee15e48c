// The MSL grammar: a Python 3 subset (spec §2).
//
// Modelled on the grammars-v4 Python3 grammar: one flat rule per precedence
// level (`arith_expr: term (('+'|'-') term)*`), never left-recursive
// alternatives, so parse trees stay shallow and the AST builder (ast_builder.cpp)
// folds each level's operands iteratively.
//
// The lexer rules here only recognise single tokens. lang/indent_lexer.cpp
// wraps the generated lexer and turns its raw stream into the one the parser
// sees: NEWLINE only at the end of a logical line (not inside brackets, not on
// blank or comment-only lines), INDENT/DEDENT from the indentation column,
// string bodies scanned by hand (so an unterminated triple-quoted string can
// be reported where it opened), and lexical errors reported there.
//
// Constructs that are not in MSL but common in Python (`with`, `yield`,
// `async`, `await`) are parsed here on purpose: the AST builder rejects them
// with a message that names them, and because the whole statement (and its
// block) was parsed, nothing after it cascades into spurious errors.
grammar MSL;

tokens { INDENT, DEDENT }

// ------------------------------------------------------------ entry points

// Not used by parser.cpp, which drives `stmt` itself (per-statement SLL/LL and
// a loop that always makes progress); kept as the grammar's documentation of
// a file.
file_input: (NEWLINE | stmt)* EOF;
// parse_expression and f-string replacement fields.
eval_input: testlist NEWLINE* EOF;

// -------------------------------------------------------------- statements

stmt: simple_stmt | compound_stmt | leftover;

// Never matched by a correct program (the lexer emits no empty lines, and an
// INDENT only where a suite expects it): this is what error recovery leaves
// behind, the end of a line that had an error and the block such a line
// opened (`match x:`, a stray `else:`, a misspelt keyword). The block is
// skipped unparsed, so its lines cannot cascade into more errors, and the
// statements after it are parsed normally.
leftover: NEWLINE | INDENT skipped* DEDENT;
skipped: INDENT skipped* DEDENT | ~(INDENT | DEDENT);

simple_stmt: small_stmt (';' small_stmt)* ';'? NEWLINE;

small_stmt
    : expr_stmt
    | del_stmt
    | pass_stmt
    | break_stmt
    | continue_stmt
    | return_stmt
    | raise_stmt
    | import_stmt
    | global_stmt
    | nonlocal_stmt
    | assert_stmt
    | yield_stmt
    ;

// Assignment chains, augmented and annotated assignment, expression statements.
expr_stmt
    : testlist_star_expr
      ( annassign
      | augassign (yield_expr | testlist)
      | ('=' (yield_expr | testlist_star_expr))*
      )
    ;
annassign: ':' test ('=' (yield_expr | testlist_star_expr))?;
augassign
    : '+=' | '-=' | '*=' | '@=' | '/=' | '%=' | '&=' | '|=' | '^='
    | '<<=' | '>>=' | '**=' | '//='
    ;
testlist_star_expr: (test | star_expr) (',' (test | star_expr))* ','?;

del_stmt: 'del' exprlist;
pass_stmt: 'pass';
break_stmt: 'break';
continue_stmt: 'continue';
return_stmt: 'return' testlist_star_expr?;
raise_stmt: 'raise' (test ('from' test)?)?;
global_stmt: 'global' NAME (',' NAME)*;
nonlocal_stmt: 'nonlocal' NAME (',' NAME)*;
assert_stmt: 'assert' test (',' test)?;
yield_stmt: yield_expr;

import_stmt: import_name | import_from;
import_name: 'import' dotted_as_names;
// Relative imports parse (for a clear error from the AST builder).
import_from
    : 'from' (('.' | '...')* dotted_name | ('.' | '...')+)
      'import' ('*' | '(' import_as_names ')' | import_as_names)
    ;
import_as_name: NAME ('as' NAME)?;
dotted_as_name: dotted_name ('as' NAME)?;
import_as_names: import_as_name (',' import_as_name)* ','?;
dotted_as_names: dotted_as_name (',' dotted_as_name)*;
dotted_name: NAME ('.' NAME)*;

compound_stmt
    : if_stmt
    | while_stmt
    | for_stmt
    | try_stmt
    | funcdef
    | classdef
    | decorated
    | with_stmt
    | async_stmt
    ;

if_stmt: 'if' test ':' suite elif_clause* else_clause?;
elif_clause: 'elif' test ':' suite;
else_clause: 'else' ':' suite;
while_stmt: 'while' test ':' suite else_clause?;
for_stmt: 'for' exprlist 'in' testlist ':' suite else_clause?;
try_stmt
    : 'try' ':' suite
      ( except_block+ else_clause? finally_clause?
      | finally_clause
      )
    ;
except_block: except_clause ':' suite;
except_clause: 'except' (test ('as' NAME)?)?;
finally_clause: 'finally' ':' suite;

// Not in MSL: parsed so that the AST builder can name them.
with_stmt: 'with' with_item (',' with_item)* ':' suite;
with_item: test ('as' expr)?;
async_stmt: ASYNC (funcdef | with_stmt | for_stmt);

suite: simple_stmt | NEWLINE INDENT stmt+ DEDENT;

decorator: '@' test NEWLINE;
decorated: decorator+ (classdef | funcdef | async_stmt);

funcdef: 'def' NAME parameters ('->' test)? ':' suite;
parameters: '(' typedargslist? ')';
// The order rules (defaults, `*`, keyword-only, `**`) are checked by the AST
// builder, which can say exactly what is wrong.
typedargslist: tfp_item (',' tfp_item)* ','?;
tfp_item: tfpdef ('=' test)? | '*' tfpdef? | '**' tfpdef;
tfpdef: NAME (':' test)?;
varargslist: vfp_item (',' vfp_item)* ','?;
vfp_item: NAME ('=' test)? | '*' NAME? | '**' NAME;

// At most one base and no keywords: checked by the AST builder.
classdef: 'class' NAME ('(' arglist? ')')? ':' suite;

// ------------------------------------------------------------- expressions

test: or_test ('if' or_test 'else' test)? | lambdef;
test_nocond: or_test | lambdef_nocond;
lambdef: 'lambda' varargslist? ':' test;
lambdef_nocond: 'lambda' varargslist? ':' test_nocond;
or_test: and_test ('or' and_test)*;
and_test: not_test ('and' not_test)*;
not_test: 'not' not_test | comparison;
comparison: expr (comp_op expr)*;
comp_op: '<' | '>' | '==' | '>=' | '<=' | '!=' | 'in' | 'not' 'in' | 'is' | 'is' 'not';
star_expr: '*' expr;
expr: xor_expr ('|' xor_expr)*;
xor_expr: and_expr ('^' and_expr)*;
and_expr: shift_expr ('&' shift_expr)*;
shift_expr: arith_expr (('<<' | '>>') arith_expr)*;
arith_expr: term (('+' | '-') term)*;
term: factor (('*' | '@' | '/' | '%' | '//') factor)*;
factor: ('+' | '-' | '~') factor | power;
// `**` binds tighter than a unary operator on its left and looser than one on
// its right: -2**-1 == -(2**(-1)).
power: atom_expr ('**' factor)?;
atom_expr: AWAIT? atom trailer*;
atom
    : '(' (yield_expr | testlist_comp)? ')'
    | '[' testlist_comp? ']'
    | '{' dictorsetmaker? '}'
    | NAME
    | INTEGER
    | FLOAT_NUMBER
    | STRING+
    | '...'
    | 'None'
    | 'True'
    | 'False'
    ;
testlist_comp: (test | star_expr) (comp_for | (',' (test | star_expr))* ','?);
trailer: '(' arglist? ')' | '[' subscriptlist ']' | '.' NAME;
subscriptlist: subscript (',' subscript)* ','?;
subscript: test | test? ':' test? sliceop?;
sliceop: ':' test?;
exprlist: (expr | star_expr) (',' (expr | star_expr))* ','?;
testlist: test (',' test)* ','?;
dictorsetmaker
    : (dict_item (comp_for | (',' dict_item)* ','?))
    | ((test | star_expr) (comp_for | (',' (test | star_expr))* ','?))
    ;
dict_item: test ':' test | '**' expr;
arglist: argument (',' argument)* ','?;
argument: test comp_for? | test '=' test | '**' test | '*' test;

// Comprehension clauses are a flat list (Python nests them), so a long chain
// of `if`s does not make a deep parse tree.
comp_for: comp_for_clause (comp_for_clause | comp_if)*;
comp_for_clause: ASYNC? 'for' exprlist 'in' or_test;
comp_if: 'if' test_nocond;

yield_expr: 'yield' ('from' test | testlist_star_expr)?;

// ------------------------------------------------------------------ lexer

DEF: 'def';
RETURN: 'return';
RAISE: 'raise';
FROM: 'from';
IMPORT: 'import';
AS: 'as';
GLOBAL: 'global';
NONLOCAL: 'nonlocal';
ASSERT: 'assert';
IF: 'if';
ELIF: 'elif';
ELSE: 'else';
WHILE: 'while';
FOR: 'for';
IN: 'in';
TRY: 'try';
FINALLY: 'finally';
EXCEPT: 'except';
WITH: 'with';
LAMBDA: 'lambda';
OR: 'or';
AND: 'and';
NOT: 'not';
IS: 'is';
NONE: 'None';
TRUE: 'True';
FALSE: 'False';
CLASS: 'class';
YIELD: 'yield';
DEL: 'del';
PASS: 'pass';
CONTINUE: 'continue';
BREAK: 'break';
ASYNC: 'async';
AWAIT: 'await';

// Only the prefix and opening quote: IndentLexer scans the body by hand
// (single or triple quoted, escapes, where an unterminated one opened).
STRING: STRING_PREFIX? ['"];
fragment STRING_PREFIX
    : [rRuUfFbB]
    | [fF] [rR] | [rR] [fF]
    | [bB] [rR] | [rR] [bB]
    ;

INTEGER: DECIMAL_INTEGER | OCT_INTEGER | HEX_INTEGER | BIN_INTEGER;
fragment DECIMAL_INTEGER: [1-9] ('_'? [0-9])* | '0'+ ('_'? '0')*;
fragment OCT_INTEGER: '0' [oO] ('_'? [0-7])+;
fragment HEX_INTEGER: '0' [xX] ('_'? [0-9a-fA-F])+;
fragment BIN_INTEGER: '0' [bB] ('_'? [01])+;

FLOAT_NUMBER: POINT_FLOAT | EXPONENT_FLOAT;
fragment POINT_FLOAT: DIGIT_PART? FRACTION | DIGIT_PART '.';
fragment EXPONENT_FLOAT: (DIGIT_PART | POINT_FLOAT) EXPONENT;
fragment DIGIT_PART: [0-9] ('_'? [0-9])*;
fragment FRACTION: '.' DIGIT_PART;
fragment EXPONENT: [eE] [+-]? DIGIT_PART;

// Anything number-like that is not one of the above (`012`, `1__0`, `0x`,
// `1j`, `3abc`): longer than any valid prefix of it, so it wins and
// IndentLexer reports it as one error instead of a confusing parse error.
INVALID_NUMBER: [0-9] [0-9a-zA-Z_]* ('.' [0-9a-zA-Z_]*)?;

NAME: ID_START ID_CONTINUE*;
fragment ID_START: [\p{L}\p{Nl}_];
fragment ID_CONTINUE: [\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}];

ELLIPSIS: '...';
DOT: '.';
STAR: '*';
OPEN_PAREN: '(';
CLOSE_PAREN: ')';
COMMA: ',';
COLON: ':';
SEMI_COLON: ';';
POWER: '**';
ASSIGN: '=';
OPEN_BRACK: '[';
CLOSE_BRACK: ']';
OR_OP: '|';
XOR: '^';
AND_OP: '&';
LEFT_SHIFT: '<<';
RIGHT_SHIFT: '>>';
ADD: '+';
MINUS: '-';
DIV: '/';
MOD: '%';
IDIV: '//';
NOT_OP: '~';
OPEN_BRACE: '{';
CLOSE_BRACE: '}';
LESS_THAN: '<';
GREATER_THAN: '>';
EQUALS: '==';
GT_EQ: '>=';
LT_EQ: '<=';
NOT_EQ_2: '!=';
AT: '@';
ARROW: '->';
ADD_ASSIGN: '+=';
SUB_ASSIGN: '-=';
MULT_ASSIGN: '*=';
AT_ASSIGN: '@=';
DIV_ASSIGN: '/=';
MOD_ASSIGN: '%=';
AND_ASSIGN: '&=';
OR_ASSIGN: '|=';
XOR_ASSIGN: '^=';
LEFT_SHIFT_ASSIGN: '<<=';
RIGHT_SHIFT_ASSIGN: '>>=';
POWER_ASSIGN: '**=';
IDIV_ASSIGN: '//=';
// Not in MSL; a token of its own so the message can name it.
WALRUS: ':=';

NEWLINE: '\n';
// A form feed resets the indentation column, as in Python; a lone '\r' (the
// first half of CRLF) is plain whitespace.
WS: [ \t\f\r]+ -> channel(HIDDEN);
COMMENT: '#' ~[\n]* -> channel(HIDDEN);
LINE_CONTINUATION: '\\' '\r'? '\n' -> channel(HIDDEN);

// Any other character: IndentLexer reports it ("Invalid character ...").
ERROR_CHAR: .;
