//===- DslParser.cpp - The .moe DSL parser -------------------------------===//

#include "compiler/spec/DslParser.h"

#include "compiler/spec/DslLexer.h"
#include "compiler/spec/InputFile.h"
#include "compiler/spec/SpecLimits.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

using namespace moegen::dsl;

namespace moegen {
namespace {

enum class Section { Top, Stage1, Stage2 };

class Parser {
public:
  Parser(llvm::SourceMgr &sm, unsigned bufferId)
      : sm(sm), lex(sm.getMemoryBuffer(bufferId)->getBuffer()) {}

  /// file := 'moe' IDENT '{' item* '}'
  bool parseFile(MoeSpec &spec);
  /// One "key = value" statement (the --set form), into `section`.
  bool parseAssignment(MoeSpec &spec, Section section);

  std::string takeError() { return std::move(error); }

  /// A whole buffer holding one activation value.
  bool parseActivationOnly(ActivationExpr &act) {
    if (!parseActivation(act))
      return false;
    Token end = lex.next();
    if (end.kind != TokenKind::Eof && end.kind != TokenKind::Newline)
      return fail(end.loc(), "unexpected text after the activation");
    return true;
  }

private:
  bool parseItems(MoeSpec &spec, Section section, Token open);
  bool parseValue(MoeSpec &spec, Section section, Token key);
  bool parseActivation(ActivationExpr &act);
  bool parseBuiltinArgs(Token name, std::vector<ActivationParam> &args);

  // Expressions: sum := product (('+'|'-') product)*; product := unary
  // (('*'|'/') unary)*; unary := '-' unary | atom; atom := number | name |
  // call | '(' sum ')'.
  ExprRef parseSum();
  ExprRef parseProduct();
  ExprRef parseUnary();
  ExprRef parseAtom();

  bool parseInt(Token t, llvm::StringRef what, int64_t &out);
  /// 0 (the key's "none" or "default") or what parseInt accepts.
  bool parseIntOrZero(Token t, llvm::StringRef what, int64_t &out) {
    if (t.kind == TokenKind::Number && t.text == "0") {
      out = 0;
      return true;
    }
    return parseInt(t, what, out);
  }
  bool parseDouble(Token t, double &out);
  bool expect(TokenKind kind, llvm::StringRef context, Token *out = nullptr);
  bool endOfStatement();
  bool fail(llvm::SMLoc loc, const llvm::Twine &msg);
  void record(MoeSpec &spec, llvm::StringRef key, llvm::SMLoc loc) {
    auto [line, col] = sm.getLineAndColumn(loc);
    spec.locations[key.str()] = {
        sm.getMemoryBuffer(sm.getMainFileID())->getBufferIdentifier().str(), line, col};
  }

