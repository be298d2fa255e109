//===- DslLexer.cpp - Tokens of the .moe DSL -----------------------------===//

#include "compiler/spec/DslLexer.h"

#include "llvm/ADT/StringExtras.h"

namespace moegen::dsl {

llvm::StringRef spelling(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::Newline:
    return "end of line";
  case TokenKind::Ident:
    return "identifier";
  case TokenKind::Number:
    return "number";
  case TokenKind::Dims:
    return "dimensions (e.g. 32x128x256)";
  case TokenKind::LBrace:
    return "'{'";
  case TokenKind::RBrace:
    return "'}'";
  case TokenKind::LParen:
    return "'('";
  case TokenKind::RParen:
    return "')'";
  case TokenKind::Comma:
    return "','";
  case TokenKind::Semicolon:
    return "';'";
  case TokenKind::Equal:
    return "'='";
  case TokenKind::Plus:
    return "'+'";
  case TokenKind::Minus:
    return "'-'";
  case TokenKind::Star:
    return "'*'";
  case TokenKind::Slash:
    return "'/'";
  case TokenKind::Dot:
    return "'.'";
  case TokenKind::Error:
    return "invalid character";
  }
  return "token";
}

Token Lexer::peek() {
  const char *savedCur = cur;
  int savedDepth = parenDepth;
  TokenKind savedLast = last;
  Token t = next();
  cur = savedCur;
  parenDepth = savedDepth;
  last = savedLast;
  return t;
}

Token Lexer::lexNumber(const char *start) {
  while (cur < buf.end() && llvm::isDigit(*cur))
    ++cur;
  // "32x128x256": a dimension list.
  if (cur + 1 < buf.end() && *cur == 'x' && llvm::isDigit(cur[1])) {
    while (cur < buf.end() && (llvm::isDigit(*cur) || *cur == 'x'))
      ++cur;
    return make(TokenKind::Dims, start);
  }
  if (cur < buf.end() && *cur == '.') {
    ++cur;
    while (cur < buf.end() && llvm::isDigit(*cur))
      ++cur;
  }
  if (cur < buf.end() && (*cur == 'e' || *cur == 'E')) {
    const char *expStart = cur++;
    if (cur < buf.end() && (*cur == '+' || *cur == '-'))
      ++cur;
    if (cur < buf.end() && llvm::isDigit(*cur)) {
      while (cur < buf.end() && llvm::isDigit(*cur))
        ++cur;
    } else {
      cur = expStart; // not an exponent after all
    }
  }
  return make(TokenKind::Number, start);
}

static bool continuesLine(TokenKind k) {
  switch (k) {
  case TokenKind::Plus:
  case TokenKind::Minus:
  case TokenKind::Star:
  case TokenKind::Slash:
  case TokenKind::Comma:
  case TokenKind::Equal:
  case TokenKind::LParen:
  case TokenKind::Semicolon:
    return true;
  default:
    return false;
  }
}

Token Lexer::next() {
  Token t = lex();
  last = t.kind;
  return t;
}

Token Lexer::lex() {
  while (cur < buf.end()) {
    char c = *cur;
    if (c == '#') {
      while (cur < buf.end() && *cur != '\n')
        ++cur;
      continue;
    }
    if (c == '\n' && parenDepth == 0 && !continuesLine(last))
      break;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++cur;
      continue;
    }
    break;
  }
  const char *start = cur;
  if (cur == buf.end())
    return make(TokenKind::Eof, start);
  char c = *cur++;
  switch (c) {
  case '\n':
    return make(TokenKind::Newline, start);
  case '{':
    return make(TokenKind::LBrace, start);
  case '}':
    return make(TokenKind::RBrace, start);
  case '(':
    ++parenDepth;
    return make(TokenKind::LParen, start);
  case ')':
    if (parenDepth > 0)
      --parenDepth;
    return make(TokenKind::RParen, start);
  case ',':
    return make(TokenKind::Comma, start);
  case ';':
    return make(parenDepth > 0 ? TokenKind::Semicolon : TokenKind::Newline, start);
  case '=':
    return make(TokenKind::Equal, start);
  case '+':
    return make(TokenKind::Plus, start);
  case '-':
    return make(TokenKind::Minus, start);
  case '*':
    return make(TokenKind::Star, start);
  case '/':
    return make(TokenKind::Slash, start);
  default:
    break;
  }
  if (llvm::isDigit(c) || (c == '.' && cur < buf.end() && llvm::isDigit(*cur)))
    return lexNumber(start);
  if (c == '.')
    return make(TokenKind::Dot, start);
  if (llvm::isAlpha(c) || c == '_') {
    while (cur < buf.end() && (llvm::isAlnum(*cur) || *cur == '_'))
      ++cur;
    return make(TokenKind::Ident, start);
  }
  return make(TokenKind::Error, start);
}

} // namespace moegen::dsl
