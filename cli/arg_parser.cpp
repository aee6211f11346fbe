#include "cli/arg_parser.h"

#include <cstdlib>

#include <algorithm>

namespace gpuscope::cli {

std::optional<std::string> ParsedArgs::get(std::string_view name) const {
  auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

namespace {

const OptionSpec* findSpec(std::span<const OptionSpec> specs, std::string_view arg) {
  for (const OptionSpec& spec : specs) {
    if (arg.starts_with("--") && arg.substr(2) == spec.name) return &spec;
    if (arg.size() == 2 && arg[0] == '-' && spec.short_name != 0 && arg[1] == spec.short_name) return &spec;
  }
  return nullptr;
}

Status usageError(std::string message) { return Status(ErrorKind::kUsage, std::move(message)); }

}  // namespace

Result<ParsedArgs> parseArgs(std::span<const std::string> args, std::span<const OptionSpec> specs) {
  ParsedArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") {
      parsed.has_separator = true;
      parsed.after_separator.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      parsed.positional.emplace_back(arg);
      continue;
    }
    std::optional<std::string_view> inline_value;
    if (const size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    const OptionSpec* spec = findSpec(specs, arg);
    if (!spec) return usageError("unknown option '" + std::string(arg) + "'");
    std::string value;
    if (!spec->value.empty()) {
      if (inline_value) {
        value = *inline_value;
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return usageError("option --" + std::string(spec->name) + " needs a value (" + std::string(spec->value) + ")");
      }
    } else if (inline_value) {
      return usageError("option --" + std::string(spec->name) + " takes no value");
    }
    parsed.values[std::string(spec->name)] = value;
  }
  return parsed;
}

std::string formatOptions(std::span<const OptionSpec> specs) {
  std::vector<std::string> left;
  size_t width = 0;
  for (const OptionSpec& spec : specs) {
    std::string l = spec.short_name ? std::string("-") + spec.short_name + ", " : "    ";
    l += "--" + std::string(spec.name);
    if (!spec.value.empty()) l += " " + std::string(spec.value);
    width = std::max(width, l.size());
    left.push_back(std::move(l));
  }
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i) {
    out += "  " + left[i] + std::string(width - left[i].size() + 3, ' ') + std::string(specs[i].help) + "\n";
  }
  return out;
}

Result<int64_t> countOption(const ParsedArgs& args, std::string_view name, int64_t fallback) {
  const std::optional<std::string> text = args.get(name);
  if (!text) return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(text->c_str(), &end, 10);
  if (text->empty() || *end != '\0' || value < 0) {
    return Status(ErrorKind::kUsage,
                  "--" + std::string(name) + " takes a whole number, 0 or more (not '" + *text + "')");
  }
  return static_cast<int64_t>(value);
}

}  // namespace gpuscope::cli
