#include "formats/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace gpuscope {

namespace {
Status ioError(const std::string& path, std::string_view doing, int err) {
  return Status(ErrorKind::kIo, path + ": cannot " + std::string(doing) + ": " + std::strerror(err));
}
}  // namespace

Result<AtomicFile> AtomicFile::create(const std::string& path, bool overwrite) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Status(ErrorKind::kUsage, path + ": is a directory");
  if (!overwrite && std::filesystem::exists(path, ec)) {
    return Status(ErrorKind::kUsage, path + ": already exists (use --force to overwrite)");
  }
  std::string temp_path = path + ".tmp-" + std::to_string(getpid());
  std::FILE* file = std::fopen(temp_path.c_str(), "wb");
  if (!file) return ioError(path, "write", errno);
  return AtomicFile(file, path, std::move(temp_path));
}

AtomicFile::AtomicFile(std::FILE* file, std::string path, std::string temp_path)
    : file_(file), path_(std::move(path)), temp_path_(std::move(temp_path)) {}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : file_(other.file_), path_(std::move(other.path_)), temp_path_(std::move(other.temp_path_)) {
  other.file_ = nullptr;
  other.temp_path_.clear();
}

AtomicFile::~AtomicFile() {
  if (file_) std::fclose(file_);
  if (!temp_path_.empty()) std::remove(temp_path_.c_str());
}

Status AtomicFile::commit() {
  const bool flushed = std::fflush(file_) == 0 && fsync(fileno(file_)) == 0;
  const int flush_errno = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) return ioError(path_, "write", flushed ? errno : flush_errno);
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) return ioError(path_, "move the output into place", errno);
  temp_path_.clear();
  return Status::ok();
}

Status writeFileAtomically(const std::string& path, std::string_view contents, bool overwrite) {
  Result<AtomicFile> file = AtomicFile::create(path, overwrite);
  if (!file) return file.status();
  if (std::fwrite(contents.data(), 1, contents.size(), file->file()) != contents.size()) {
    return makeError(ErrorKind::kIo, path + ": could not write");
  }
  return file->commit();
}

}  // namespace gpuscope
