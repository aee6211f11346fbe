#include "advisor/runtime/elementwise_expr.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace gpuscope::runtime {

namespace {

// Recursive descent over: expr = term {(+|-) term}; term = unary {(*|/) unary}; unary = -unary | primary;
// primary = number | name | name(args) | (expr).
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<ParsedExpr> parse() {
    ParsedExpr out;
    out.root = expr();
    skipSpace();
    if (error_.empty() && pos_ < text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    if (!error_.empty()) return makeError(ErrorKind::kBadFormat, "expression: " + error_);
    out.inputs = inputs_;
    out.canonical = canonical(*out.root);
    return out;
  }

 private:
  void fail(const std::string& what) {
    if (error_.empty()) error_ = "at " + std::to_string(pos_ + 1) + ": " + what;
  }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool take(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  std::unique_ptr<Expr> node(Expr::Kind kind, std::string name) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->name = std::move(name);
    return e;
  }
  std::unique_ptr<Expr> binary(std::string op, std::unique_ptr<Expr> a, std::unique_ptr<Expr> b) {
    auto e = node(Expr::Kind::kBinary, std::move(op));
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  // One level of left-associative operators: operand {op operand}.
  std::unique_ptr<Expr> leftAssociative(std::string_view ops, std::unique_ptr<Expr> (Parser::*operand)()) {
    auto left = (this->*operand)();
    while (error_.empty()) {
      skipSpace();
      if (pos_ >= text_.size() || ops.find(text_[pos_]) == std::string_view::npos) break;
      const std::string op(1, text_[pos_++]);
      left = binary(op, std::move(left), (this->*operand)());
    }
    return left;
  }
  std::unique_ptr<Expr> expr() { return leftAssociative("+-", &Parser::term); }
  std::unique_ptr<Expr> term() { return leftAssociative("*/", &Parser::unary); }
  std::unique_ptr<Expr> unary() {
    if (++depth_ > kMaxDepth) return fail("nested too deeply"), node(Expr::Kind::kConstant, "");
    std::unique_ptr<Expr> e;
    if (take('-')) {
      e = node(Expr::Kind::kUnary, "-");
      e->args.push_back(unary());
    } else {
      e = primary();
    }
    --depth_;
    return e;
  }
  std::unique_ptr<Expr> primary();
  std::unique_ptr<Expr> call(std::string name);

  static constexpr int kMaxDepth = 200;
  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string error_;
  std::vector<std::string> inputs_;
};

std::unique_ptr<Expr> Parser::primary() {
  skipSpace();
  if (pos_ >= text_.size()) return fail("expected a value"), node(Expr::Kind::kConstant, "");
  const char c = text_[pos_];
  if (take('(')) {
    auto e = expr();
    if (!take(')')) fail("expected ')'");
    return e;
  }
  if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
    const std::string rest(text_.substr(pos_));
    char* end = nullptr;
    const double v = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str()) return fail("bad number"), node(Expr::Kind::kConstant, "");
    pos_ += static_cast<size_t>(end - rest.c_str());
    auto e = node(Expr::Kind::kConstant, "");
    e->value = v;
    return e;
  }
  if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    std::string name(text_.substr(start, pos_ - start));
    if (take('(')) return call(std::move(name));
    auto e = node(Expr::Kind::kInput, name);
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i] == name) e->input = static_cast<int>(i);
    }
    if (e->input < 0) e->input = static_cast<int>(inputs_.size()), inputs_.push_back(name);
    return e;
  }
  return fail("unexpected '" + std::string(1, c) + "'"), node(Expr::Kind::kConstant, "");
}

std::unique_ptr<Expr> Parser::call(std::string name) {
  const Function* f = nullptr;
  for (const Function& candidate : kFunctions) {
    if (candidate.name == name) f = &candidate;
  }
  if (!f) return fail("unknown function '" + name + "'"), node(Expr::Kind::kConstant, "");
  auto e = node(Expr::Kind::kCall, name);
  do {
    e->args.push_back(expr());
  } while (error_.empty() && take(','));
  if (!take(')')) fail("expected ')' after the arguments of " + name);
  if (error_.empty() && static_cast<int>(e->args.size()) != f->arity) {
    fail(name + " takes " + std::to_string(f->arity) + " argument(s), not " + std::to_string(e->args.size()));
  }
  return e;
}

}  // namespace

