// Elementwise expressions, the chains the runtime fuses: "gelu(x * w + b)", "sigmoid(g) * u", "max(x, 0) * s".
// Names are the chain's inputs (tensors of one shape, in order of first use), numbers are constants; the
// operators are + - * / and unary -, the functions those of kFunctions. Parsed into a small tree that the
// code generator turns into one CUDA kernel.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "formats/status.h"

namespace gpuscope::runtime {

struct Expr {
  enum class Kind { kInput, kConstant, kUnary, kBinary, kCall };
  Kind kind = Kind::kConstant;
  std::string name;  // input name, operator ("+", "-", "*", "/", unary "-"), or function name
  double value = 0;  // constant
  int input = -1;    // index of the input, for kInput
  std::vector<std::unique_ptr<Expr>> args;
};

// Functions an expression may call, with their argument counts.
struct Function {
  std::string_view name;
  int arity;
};
inline constexpr Function kFunctions[] = {
    {"exp", 1},  {"log", 1},       {"sqrt", 1}, {"rsqrt", 1}, {"tanh", 1}, {"sigmoid", 1}, {"relu", 1},
    {"gelu", 1}, {"gelu_tanh", 1}, {"silu", 1}, {"abs", 1},   {"max", 2},  {"min", 2},
};

struct ParsedExpr {
  std::unique_ptr<Expr> root;
  std::vector<std::string> inputs;  // in order of first use
  std::string canonical;            // fully parenthesised, spaces removed: the cache key's text
};

// One clear error for anything else ("at 7: unknown function 'gelo'").
Result<ParsedExpr> parseExpr(std::string_view text);
std::string canonical(const Expr& expr);
// The expression on one element, in fp32 as the generated kernel computes it: the reference the runtime's
// results are checked against. values[i] is input i.
float evaluate(const Expr& expr, const float* values);

}  // namespace gpuscope::runtime
