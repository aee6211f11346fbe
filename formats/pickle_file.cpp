#include "formats/pickle_file.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gpuscope {

namespace {

using nlohmann::json;

// A Python value under construction, as an index into the unpickler's nodes. Dicts and lists are shared:
// the memo refers to the same object the stack does, and items set after it was memoised must show through
// both, as in Python. Indexes rather than owning pointers, since a pickle can make a list that holds itself.
using NodePtr = size_t;
struct Node {
  enum class Kind { kNone, kBool, kInt, kFloat, kString, kList, kDict } kind = Kind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string text;
  std::vector<NodePtr> items;                     // list or tuple
  std::vector<std::pair<NodePtr, NodePtr>> dict;  // in insertion order
};

constexpr int kMaxDepth = 256;
// Pickled strings are bytes, not always UTF-8; a key written as JSON text must not throw on them.
constexpr auto kReplaceBadUtf8 =
    nlohmann::json::error_handler_t::replace;  // nesting beyond this (or a list that holds itself) is not snapshot data

class Unpickler {
 public:
  explicit Unpickler(std::string_view bytes) : in_(bytes) {}

  Result<json> run() {
    while (pos_ < in_.size()) {
      const size_t at = pos_;
      const auto op = static_cast<uint8_t>(in_[pos_++]);
      if (op == '.') return finish(at);
      if (!step(op))
        return error(at, error_.empty() ? "opcode 0x" + hex(op) +
                                              " makes a Python object, not plain data (dicts, lists, strings, numbers)"
                                        : error_);
    }
    return error(pos_, "the file ends before its STOP opcode (truncated)");
  }

 private:
  // One opcode; false (with error_ set, or for an opcode outside plain data) when it cannot be read.
  bool step(uint8_t op) {
    switch (op) {
      case 0x80: return skip(1);                       // PROTO
      case 0x95: return skip(8);                       // FRAME: a length hint
      case '}': return push(make(Node::Kind::kDict));  // EMPTY_DICT
      case ']':
      case ')': return push(make(Node::Kind::kList));          // EMPTY_LIST, EMPTY_TUPLE
      case '(': marks_.push_back(stack_.size()); return true;  // MARK
      case 'N': return push(make(Node::Kind::kNone));          // NONE
      case 0x88:
      case 0x89: return pushBool(op == 0x88);  // NEWTRUE, NEWFALSE
      case 'K': return pushInt(1, false);      // BININT1
      case 'M': return pushInt(2, false);      // BININT2
      case 'J': return pushInt(4, true);       // BININT
      case 0x8a: return pushLong(1);           // LONG1
      case 0x8b: return pushLong(4);           // LONG4
      case 'G': return pushFloat();            // BINFLOAT
      case 0x8c:
      case 'C': return pushText(1);  // SHORT_BINUNICODE, SHORT_BINBYTES
      case 'X':
      case 'B': return pushText(4);  // BINUNICODE, BINBYTES
      case 0x8d:
      case 0x8e: return pushText(8);                                   // BINUNICODE8, BINBYTES8
      case 0x94: return memoize(memo_.size());                         // MEMOIZE
      case 'q': return readUnsigned(1).has_value() && memoize(last_);  // BINPUT
      case 'r': return readUnsigned(4).has_value() && memoize(last_);  // LONG_BINPUT
      case 'h': return readUnsigned(1).has_value() && recall(last_);   // BINGET
      case 'j': return readUnsigned(4).has_value() && recall(last_);   // LONG_BINGET
      case 'a': return append(1);                                      // APPEND
      case 'e': return append(0);                                      // APPENDS (to the mark)
      case 's': return setItems(2);                                    // SETITEM
      case 'u': return setItems(0);                                    // SETITEMS (to the mark)
      case 't': return tuple(0);                                       // TUPLE (from the mark)
      case 0x85:
      case 0x86:
      case 0x87: return tuple(op - 0x84);                       // TUPLE1, TUPLE2, TUPLE3
      case '0': return pop(1);                                  // POP
      case '1': return popMark();                               // POP_MARK
      case '2': return !stack_.empty() && push(stack_.back());  // DUP
      default: return false;
    }
  }