std::string canonical(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kInput: return e.name;
    case Expr::Kind::kConstant: {
      std::ostringstream s;
      s.precision(17);
      s << e.value;
      return s.str();
    }
    case Expr::Kind::kUnary: return "(-" + canonical(*e.args[0]) + ")";
    case Expr::Kind::kBinary: return "(" + canonical(*e.args[0]) + e.name + canonical(*e.args[1]) + ")";
    case Expr::Kind::kCall: {
      std::string s = e.name + "(";
      for (size_t i = 0; i < e.args.size(); ++i) s += (i ? "," : "") + canonical(*e.args[i]);
      return s + ")";
    }
  }
  return "";
}

Result<ParsedExpr> parseExpr(std::string_view text) { return Parser(text).parse(); }

namespace {

float call(const std::string& f, float a, float b) {
  if (f == "exp") return std::exp(a);
  if (f == "log") return std::log(a);
  if (f == "sqrt") return std::sqrt(a);
  if (f == "rsqrt") return 1.0f / std::sqrt(a);
  if (f == "tanh") return std::tanh(a);
  if (f == "sigmoid") return 1.0f / (1.0f + std::exp(-a));
  if (f == "relu") return std::fmax(a, 0.0f);
  if (f == "gelu") return 0.5f * a * (1.0f + std::erf(a * 0.70710678118654752f));
  if (f == "gelu_tanh") return 0.5f * a * (1.0f + std::tanh(0.79788456080286536f * (a + 0.044715f * a * a * a)));
  if (f == "silu") return a / (1.0f + std::exp(-a));
  if (f == "abs") return std::fabs(a);
  if (f == "max") return std::fmax(a, b);
  if (f == "min") return std::fmin(a, b);
  if (f == "erf") return std::erf(a);
  if (f == "step") return a > 0.0f ? 1.0f : 0.0f;
  if (f == "sign") return a > 0.0f ? 1.0f : a < 0.0f ? -1.0f : 0.0f;
  return 0.0f;
}

}  // namespace

float evaluate(const Expr& e, const float* values) {
  switch (e.kind) {
    case Expr::Kind::kInput: return values[e.input];
    case Expr::Kind::kConstant: return static_cast<float>(e.value);
    case Expr::Kind::kUnary: return -evaluate(*e.args[0], values);
    case Expr::Kind::kBinary: {
      const float a = evaluate(*e.args[0], values), b = evaluate(*e.args[1], values);
      return e.name == "+" ? a + b : e.name == "-" ? a - b : e.name == "*" ? a * b : a / b;
    }
    case Expr::Kind::kCall:
      return call(e.name, evaluate(*e.args[0], values), e.args.size() > 1 ? evaluate(*e.args[1], values) : 0.0f);
  }
  return 0.0f;
}

namespace {

using Node = std::unique_ptr<Expr>;

Node constant(double v) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::kConstant;
  e->value = v;
  return e;
}

bool isConstant(const Node& e, double v) { return e->kind == Expr::Kind::kConstant && e->value == v; }

Node clone(const Expr& e) {
  auto c = std::make_unique<Expr>();
  c->kind = e.kind, c->name = e.name, c->value = e.value, c->input = e.input;
  for (const auto& a : e.args) c->args.push_back(clone(*a));
  return c;
}

Node op(const char* name, Node a, Node b) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::kBinary;
  e->name = name;
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}

// Sums and products with 0 and 1 folded, so derivatives stay as short as the chain.
Node add(Node a, Node b) {
  if (isConstant(a, 0)) return b;
  if (isConstant(b, 0)) return a;
  return op("+", std::move(a), std::move(b));
}
Node sub(Node a, Node b) {
  if (isConstant(b, 0)) return a;
  return op("-", std::move(a), std::move(b));
}
Node mul(Node a, Node b) {
  if (isConstant(a, 0) || isConstant(b, 0)) return constant(0);
  if (isConstant(a, 1)) return b;
  if (isConstant(b, 1)) return a;
  return op("*", std::move(a), std::move(b));
}
Node fn(const char* name, Node a) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::kCall;
  e->name = name;
  e->args.push_back(std::move(a));
  return e;
}
Node neg(Node a) {
  if (isConstant(a, 0)) return a;
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::kUnary;
  e->name = "-";
  e->args.push_back(std::move(a));
  return e;
}