  llvm::SourceMgr &sm;
  Lexer lex;
  std::string error;
  // Where each key was set, per section, for duplicate diagnostics.
  llvm::StringMap<llvm::SMLoc> seen[3];
  // The user activation being parsed: argument and parameter names.
  llvm::StringRef gateName, upName;
  ActivationExpr *curAct = nullptr;
  // Nesting of the expression being parsed (parentheses, calls, unary minus).
  unsigned nesting = 0;
  /// Fails at `loc` when a node or the parser's own nesting is too deep.
  bool checkDepth(llvm::SMLoc loc, unsigned depth);
  ExprRef checked(llvm::SMLoc loc, ExprRef node) {
    return node && checkDepth(loc, exprDepth(*node, limits::kMaxExprDepth)) ? node : nullptr;
  }
  /// Parses a parameter's "= [-]number" into `out`.
  bool parseParamValue(Token pname, double &out);
};

bool Parser::checkDepth(llvm::SMLoc loc, unsigned depth) {
  if (depth <= limits::kMaxExprDepth)
    return true;
  return fail(loc,
              "expression nested deeper than " + llvm::Twine(limits::kMaxExprDepth) + " levels");
}

bool Parser::fail(llvm::SMLoc loc, const llvm::Twine &msg) {
  if (!error.empty())
    return false;
  llvm::raw_string_ostream os(error);
  llvm::SMDiagnostic diag = sm.GetMessage(loc, llvm::SourceMgr::DK_Error, msg);
  // A generated line can be megabytes long: then only the location is shown.
  if (diag.getLineContents().size() > 512)
    os << diag.getFilename() << ":" << diag.getLineNo() << ":" << diag.getColumnNo() + 1
       << ": error: " << diag.getMessage() << "\n";
  else
    diag.print(nullptr, os, /*ShowColors=*/false);
  return false;
}

bool Parser::expect(TokenKind kind, llvm::StringRef context, Token *out) {
  Token t = lex.next();
  if (t.kind != kind)
    return fail(t.loc(), "expected " + spelling(kind) + " " + context + ", found " +
                             (t.kind == TokenKind::Ident || t.kind == TokenKind::Number
                                  ? "'" + t.text.str() + "'"
                                  : spelling(t.kind).str()));
  if (out)
    *out = t;
  return true;
}

bool Parser::endOfStatement() {
  Token t = lex.peek();
  if (t.kind == TokenKind::RBrace || t.kind == TokenKind::Eof)
    return true;
  return expect(TokenKind::Newline, "after the value");
}

bool Parser::parseInt(Token t, llvm::StringRef what, int64_t &out) {
  // Parse into a local: a rejected value must leave the spec unchanged.
  int64_t value;
  if (t.kind != TokenKind::Number || t.text.getAsInteger(10, value))
    return fail(t.loc(), "expected a positive integer for '" + what + "', found '" + t.text + "'");
  if (value <= 0)
    return fail(t.loc(), "'" + what + "' must be positive, got " + t.text);
  out = value;
  return true;
}

bool Parser::parseDouble(Token t, double &out) {
  std::string s = t.text.str();
  char *end = nullptr;
  out = std::strtod(s.c_str(), &end);
  if (t.kind != TokenKind::Number || end != s.c_str() + s.size())
    return fail(t.loc(), "expected a number, found '" + t.text + "'");
  if (!std::isfinite(out))
    return fail(t.loc(), "number '" + t.text + "' is out of the range of a double");
  return true;
}

bool Parser::parseParamValue(Token pname, double &out) {
  if (!expect(TokenKind::Equal, "after '" + pname.text.str() + "'"))
    return false;
  bool negative = lex.peek().kind == TokenKind::Minus;
  if (negative)
    lex.next();
  if (!parseDouble(lex.next(), out))
    return false;
  out = negative ? -out : out;
  return true;
}

bool Parser::parseFile(MoeSpec &spec) {
  Token t = lex.next();
  while (t.kind == TokenKind::Newline)
    t = lex.next();
  if (t.kind != TokenKind::Ident || t.text != "moe")
    return fail(t.loc(), "expected 'moe <name> {' at the start of the file");
  Token name;
  if (!expect(TokenKind::Ident, "(the layer's name) after 'moe'", &name))
    return false;
  spec.name = name.text.str();
  record(spec, "layer", t.loc());
  Token open;
  if (!expect(TokenKind::LBrace, "after the layer's name", &open))
    return false;
  if (!parseItems(spec, Section::Top, open))
    return false;
  t = lex.next();
  while (t.kind == TokenKind::Newline)
    t = lex.next();
  if (t.kind != TokenKind::Eof)
    return fail(t.loc(), "unexpected text after the closing '}' of the moe block");
  return true;
}

bool Parser::parseItems(MoeSpec &spec, Section section, Token open) {
  for (;;) {
    Token t = lex.next();
    if (t.kind == TokenKind::Newline)
      continue;
    if (t.kind == TokenKind::RBrace)
      break;
    if (t.kind == TokenKind::Eof)
      return fail(open.loc(), "this '{' is never closed");
    if (t.kind != TokenKind::Ident)
      return fail(t.loc(), "expected a key, found " + spelling(t.kind));
    if (section == Section::Top && (t.text == "stage1" || t.text == "stage2")) {
      Section sub = t.text == "stage1" ? Section::Stage1 : Section::Stage2;
      record(spec, t.text, t.loc());
      auto [it, inserted] = seen[0].try_emplace(t.text, t.loc());
      if (!inserted)
        return fail(t.loc(), "'" + t.text + "' is given twice (first at line " +
                                 llvm::Twine(sm.getLineAndColumn(it->second).first) + ")");
      Token subOpen;
      if (!expect(TokenKind::LBrace, "after '" + t.text.str() + "'", &subOpen) ||
          !parseItems(spec, sub, subOpen))
        return false;
      continue;
    }
    if (!expect(TokenKind::Equal, "after '" + t.text.str() + "'") ||
        !parseValue(spec, section, t) || !endOfStatement())
      return false;
  }
  if (section != Section::Top)
    return true;
  // Required keys of the layer.
  for (const char *key :
       {"model_dim", "inter_dim", "experts", "topk", "activation_dtype", "activation"})
    if (!seen[0].count(key))
      return fail(open.loc(), llvm::Twine("missing '") + key + "' in the moe block");
  return true;
}

bool Parser::parseAssignment(MoeSpec &spec, Section section) {
  Token key;
  if (!expect(TokenKind::Ident, "(a key)", &key) ||
      !expect(TokenKind::Equal, "after '" + key.text.str() + "'") ||
      !parseValue(spec, section, key))
    return false;
  Token end = lex.next();
  if (end.kind != TokenKind::Eof && end.kind != TokenKind::Newline)
    return fail(end.loc(), "unexpected text after the value");
  return true;
}

/// Reads an identifier value and maps it through `parse`; on failure lists
/// the accepted words.
template <typename T, typename ParseFn> static std::optional<T> enumValue(Token t, ParseFn parse) {
  if (t.kind != TokenKind::Ident)
    return std::nullopt;
  return parse(t.text);
}

bool Parser::parseValue(MoeSpec &spec, Section section, Token key) {
  auto [it, inserted] = seen[static_cast<int>(section)].try_emplace(key.text, key.loc());
  if (!inserted)
    return fail(key.loc(), "'" + key.text + "' is given twice (first at line " +
                               llvm::Twine(sm.getLineAndColumn(it->second).first) + ")");
  llvm::StringRef k = key.text;
  record(spec,
         section == Section::Top      ? k.str()
         : section == Section::Stage1 ? "stage1." + k.str()
                                      : "stage2." + k.str(),
         key.loc());
  auto enumFail = [&](Token v, llvm::StringRef accepted) {
    return fail(v.loc(),
                "invalid value '" + v.text + "' for '" + k + "'; expected one of: " + accepted);
  };

  if (section == Section::Top) {
    Problem &p = spec.problem;
    if (k == "activation") {
      ActivationExpr act;
      if (!parseActivation(act))
        return false;
      spec.activation = std::move(act);
      return true;
    }
    Token v = lex.next();
    if (k == "model_dim")
      return parseInt(v, k, p.modelDim);
    if (k == "inter_dim")
      return parseInt(v, k, p.interDim);
    if (k == "experts")
      return parseInt(v, k, p.experts);
    if (k == "topk")
      return parseInt(v, k, p.topk);
    if (k == "gate_up") {
      auto l = enumValue<GateUpLayout>(v, parseGateUpLayout);
      if (!l)
        return enumFail(v, "separated, interleaved");
      p.gateUp = *l;
      return true;
    }
    if (k == "doweight") {
      if (v.kind != TokenKind::Ident || (v.text != "stage1" && v.text != "stage2"))
        return enumFail(v, "stage1, stage2");
      p.doweightStage1 = v.text == "stage1";
      return true;
    }
    if (k == "activation_dtype" || k == "weight_dtype" || k == "output_dtype") {
      auto d = enumValue<DType>(v, parseDType);
      if (!d || *d == DType::F32)
        return enumFail(v, "bf16, mxfp8, mxfp4");
      (k == "activation_dtype" ? spec.formats.activation
       : k == "weight_dtype"   ? spec.formats.weight
                               : spec.formats.output) = *d;
      return true;
    }
    return fail(key.loc(), "unknown key '" + k +
                               "'; expected one of: model_dim, inter_dim, experts, topk, "
                               "gate_up, doweight, activation_dtype, weight_dtype, "
                               "output_dtype, activation, stage1, stage2");
  }

  StageSchedule &s = section == Section::Stage1 ? spec.stage1 : spec.stage2;
  llvm::StringRef stageName = section == Section::Stage1 ? "stage1" : "stage2";
  Token v = lex.next();
  if (k == "tile") {
    llvm::SmallVector<llvm::StringRef, 3> parts;
    v.text.split(parts, 'x');
    int64_t dims[3];
    if (v.kind != TokenKind::Dims || parts.size() != 3)
      return fail(v.loc(), "expected tile_m x tile_n x tile_k (e.g. 32x128x256) for 'tile', "
                           "found '" +
                               v.text + "'");
    for (int i = 0; i < 3; ++i)
      if (parts[i].getAsInteger(10, dims[i]) || dims[i] <= 0)
        return fail(v.loc(), "tile sizes must be positive integers, found '" + v.text + "'");
    s.tileM = dims[0];
    s.tileN = dims[1];
    s.tileK = dims[2];
    return true;
  }
  if (k == "k_batch")
    return parseInt(v, k, s.kBatch);
  if (k == "k_wave")
    return parseInt(v, k, s.kWave);
  if (k == "xcd_swizzle")
    return parseInt(v, k, s.xcdSwizzle);
  if (k == "prefetch")
    return parseIntOrZero(v, k, s.prefetch);
  if (k == "waves_per_eu")
    return parseIntOrZero(v, k, s.wavesPerEU);
  if (k == "k_batch_mode") {
    auto m = enumValue<KBatchMode>(v, parseKBatchMode);
    if (!m)
      return enumFail(v, "atomic, deterministic");
    s.kBatchMode = *m;
    return true;
  }
  if (k == "fused_quant") {
    if (section != Section::Stage1)
      return fail(key.loc(), "'fused_quant' belongs to stage1 (the stage that produces the "
                             "intermediate activations), not " +
                                 stageName);
    auto q = enumValue<FusedQuant>(v, parseFusedQuant);
    if (!q)
      return enumFail(v, "none, fp4, fp8");
    s.fusedQuant = *q;
    return true;
  }
  if (k == "reduce") {
    if (section != Section::Stage2)
      return fail(key.loc(), "'reduce' belongs to stage2 (the top-k reduction), not " + stageName);
    auto m = enumValue<ReduceMode>(v, parseReduceMode);
    if (!m)
      return enumFail(v, "atomic, reduce");
    s.reduce = *m;
    return true;
  }
  if (k == "weight_decode") {
    auto d = enumValue<WeightDecode>(v, parseWeightDecode);
    if (!d)
      return enumFail(v, "mixed, arithmetic");
    s.weightDecode = *d;
    return true;
  }
  if (k == "wait") {
    if (section != Section::Stage2)
      return fail(key.loc(),
                  "'wait' belongs to stage2 (what it waits for of stage 1's rows), not " +
                      stageName);
    auto w = enumValue<Stage2Wait>(v, parseStage2Wait);
    if (!w)
      return enumFail(v, "rows, grid");
    s.wait = *w;
    return true;
  }
  return fail(
      key.loc(),
      "unknown key '" + k + "' in " + stageName +
          "; expected one of: tile, k_batch, k_batch_mode, k_wave, "
          "waves_per_eu, weight_decode, prefetch, xcd_swizzle, fused_quant (stage1), reduce "
          "(stage2), wait (stage2)");
}

bool Parser::parseBuiltinArgs(Token name, std::vector<ActivationParam> &args) {
  auto declared = *builtinParams(name.text);
  if (lex.peek().kind != TokenKind::LParen)
    return true;
  lex.next();
  if (lex.peek().kind == TokenKind::RParen) {
    lex.next();
    return true;
  }
  for (;;) {
    Token pname;
    if (!expect(TokenKind::Ident, "(a parameter name)", &pname))
      return false;
    bool known = false;
    std::string list;
    for (const BuiltinParamInfo &info : declared) {
      known |= pname.text == info.name;
      list += (list.empty() ? "" : ", ") + std::string(info.name);
    }
    if (!known)
      return fail(pname.loc(), "'" + name.text + "' has no parameter '" + pname.text + "'" +
                                   (list.empty() ? llvm::Twine("; it takes none")
                                                 : "; its parameters are: " + list));
    for (const ActivationParam &p : args)
      if (p.name == pname.text)
        return fail(pname.loc(), "parameter '" + pname.text + "' is given twice");
    double d;
    if (!parseParamValue(pname, d))
      return false;
    args.push_back({pname.text.str(), d});
    Token sep = lex.next();
    if (sep.kind == TokenKind::RParen)
      return true;
    if (sep.kind != TokenKind::Comma)
      return fail(sep.loc(), "expected ',' or ')' in the parameter list");
  }
}

bool Parser::parseActivation(ActivationExpr &act) {
  Token name;
  if (!expect(TokenKind::Ident, "(an activation such as silu or situv2(beta = 4.0))", &name))
    return false;
  if (builtinParams(name.text)) {
    std::vector<ActivationParam> args;
    if (!parseBuiltinArgs(name, args))
      return false;
    for (const ActivationParam &p : args)
      if (p.value <= 0 && (p.name == "beta" || p.name == "linear_beta" || p.name == "limit"))
        return fail(name.loc(), "'" + name.text + "' parameter '" + p.name +
                                    "' must be positive, got " + std::to_string(p.value));
    if (lex.peek().kind == TokenKind::Equal)
      return fail(lex.peek().loc(), "'" + name.text +
                                        "' is a built-in activation; a user-written one needs "
                                        "another name");
    act = *makeBuiltinActivation(name.text, args);
    return true;
  }

  // A user-written activation: name(g, u; p = v, ...) = expr
  if (lex.peek().kind != TokenKind::LParen) {
    std::string names;
    for (const std::string &b : builtinActivationNames())
      names += (names.empty() ? "" : ", ") + b;
    return fail(name.loc(), "unknown activation '" + name.text + "'; built-ins are " + names +
                                ", or write one: " + name.text + "(g, u) = <expression>");
  }
  lex.next();
  Token g, u;
  if (!expect(TokenKind::Ident, "(the gate argument)", &g) ||
      !expect(TokenKind::Comma, "between the gate and up arguments") ||
      !expect(TokenKind::Ident, "(the up argument)", &u))
    return false;
  if (g.text == u.text)
    return fail(u.loc(), "the gate and up arguments need different names");
  act = ActivationExpr();
  act.name = name.text.str();
  Token t = lex.next();
  if (t.kind == TokenKind::Semicolon) {
    for (;;) {
      Token pname;
      double d;
      if (!expect(TokenKind::Ident, "(a parameter name)", &pname))
        return false;
      if (pname.text == g.text || pname.text == u.text || funcByName(pname.text))
        return fail(pname.loc(), "parameter name '" + pname.text +
                                     "' is already an argument or a function name");
      // The canonical form prints the arguments as g and u.
      if (pname.text == "g" || pname.text == "u")
        return fail(pname.loc(), "parameter name '" + pname.text +
                                     "' is reserved: the printed activation names its "
                                     "arguments g and u");
      if (act.param(pname.text))
        return fail(pname.loc(), "parameter '" + pname.text + "' is given twice");
      if (!parseParamValue(pname, d))
        return false;
      act.params.push_back({pname.text.str(), d});
      t = lex.next();
      if (t.kind != TokenKind::Comma)
        break;
    }
  }
  if (t.kind != TokenKind::RParen)
    return fail(t.loc(), "expected ')' to close the activation's signature");
  if (!expect(TokenKind::Equal, "before the activation's expression"))
    return false;
  gateName = g.text;
  upName = u.text;
  curAct = &act;
  act.body = parseSum();
  curAct = nullptr;
  return act.body != nullptr;
}

ExprRef Parser::parseSum() {
  ExprRef lhs = parseProduct();
  while (lhs) {
    TokenKind k = lex.peek().kind;
    if (k != TokenKind::Plus && k != TokenKind::Minus)
      break;
    llvm::SMLoc at = lex.next().loc();
    ExprRef rhs = parseProduct();
    if (!rhs)
      return nullptr;
    lhs = checked(at, makeBinary(k == TokenKind::Plus ? ExprKind::Add : ExprKind::Sub, lhs, rhs));
  }
  return lhs;
}

ExprRef Parser::parseProduct() {
  ExprRef lhs = parseUnary();
  while (lhs) {
    TokenKind k = lex.peek().kind;
    if (k != TokenKind::Star && k != TokenKind::Slash)
      break;
    llvm::SMLoc at = lex.next().loc();
    ExprRef rhs = parseUnary();
    if (!rhs)
      return nullptr;
    lhs = checked(at, makeBinary(k == TokenKind::Star ? ExprKind::Mul : ExprKind::Div, lhs, rhs));
  }
  return lhs;
}

ExprRef Parser::parseUnary() {
  // Every level of parentheses, call or unary minus passes through here once.
  if (!checkDepth(lex.peek().loc(), nesting + 1))
    return nullptr;
  ++nesting;
  llvm::scope_exit leave([&] { --nesting; });
  if (lex.peek().kind == TokenKind::Minus) {
    llvm::SMLoc at = lex.next().loc();
    ExprRef a = parseUnary();
    return a ? checked(at, makeNeg(a)) : nullptr;
  }
  return parseAtom();
}

ExprRef Parser::parseAtom() {
  Token t = lex.next();
  if (t.kind == TokenKind::Number) {
    double d;
    return parseDouble(t, d) ? makeConst(d) : nullptr;
  }
  if (t.kind == TokenKind::LParen) {
    ExprRef e = parseSum();
    if (!e || !expect(TokenKind::RParen, "to close '('"))
      return nullptr;
    return e;
  }
  if (t.kind != TokenKind::Ident) {
    fail(t.loc(),
         "expected an expression, found " +
             (t.kind == TokenKind::Error ? "'" + t.text.str() + "'" : spelling(t.kind).str()));
    return nullptr;
  }
  if (lex.peek().kind == TokenKind::LParen) {
    std::optional<ExprFunc> f = funcByName(t.text);
    if (!f) {
      fail(t.loc(), "unknown function '" + t.text +
                        "'; available: tanh, sigmoid, exp, log, erf, sqrt, abs, min, max");
      return nullptr;
    }
    lex.next();
    std::vector<ExprRef> args;
    if (lex.peek().kind != TokenKind::RParen) {
      for (;;) {
        ExprRef a = parseSum();
        if (!a)
          return nullptr;
        args.push_back(a);
        if (lex.peek().kind != TokenKind::Comma)
          break;
        lex.next();
      }
    }
    if (!expect(TokenKind::RParen, "to close the call of '" + t.text.str() + "'"))
      return nullptr;
    if (args.size() != funcArity(*f)) {
      fail(t.loc(), "'" + t.text + "' takes " + llvm::Twine(funcArity(*f)) + " argument(s), got " +
                        llvm::Twine(args.size()));
      return nullptr;
    }
    return checked(t.loc(), makeCall(*f, std::move(args)));
  }
  if (t.text == gateName)
    return makeGate();
  if (t.text == upName)
    return makeUp();
  for (unsigned i = 0; i < curAct->params.size(); ++i)
    if (curAct->params[i].name == t.text)
      return makeParam(i);
  fail(t.loc(), "unknown name '" + t.text + "'; the arguments are '" + gateName + "' and '" +
                    upName + "', and a parameter must be declared in the signature: " +
                    curAct->name + "(" + gateName + ", " + upName + "; " + t.text + " = ...)");
  return nullptr;
}

llvm::Expected<MoeSpec> parseBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer) {
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  Parser parser(sm, id);
  MoeSpec spec;
  if (!parser.parseFile(spec))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), parser.takeError());
  return spec;
}

} // namespace

