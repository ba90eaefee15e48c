# Run after ANTLR generates the lexer and parser (lang/CMakeLists.txt): their
# tables (each recognizer's ATN, deserialized into interval sets) are built by
# a static initializer, so every start of every program that links the
# grammar paid ~6 ms for them, also the runs that parse nothing (a warm
# module AST cache). This moves that initializer into the recognizer's
# constructor as a function-local static: built once, on first use, safely
# from any thread.
foreach(recognizer MSLLexer MSLParser)
  set(file "${GEN_DIR}/${recognizer}.cpp")
  file(READ "${file}" text)
  string(REPLACE "${recognizer}::Initializer ${recognizer}::_init;" "" text "${text}")
  string(REGEX REPLACE "(${recognizer}::${recognizer}\\([A-Za-z]+ \\*input\\) : [A-Za-z]+\\(input\\) {\n)"
         "\\1  static Initializer tables_once;\n  (void)tables_once;\n" lazy "${text}")
  if(lazy STREQUAL text)
    message(FATAL_ERROR "lazy_grammar_tables.cmake: ${recognizer}'s constructor not found in ${file}")
  endif()
  file(WRITE "${file}" "${lazy}")
endforeach()
