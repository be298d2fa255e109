//===- DslLexer.h - Tokens of the .moe DSL ----------------------*- C++ -*-===//
#ifndef MOEGEN_COMPILER_SPEC_DSLLEXER_H
#define MOEGEN_COMPILER_SPEC_DSLLEXER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

namespace moegen::dsl {

enum class TokenKind {
  Eof,
  Newline, // also ';' — ends a statement
  Ident,
  Number, // 42, 4.0, 1e-3
  Dims,   // 32x128x256
  LBrace,
  RBrace,
  LParen,
  RParen,
  Comma,
  Semicolon, // only inside an activation signature: "act(g, u; beta = 4.0)"
  Equal,
  Plus,
  Minus,
  Star,
  Slash,
  Dot,
  Error, // an unexpected character; text holds it
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  llvm::StringRef text;
  llvm::SMLoc loc() const { return llvm::SMLoc::getFromPointer(text.data()); }
};

/// Splits a buffer into tokens. Newlines end statements, except inside
/// parentheses and after a token that cannot end one (an operator, ',' or
/// '='), so an expression may continue on the next line. `#` starts a
/// comment to the end of the line.
class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer) : buf(buffer), cur(buffer.begin()) {}
  Token next();
  /// The token `next()` would return, without consuming it.
  Token peek();

private:
  Token make(TokenKind kind, const char *start) {
    return {kind, llvm::StringRef(start, cur - start)};
  }
  Token lexNumber(const char *start);
  Token lex();

  llvm::StringRef buf;
  const char *cur;
  int parenDepth = 0;
  TokenKind last = TokenKind::Newline;
};

llvm::StringRef spelling(TokenKind kind);

} // namespace moegen::dsl

#endif // MOEGEN_COMPILER_SPEC_DSLLEXER_H