llvm::Expected<MoeSpec> parseMoeSpec(llvm::StringRef text, llvm::StringRef bufferName) {
  return parseBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, bufferName));
}

// A .moe file is a few hundred bytes; anything near this is not a spec.
constexpr uint64_t kMaxSpecBytes = 16 << 20;

llvm::Expected<MoeSpec> parseMoeSpecFile(llvm::StringRef path) {
  auto buffer = readInputFile(path, kMaxSpecBytes, /*isText=*/true);
  if (!buffer)
    return buffer.takeError();
  auto spec = parseBuffer(std::move(*buffer));
  if (spec)
    if (llvm::Error e = checkSpecLimits(*spec))
      return std::move(e);
  return spec;
}

llvm::Expected<MoeSpec> loadMoeSpec(llvm::StringRef path, llvm::ArrayRef<std::string> overrides) {
  auto buffer = readInputFile(path, kMaxSpecBytes, /*isText=*/true, /*allowStdin=*/true);
  if (!buffer)
    return buffer.takeError();
  auto spec = parseMoeSpec((*buffer)->getBuffer(), path == "-" ? "<stdin>" : path);
  if (!spec)
    return spec.takeError();
  for (const std::string &o : overrides)
    if (llvm::Error e = applySpecOverride(*spec, o))
      return std::move(e);
  // Limits apply to the final spec: an override may bring a value in range.
  if (llvm::Error e = checkSpecLimits(*spec))
    return std::move(e);
  return spec;
}

