// Writes the fuzzers' seed corpus into DIR: the sample trace, an empty trace, and hostile JSON strings.
#include <cstdio>

#include "tests/support/sample_trace.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seed_corpus DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  gpuscope::Status status = gpuscope::testing::writeSampleTrace(dir + "/sample.gpuscope");
  if (status) status = gpuscope::testing::writeEmptyTrace(dir + "/empty.gpuscope");
  if (!status) {
    std::fprintf(stderr, "fuzz_seed_corpus: %s\n", status.message().c_str());
    return 1;
  }
  gpuscope::testing::writeFile(dir + "/hostile.txt", gpuscope::testing::kHostileKernelName);
  return 0;
}
