// libFuzzer target: arbitrary command lines (words separated by NUL bytes) through the CLI's argument parser
// with options of every shape its commands use (flags, values, short names, "--name=value", "--"): parsed
// arguments or one usage error, never a crash.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/arg_parser.h"

namespace {

constexpr gpuscope::cli::OptionSpec kOptions[] = {
    {"output", 'o', "FILE", "where the result goes"},
    {"format", 0, "FORMAT", "output format"},
    {"limit", 0, "N", "rows per table"},
    {"force", 'f', "", "overwrite"},
    {"quiet", 'q', "", "no summary"},
    {"torch", 0, "", "PyTorch bridge"},
    {"help", 'h', "", "help"},
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      words.emplace_back();
    } else {
      words.back().push_back(static_cast<char>(data[i]));
    }
  }
  gpuscope::Result<gpuscope::cli::ParsedArgs> args = gpuscope::cli::parseArgs(words, kOptions);
  if (!args) return 0;
  (void)gpuscope::cli::countOption(*args, "limit", 20);
  (void)args->get("output");
  if (!args->has_separator && !args->after_separator.empty()) __builtin_trap();
  return 0;
}