  NodePtr make(Node::Kind kind) {
    nodes_.emplace_back().kind = kind;
    return nodes_.size() - 1;
  }
  Node& at(NodePtr n) { return nodes_[n]; }
  bool push(NodePtr n) {
    stack_.push_back(n);
    return true;
  }
  bool fail(std::string why) {
    error_ = std::move(why);
    return false;
  }
  bool skip(size_t n) {
    if (in_.size() - pos_ < n) return fail("the file ends inside an opcode (truncated)");
    pos_ += n;
    return true;
  }
  // Little-endian unsigned of n bytes into last_; nothing when the input ends first.
  std::optional<uint64_t> readUnsigned(size_t n) {
    if (in_.size() - pos_ < n) {
      fail("the file ends inside an opcode (truncated)");
      return std::nullopt;
    }
    uint64_t v = 0;
    for (size_t k = 0; k < n; ++k) v |= static_cast<uint64_t>(static_cast<uint8_t>(in_[pos_ + k])) << (8 * k);
    pos_ += n;
    return last_ = v;
  }
  bool pushBool(bool value) {
    const NodePtr n = make(Node::Kind::kBool);
    at(n).boolean = value;
    return push(n);
  }
  bool pushInt(size_t bytes, bool is_signed) {
    const std::optional<uint64_t> v = readUnsigned(bytes);
    if (!v) return false;
    const NodePtr n = make(Node::Kind::kInt);
    at(n).integer = is_signed ? static_cast<int32_t>(static_cast<uint32_t>(*v)) : static_cast<int64_t>(*v);
    return push(n);
  }
  // A two's-complement little-endian integer of a length given in `length_bytes` bytes.
  bool pushLong(size_t length_bytes) {
    const std::optional<uint64_t> length = readUnsigned(length_bytes);
    if (!length) return false;
    if (*length > 8) return fail("an integer is wider than 64 bits");
    const std::optional<uint64_t> v = readUnsigned(static_cast<size_t>(*length));
    if (!v) return false;
    const NodePtr n = make(Node::Kind::kInt);
    const unsigned bits = static_cast<unsigned>(*length) * 8;
    at(n).integer = bits == 0 || bits == 64 ? static_cast<int64_t>(*v)
                                            : static_cast<int64_t>(*v << (64 - bits)) >> (64 - bits);  // sign-extend
    return push(n);
  }
  bool pushFloat() {
    if (in_.size() - pos_ < 8) return fail("the file ends inside an opcode (truncated)");
    uint64_t big = 0;
    for (size_t k = 0; k < 8; ++k) big = (big << 8) | static_cast<uint8_t>(in_[pos_ + k]);  // big-endian
    pos_ += 8;
    const NodePtr n = make(Node::Kind::kFloat);
    at(n).real = std::bit_cast<double>(big);
    return push(n);
  }
  bool pushText(size_t length_bytes) {
    const std::optional<uint64_t> length = readUnsigned(length_bytes);
    if (!length) return false;
    if (in_.size() - pos_ < *length) return fail("the file ends inside a string (truncated)");
    const NodePtr n = make(Node::Kind::kString);
    at(n).text.assign(in_.substr(pos_, static_cast<size_t>(*length)));
    pos_ += static_cast<size_t>(*length);
    return push(n);
  }
  bool memoize(uint64_t index) {
    if (stack_.empty()) return fail("a MEMOIZE comes with an empty stack");
    memo_[index] = stack_.back();
    return true;
  }
  bool recall(uint64_t index) {
    auto it = memo_.find(index);
    return it == memo_.end() ? fail("memo entry " + std::to_string(index) + " is read but was never stored")
                             : push(it->second);
  }
  // The start of the items an opcode takes: `count` from the top, or (count 0) everything above the mark.
  std::optional<size_t> itemsStart(size_t count) {
    if (count == 0) {
      if (marks_.empty()) {
        fail("items are taken to a MARK never set");
        return std::nullopt;
      }
      const size_t start = marks_.back();
      marks_.pop_back();
      if (start > stack_.size()) {  // a POP took items from below the mark
        fail("items are taken to a MARK below the stack's top");
        return std::nullopt;
      }
      return start;
    }
    if (stack_.size() < count) {
      fail("items are taken from a stack too short");
      return std::nullopt;
    }
    return stack_.size() - count;
  }
  bool append(size_t count) {
    const std::optional<size_t> start = itemsStart(count);
    if (!start) return false;
    if (*start == 0 || at(stack_[*start - 1]).kind != Node::Kind::kList)
      return fail("an APPEND goes to something that is not a list");
    auto& items = at(stack_[*start - 1]).items;
    items.insert(items.end(), stack_.begin() + static_cast<std::ptrdiff_t>(*start), stack_.end());
    stack_.resize(*start);
    return true;
  }
  bool setItems(size_t count) {
    const std::optional<size_t> start = itemsStart(count);
    if (!start) return false;
    if (*start == 0 || at(stack_[*start - 1]).kind != Node::Kind::kDict || (stack_.size() - *start) % 2) {
      return fail("a SETITEM goes to something that is not a dict, or a key has no value");
    }
    auto& dict = at(stack_[*start - 1]).dict;
    for (size_t k = *start; k < stack_.size(); k += 2) dict.emplace_back(stack_[k], stack_[k + 1]);
    stack_.resize(*start);
    return true;
  }
  bool tuple(size_t count) {
    const std::optional<size_t> start = itemsStart(count);
    if (!start) return false;
    const NodePtr t = make(Node::Kind::kList);
    at(t).items.assign(stack_.begin() + static_cast<std::ptrdiff_t>(*start), stack_.end());
    stack_.resize(*start);
    return push(t);
  }
  bool pop(size_t count) {
    if (stack_.size() < count) return fail("a POP finds an empty stack");
    stack_.resize(stack_.size() - count);
    return true;
  }
  bool popMark() {
    const std::optional<size_t> start = itemsStart(0);
    if (start) stack_.resize(*start);
    return start.has_value();
  }

