// A small command-line parser: long and short options, --name=value, and "--" ending the options
// (everything after it belongs to the profiled program).
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/status.h"

namespace gpuscope::cli {

struct OptionSpec {
  std::string_view name;   // long name without dashes, e.g. "output"
  char short_name;         // e.g. 'o', or 0 for none
  std::string_view value;  // placeholder of its value, e.g. "FILE"; empty for a flag
  std::string_view help;
};

struct ParsedArgs {
  std::map<std::string, std::string, std::less<>> values;  // options given, by long name ("" for flags)
  std::vector<std::string> positional;
  std::vector<std::string> after_separator;  // the words after "--"
  bool has_separator = false;

  bool has(std::string_view name) const { return values.contains(name); }
  std::optional<std::string> get(std::string_view name) const;
};

// Parses args (without the program and command names). Unknown options and missing values are usage errors.
Result<ParsedArgs> parseArgs(std::span<const std::string> args, std::span<const OptionSpec> specs);

// A whole number of 0 or more given as --name (fallback when absent); a usage error otherwise.
Result<int64_t> countOption(const ParsedArgs& args, std::string_view name, int64_t fallback);

// "  -o, --output FILE   help" lines for a command's --help.
std::string formatOptions(std::span<const OptionSpec> specs);

}  // namespace gpuscope::cli
