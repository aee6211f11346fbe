#include "analyzer/kernel_names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

namespace gpuscope::analysis {

namespace {

bool isIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The identifiers of text that are not namespaces (not followed by "::") nor type or language words.
std::vector<std::string_view> meaningfulIdentifiers(std::string_view text) {
  static constexpr std::array<std::string_view, 22> kCommon = {
      "void",      "float",     "double",   "int",    "long",           "unsigned",           "char",  "bool", "const",
      "lambda",    "Half",      "BFloat16", "Scalar", "TensorIterator", "TensorIteratorBase", "array", "true", "false",
      "anonymous", "namespace", "operator", "Params"};
  std::vector<std::string_view> out;
  for (size_t i = 0; i < text.size();) {
    if (!isIdentifierChar(text[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && isIdentifierChar(text[end])) ++end;
    const std::string_view word = text.substr(i, end - i);
    const bool is_namespace = text.substr(end, 2) == "::";
    const bool common = std::isdigit(static_cast<unsigned char>(word[0])) ||
                        std::find(kCommon.begin(), kCommon.end(), word) != kCommon.end();
    if (!is_namespace && !common) out.push_back(word);
    i = end;
  }
  return out;
}

// The identifier that says what a templated kernel computes: the last functor, kernel or implementation
// named in its arguments, else the first meaningful one.
std::string_view innerName(std::string_view args) {
  const std::vector<std::string_view> words = meaningfulIdentifiers(args);
  for (auto it = words.rbegin(); it != words.rend(); ++it) {
    for (std::string_view suffix : {"Functor", "_kernel", "_kernel_cuda", "KernelImpl", "_impl", "Op", "Epilogue"}) {
      if (endsWith(*it, suffix)) return *it;
    }
  }
  return words.empty() ? std::string_view{} : words.front();
}

}  // namespace

namespace {
constexpr std::string_view kWholeGraphPrefix = "CUDA graph ";
constexpr std::string_view kWholeGraphSuffix = " (launched as a whole)";
}  // namespace

std::string wholeGraphName(int64_t graph_id) {
  return std::string(kWholeGraphPrefix) + std::to_string(graph_id) + std::string(kWholeGraphSuffix);
}

bool isWholeGraphName(std::string_view name) {
  if (!name.starts_with(kWholeGraphPrefix) || !name.ends_with(kWholeGraphSuffix)) return false;
  const std::string_view id =
      name.substr(kWholeGraphPrefix.size(), name.size() - kWholeGraphPrefix.size() - kWholeGraphSuffix.size());
  return !id.empty() && id.find_first_not_of("0123456789") == std::string_view::npos;
}

std::string shortKernelName(std::string_view full_name, size_t max_length) {
  std::string stripped(full_name);  // without "(anonymous namespace)::", whose parenthesis is not an argument list
  constexpr std::string_view kAnonymous = "(anonymous namespace)::";
  for (size_t at; (at = stripped.find(kAnonymous)) != std::string::npos;) stripped.erase(at, kAnonymous.size());
  std::string_view name = stripped;
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  const size_t open = name.find_first_of("<(");
  std::string out;
  if (open == std::string_view::npos) {
    out = std::string(name);
  } else {
    std::string_view outer = name.substr(0, open);
    if (const size_t colons = outer.rfind("::"); colons != std::string_view::npos) outer.remove_prefix(colons + 2);
    const std::string_view inner = innerName(name.substr(open));
    out = std::string(outer) + (inner.empty() || inner == outer ? "" : "<" + std::string(inner) + ">");
  }
  return ellipsize(out, max_length);
}

std::string ellipsize(std::string_view text, size_t max_length) {
  if (text.size() <= max_length) return std::string(text);
  size_t cut = max_length > 0 ? max_length - 1 : 0;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // a UTF-8 continuation byte
  return std::string(text.substr(0, cut)) + "…";
}

}  // namespace gpuscope::analysis
