// Error model for gpuscope: every fallible function returns Status or Result<T>,
// and every message names the file and what is wrong with it.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace gpuscope {

enum class ErrorKind {
  kUsage,      // the user asked for something malformed (CLI exit status 2)
  kNotFound,   // a file or object that does not exist
  kBadFormat,  // the input exists but is not what we need (not SQLite, corrupt, wrong schema)
  kVersion,    // a trace written with another schema version
  kIo,         // reading or writing failed (permissions, full disk)
  kEmpty,      // the input is valid but holds nothing to work on
  kInternal,   // a bug in gpuscope
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  Status(ErrorKind kind, std::string message) : failed_(true), kind_(kind), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool isOk() const { return !failed_; }
  explicit operator bool() const { return isOk(); }
  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }

 private:
  bool failed_ = false;
  ErrorKind kind_ = ErrorKind::kInternal;
  std::string message_;
};

inline Status makeError(ErrorKind kind, std::string message) { return Status(kind, std::move(message)); }

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status error) : state_(std::move(error)) { assert(!std::get<Status>(state_).isOk()); }  // NOLINT

  bool isOk() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return isOk(); }
  T& value() { return std::get<T>(state_); }
  const T& value() const { return std::get<T>(state_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const Status& status() const { return std::get<Status>(state_); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace gpuscope

// Early return on failure, for functions that return Status or Result<T>.
#define GPUSCOPE_RETURN_IF_ERROR(expr)   \
  do {                                   \
    ::gpuscope::Status status_ = (expr); \
    if (!status_.isOk()) return status_; \
  } while (false)