// d f(a) / d a for a function of one argument, as an expression of a.
Node outerDerivative(const std::string& f, const Expr& a) {
  auto x = [&] { return clone(a); };
  if (f == "exp") return fn("exp", x());
  if (f == "log") return op("/", constant(1), x());
  if (f == "sqrt") return op("/", constant(0.5), fn("sqrt", x()));
  if (f == "rsqrt") return mul(constant(-0.5), op("/", fn("rsqrt", x()), x()));
  if (f == "tanh") return sub(constant(1), mul(fn("tanh", x()), fn("tanh", x())));
  if (f == "sigmoid") return mul(fn("sigmoid", x()), sub(constant(1), fn("sigmoid", x())));
  if (f == "relu") return fn("step", x());
  if (f == "gelu") {  // Φ(x) + x·φ(x)
    return add(mul(constant(0.5), add(constant(1), fn("erf", mul(x(), constant(0.70710678118654752))))),
               mul(mul(x(), constant(0.3989422804014327)), fn("exp", mul(constant(-0.5), mul(x(), x())))));
  }
  if (f == "gelu_tanh") {  // with t = tanh(u), u = c(x + k x³): 0.5(1 + t) + 0.5 x (1 - t²) c (1 + 3k x²)
    const double c = 0.79788456080286536, k = 0.044715;
    auto t = [&] { return fn("tanh", mul(constant(c), add(x(), mul(constant(k), mul(x(), mul(x(), x())))))); };
    return add(mul(constant(0.5), add(constant(1), t())),
               mul(mul(mul(constant(0.5 * c), x()), sub(constant(1), mul(t(), t()))),
                   add(constant(1), mul(constant(3 * k), mul(x(), x())))));
  }
  if (f == "silu") {  // s (1 + x (1 - s))
    return mul(fn("sigmoid", x()), add(constant(1), mul(x(), sub(constant(1), fn("sigmoid", x())))));
  }
  if (f == "abs") return fn("sign", x());
  if (f == "erf") return mul(constant(1.1283791670955126), fn("exp", neg(mul(x(), x()))));
  return constant(0);  // step, sign: flat almost everywhere
}

}  // namespace

std::unique_ptr<Expr> derivative(const Expr& e, int input) {
  switch (e.kind) {
    case Expr::Kind::kInput: return constant(e.input == input ? 1 : 0);
    case Expr::Kind::kConstant: return constant(0);
    case Expr::Kind::kUnary: return neg(derivative(*e.args[0], input));
    case Expr::Kind::kBinary: {
      const Expr &a = *e.args[0], &b = *e.args[1];
      Node da = derivative(a, input), db = derivative(b, input);
      if (e.name == "+") return add(std::move(da), std::move(db));
      if (e.name == "-") return sub(std::move(da), std::move(db));
      if (e.name == "*") return add(mul(std::move(da), clone(b)), mul(clone(a), std::move(db)));
      // (a / b)' = a' / b - a b' / b²
      return sub(op("/", std::move(da), clone(b)), op("/", mul(clone(a), std::move(db)), mul(clone(b), clone(b))));
    }
    case Expr::Kind::kCall: {
      if (e.name == "max" || e.name == "min") {  // the derivative of the argument that wins
        const Expr &a = *e.args[0], &b = *e.args[1];
        Node a_wins = fn("step", e.name == "max" ? sub(clone(a), clone(b)) : sub(clone(b), clone(a)));
        Node b_wins = sub(constant(1), clone(*a_wins));
        return add(mul(std::move(a_wins), derivative(a, input)), mul(std::move(b_wins), derivative(b, input)));
      }
      return mul(outerDerivative(e.name, *e.args[0]), derivative(*e.args[0], input));
    }
  }
  return constant(0);
}

Result<Backward> backwardChains(std::string_view expression) {
  Result<ParsedExpr> e = parseExpr(expression);
  if (!e) return e.status();
  Backward b{"dy", {}};
  while (std::find(e->inputs.begin(), e->inputs.end(), b.grad_name) != e->inputs.end()) b.grad_name += "_";
  for (size_t i = 0; i < e->inputs.size(); ++i) {
    const Node d = derivative(*e->root, static_cast<int>(i));
    b.chains.push_back({e->inputs[i], "(" + b.grad_name + "*" + canonical(*d) + ")"});
  }
  return b;
}

}  // namespace gpuscope::runtime
