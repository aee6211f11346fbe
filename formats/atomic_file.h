// An output file that appears at its path only when complete: it is written to a temporary file in the
// same directory and renamed into place by commit(). Until then an existing file at the path is untouched,
// and a failure (or an exception, or a return without commit) leaves no partial output behind.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "formats/status.h"

namespace gpuscope {

class AtomicFile {
 public:
  // Creates the temporary file; fails with a message naming path if its directory is not writable.
  static Result<AtomicFile> create(const std::string& path, bool overwrite);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  AtomicFile(const AtomicFile&) = delete;
  ~AtomicFile();  // removes the temporary file unless committed

  std::FILE* file() { return file_; }
  const std::string& path() const { return path_; }
  Status commit();  // flush, sync, close, rename into place

 private:
  AtomicFile(std::FILE* file, std::string path, std::string temp_path);
  std::FILE* file_ = nullptr;
  std::string path_;
  std::string temp_path_;
};

// Writes contents to path through an AtomicFile: the file appears complete or not at all.
Status writeFileAtomically(const std::string& path, std::string_view contents, bool overwrite);

}  // namespace gpuscope