  Result<json> finish(size_t at) {
    if (stack_.size() != 1) return error(at, "STOP finds " + std::to_string(stack_.size()) + " values, not one");
    json out;
    if (!toJson(stack_.front(), out, 0)) {
      return error(at, "values nest deeper than " + std::to_string(kMaxDepth) +
                           " or repeat shared lists far beyond the file's size (or a list holds itself)");
    }
    return out;
  }
  bool toJson(NodePtr node, json& out, int depth) {
    // A memoised list can be written many times over; plain data never expands far beyond its pickle.
    if (depth > kMaxDepth || ++emitted_ > 4 * in_.size() + 1024) return false;
    const Node& n = nodes_[node];
    switch (n.kind) {
      case Node::Kind::kNone: out = nullptr; return true;
      case Node::Kind::kBool: out = n.boolean; return true;
      case Node::Kind::kInt: out = n.integer; return true;
      case Node::Kind::kFloat: out = n.real; return true;
      case Node::Kind::kString: out = n.text; return true;
      case Node::Kind::kList:
        out = json::array();
        for (const NodePtr& item : n.items) {
          if (!toJson(item, out.emplace_back(), depth + 1)) return false;
        }
        return true;
      case Node::Kind::kDict:
        out = json::object();
        for (const auto& [key, value] : n.dict) {
          json k;
          if (!toJson(key, k, depth + 1)) return false;
          const std::string name = k.is_string() ? k.get<std::string>() : k.dump(-1, ' ', false, kReplaceBadUtf8);
          if (!toJson(value, out[name], depth + 1)) return false;
        }
        return true;
    }
    return false;
  }
  static std::string hex(uint8_t op) {
    const char* digits = "0123456789abcdef";
    return {digits[op >> 4], digits[op & 15]};
  }
  static Status error(size_t at, const std::string& why) {
    return Status(ErrorKind::kBadFormat, "not a pickle of plain data: at byte " + std::to_string(at) + ", " + why);
  }

  std::string_view in_;
  size_t pos_ = 0;
  uint64_t last_ = 0;   // the operand readUnsigned read last
  size_t emitted_ = 0;  // JSON values written so far
  std::vector<Node> nodes_;
  std::vector<NodePtr> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, NodePtr> memo_;
  std::string error_;
};

}  // namespace

Result<json> parsePickle(std::string_view bytes) { return Unpickler(bytes).run(); }

Result<json> readPickleFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(ErrorKind::kNotFound, path + ": cannot open");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<json> parsed = parsePickle(bytes);
  if (!parsed) return Status(parsed.status().kind(), path + ": " + parsed.status().message());
  return parsed;
}

bool looksLikePickle(std::string_view head) {
  return head.size() >= 2 && static_cast<uint8_t>(head[0]) == 0x80 && static_cast<uint8_t>(head[1]) >= 2;
}

}  // namespace gpuscope
