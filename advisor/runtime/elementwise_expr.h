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
inline constexpr Function
    kFunctions[] =
        {
            {"exp", 1},  {"log", 1},  {"sqrt", 1},      {"rsqrt", 1}, {"tanh", 1}, {"sigmoid", 1},
            {"relu", 1}, {"gelu", 1}, {"gelu_tanh", 1}, {"silu", 1},  {"abs", 1},  {"max", 2},
            {"min", 2},  {"erf", 1},  {"step", 1},  // step(x): 1 where x > 0, else 0 (derivatives use it)
            {"sign", 1},
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

// The derivative of expr with respect to input `input`, as an expression over the same inputs (0 and 1
// folded away). The backward of a fused chain is grad_in_i = grad_out * derivative(expr, i), itself a chain.
std::unique_ptr<Expr> derivative(const Expr& expr, int input);

// The backward of a chain: for each input, the chain that computes its gradient from the output's gradient
// (an input named `grad_name`, "dy" unless the chain uses that name) and the chain's inputs.
struct GradientChain {
  std::string input;       // whose gradient this is
  std::string expression;  // e.g. "(dy*(w*step(((x*w)+b))))"
};
struct Backward {
  std::string grad_name;
  std::vector<GradientChain> chains;  // one per input, in the chain's input order
};
Result<Backward> backwardChains(std::string_view expression);

}  // namespace gpuscope::runtime
