// gpuscope-schema-doc: prints docs/schema.md (default) or the DDL (--sql) generated from the schema definition.
#include <cstdio>
#include <cstring>

#include "formats/schema_info.h"

int main(int argc, char** argv) {
  using namespace gpuscope::schema;
  if (argc > 1 && std::strcmp(argv[1], "--sql") == 0) {
    for (const std::string& sql : createSchemaSql()) std::printf("%s;\n", sql.c_str());
    for (const std::string& sql : createIndexSql()) std::printf("%s;\n", sql.c_str());
    return 0;
  }
  if (argc > 1) {
    std::fprintf(stderr, "usage: gpuscope-schema-doc [--sql]\n");
    return 2;
  }
  std::fputs(schemaMarkdown().c_str(), stdout);
  return 0;
}