llvm::Expected<ActivationExpr> parseActivation(llvm::StringRef text) {
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "activation"),
                                      llvm::SMLoc());
  Parser parser(sm, id);
  ActivationExpr act;
  if (!parser.parseActivationOnly(act))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), parser.takeError());
  return act;
}

namespace {

/// Splits "a=1; b=2" at the ';' and newlines outside parentheses (a user
/// activation's signature has its own ';').
llvm::SmallVector<llvm::StringRef> splitStatements(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ';';
    if (c == '(') {
      ++depth;
    } else if (c == ')') {
      depth = std::max(0, depth - 1);
    } else if (depth == 0 && (c == ';' || c == '\n')) {
      if (!text.slice(start, i).trim().empty())
        out.push_back(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  return out;
}

llvm::Error applyOneOverride(MoeSpec &spec, llvm::StringRef assignment) {
  auto [lhs, rhs] = assignment.split('=');
  lhs = lhs.trim();
  Section section = Section::Top;
  llvm::StringRef key = lhs;
  if (lhs.contains('.')) {
    auto [sec, k] = lhs.split('.');
    if (sec != "stage1" && sec != "stage2")
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--set " + assignment + ": unknown section '" + sec +
                                         "'; expected stage1 or stage2");
    section = sec == "stage1" ? Section::Stage1 : Section::Stage2;
    key = k;
  }
  if (!assignment.contains('=') || key.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--set " + assignment +
                                       ": expected section.key=value, e.g. stage1.k_batch=2");
  llvm::SourceMgr sm;
  std::string text = (key + " = " + rhs.trim()).str();
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "--set " + assignment.str()), llvm::SMLoc());
  Parser parser(sm, id);
  if (!parser.parseAssignment(spec, section))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), parser.takeError());
  return llvm::Error::success();
}

} // namespace

// Statements separated by ';' outside parentheses ("topk=8; experts=32") are
// applied together, like the DSL's own ';': all of them, or none on an error.
llvm::Error applySpecOverride(MoeSpec &spec, llvm::StringRef assignment) {
  llvm::SmallVector<llvm::StringRef> statements = splitStatements(assignment);
  if (statements.empty())
    return applyOneOverride(spec, assignment); // reports the expected form
  // All statements or none: a rejected one leaves the spec unchanged.
  MoeSpec updated = spec;
  for (llvm::StringRef statement : statements)
    if (llvm::Error e = applyOneOverride(updated, statement))
      return e;
  spec = std::move(updated);
  return llvm::Error::success();
}

} // namespace moegen
