// The static pickle scanner. Opcode meanings follow Python's pickletools documentation.
//
// Note [Symbolic stack]
// The scanner runs the pickle's stack machine on what each slot *is*, never on values: a string
// (its text, for STACK_GLOBAL and for the payload of a pickle.loads call), a global, the result
// of calling a global, a tuple whose first item is a string (the arguments of pickle.loads), or
// something else. Every opcode pushes at most one slot and MARK-based opcodes pop what they take,
// so time is linear in the input and the stack, the memo and the texts are each at most as long
// as the input. Strings are spans of the input, except the escaped text of STRING and UNICODE
// (protocol 0), which is decoded once. A malformed pickle stops the scan where Python's
// unpickler would stop: what came before has been run by then, so it is still reported.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "pickle_globals.hpp"
#include "tfdebug/io/pickle_scan.hpp"

namespace tfdebug::io {
namespace {

constexpr int kMaxNesting = 4;  // pickles inside pickle.loads arguments, scanned this deep

struct Malformed {
  std::string problem;
};

enum class Slot : std::uint8_t { other, text, global, result, text_tuple, unset };

// Note [Scan limits]: what the scanner keeps is bounded whatever the input, so that a hostile
// pickle cannot make it use more than a few hundred MB: real pickles stay far below these (their
// stack is a few containers deep, their memo one entry per object).
constexpr std::size_t kMaxStack = 4'000'000;
constexpr std::size_t kMaxMarks = 1'000'000;
constexpr std::size_t kMaxTexts = 6'000'000;
constexpr std::size_t kMaxDenseMemo = 16'000'000;  // memo keys below this live in a vector
constexpr std::size_t kMaxSparseMemo = 1'000'000;

constexpr std::uint32_t kNone = 0xFFFFFFFF;

struct Item {
  Slot slot = Slot::other;
  std::uint32_t ref = 0;         // texts_ for text / text_tuple, globals for global / result
  std::uint32_t second = kNone;  // text_tuple: texts_ of its second item, when that is a string
};

struct Text {
  std::uint64_t offset = 0;  // in the input, or in the pool of decoded text
  std::uint64_t size = 0;
  bool in_pool = false;  // STRING and UNICODE text after their escapes, _codecs.encode results
  bool is_str = true;    // a Python str (not bytes): what STACK_GLOBAL accepts
};

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// STRING's argument: a quoted Python 2 literal, unescaped as codecs.escape_decode does.
std::string escape_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    switch (c) {
      case '\n':
        break;
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x': {
        const int hi = i + 1 < s.size() ? hex_digit(s[i + 1]) : -1;
        const int lo = i + 2 < s.size() ? hex_digit(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) throw Malformed{"a STRING has an invalid \\x escape"};
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          int v = c - '0';
          for (int k = 0; k < 2 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7'; ++k)
            v = v * 8 + (s[++i] - '0');
          out += static_cast<char>(v & 0xFF);
        } else {
          out += '\\';
          out += c;
        }
    }
  }
  return out;
}

// UNICODE's argument: raw-unicode-escape (\uXXXX and \UXXXXXXXX; other bytes are Latin-1).
std::string raw_unicode_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::size_t width = i + 1 < s.size() && s[i] == '\\' ? (s[i + 1] == 'u'   ? 4
                                                                  : s[i + 1] == 'U' ? 8
                                                                                    : 0)
                                                               : 0;
    if (width == 0 || i + 2 + width > s.size()) {
      append_utf8(out, static_cast<unsigned char>(s[i]));
      continue;
    }
    std::uint32_t cp = 0;
    for (std::size_t k = 0; k < width; ++k) {
      const int d = hex_digit(s[i + 2 + k]);
      if (d < 0) throw Malformed{"a UNICODE string has an invalid \\u escape"};
      cp = cp * 16 + static_cast<std::uint32_t>(d);
    }
    if (cp > 0x10FFFF) throw Malformed{"a UNICODE string escapes a code point past U+10FFFF"};
    append_utf8(out, cp);
    i += 1 + width;
  }
  return out;
}

std::string hex(unsigned v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[(v >> 4) & 0xF] + kDigits[v & 0xF];
}

class Scanner {
 public:
  Scanner(PickleScan& out, std::span<const std::byte> bytes, int depth)
      : out_(out), bytes_(bytes), depth_(depth) {}

  void run() {
    try {
      loop();
    } catch (const Malformed& m) {
      out_.problem = m.problem + " (pickle offset " + std::to_string(op_at_) + ")";
    }
    out_.end = pos_;
    for (PickleGlobal& g : out_.globals) {
      if (g.modified && g.risk < GlobalRisk::imports) {
        g.risk = GlobalRisk::imports;
        g.reason = "BUILD sets attributes of the global itself (monkey-patching it)";
      }
    }
  }

 private:
  std::uint64_t read_le(std::size_t width) {
    const std::span<const std::byte> raw = read_bytes(width, "an operand");
    std::uint64_t v = 0;
    for (std::size_t i = width; i-- > 0;) v = (v << 8) | static_cast<std::uint8_t>(raw[i]);
    return v;
  }

  std::span<const std::byte> read_bytes(std::uint64_t n, const char* what) {
    if (n > bytes_.size() - pos_) {
      throw Malformed{std::string(what) + " of " + std::to_string(n) +
                      " bytes runs past the end of the pickle (" + std::to_string(bytes_.size() - pos_) +
                      " left)"};
    }
    const std::span<const std::byte> out = bytes_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }

  std::string_view read_line(const char* what) {
    const std::size_t start = pos_;
    const auto* begin = reinterpret_cast<const char*>(bytes_.data());
    const void* nl = pos_ < bytes_.size() ? std::memchr(begin + pos_, '\n', bytes_.size() - pos_) : nullptr;
    if (nl == nullptr) throw Malformed{std::string(what) + " has no end of line"};
    pos_ = static_cast<std::size_t>(static_cast<const char*>(nl) - begin) + 1;
    std::string_view line(begin + start, pos_ - start - 1);
    if (line.ends_with('\r')) line.remove_suffix(1);  // written on Windows in text mode
    return line;
  }

  std::uint64_t read_decimal(const char* what) {
    const std::string_view line = read_line(what);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
    if (ec != std::errc() || end != line.data() + line.size()) {
      throw Malformed{std::string(what) + " is not a decimal number"};
    }
    return v;
  }

  void push(Item item) {
    if (stack_.size() >= kMaxStack) {
      throw Malformed{"the stack grows past " + std::to_string(kMaxStack) +
                      " entries; tfdebug stops scanning there"};
    }
    stack_.push_back(item);
  }

  std::string_view view(const Text& t) const {
    const char* base = t.in_pool ? pool_.data() : reinterpret_cast<const char*>(bytes_.data());
    return {base + t.offset, static_cast<std::size_t>(t.size)};
  }
  std::string_view view(std::uint32_t ref) const { return view(texts_[ref]); }

  Item add_text(Text t) {
    if (texts_.size() >= kMaxTexts) {
      throw Malformed{"the pickle holds more than " + std::to_string(kMaxTexts) +
                      " strings; tfdebug stops scanning there"};
    }
    texts_.push_back(t);
    return {Slot::text, static_cast<std::uint32_t>(texts_.size() - 1)};
  }

  void memo_put(std::uint64_t key, Item item) {
    // Keys in order (MEMOIZE, and what pickle's BINPUT writes) go to the vector; a key far past
    // its end would make a small pickle allocate much, so it goes to the map.
    if (key < kMaxDenseMemo && (key < dense_memo_.size() || key <= 2 * dense_memo_.size() + 1024)) {
      if (key >= dense_memo_.size()) dense_memo_.resize(static_cast<std::size_t>(key) + 1, Item{Slot::unset});
      if (dense_memo_[key].slot == Slot::unset) ++memo_count_;
      dense_memo_[key] = item;
      return;
    }
    if (!sparse_memo_.contains(key)) {
      if (sparse_memo_.size() >= kMaxSparseMemo) {
        throw Malformed{"the memo holds more than " + std::to_string(kMaxSparseMemo) +
                        " sparse keys; tfdebug stops scanning there"};
      }
      ++memo_count_;
    }
    sparse_memo_[key] = item;
  }

  Item memo_get(std::uint64_t key) const {
    if (key < dense_memo_.size() && dense_memo_[key].slot != Slot::unset) return dense_memo_[key];
    const auto it = sparse_memo_.find(key);
    if (it == sparse_memo_.end()) throw Malformed{"memo entry " + std::to_string(key) + " was never stored"};
    return it->second;
  }

  Item pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) throw Malformed{"stack underflow"};
    const Item item = stack_.back();
    stack_.pop_back();
    return item;
  }

  Item& top() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) throw Malformed{"stack underflow"};
    return stack_.back();
  }

  // Pops to the last MARK; returns the first item popped, if any.
  std::optional<Item> pop_to_mark(std::vector<Item>* items = nullptr) {
    if (marks_.empty()) throw Malformed{"no MARK to pop to"};
    const std::size_t mark = marks_.back();
    marks_.pop_back();
    std::optional<Item> first;
    if (stack_.size() > mark) first = stack_[mark];
    if (items != nullptr) items->assign(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return first;
  }

  Item text(std::span<const std::byte> raw, bool is_str) {
    return add_text({static_cast<std::uint64_t>(raw.data() - bytes_.data()), raw.size(), false, is_str});
  }

  Item decoded_text(const std::string& decoded) { return pooled(decoded, true); }

  Item pooled(const std::string& text, bool is_str) {
    const Item item = add_text({pool_.size(), text.size(), true, is_str});
    pool_ += text;
    return item;
  }

  // A tuple is remembered only when it starts with a string: the arguments of pickle.loads,
  // _load_from_bytes and _codecs.encode.
  static Item tuple(const std::vector<Item>& items) {
    if (items.empty() || items[0].slot != Slot::text) return {};
    return {Slot::text_tuple, items[0].ref,
            items.size() > 1 && items[1].slot == Slot::text ? items[1].ref : kNone};
  }

  // _codecs.encode(text, 'latin1'): how protocol 2 stores bytes (numpy arrays, torch storages
  // pickled with plain pickle). The result is those bytes, for a _load_from_bytes around it.
  std::optional<Item> latin1_bytes(const Item& args) {
    if (args.slot != Slot::text_tuple || args.second == kNone) return std::nullopt;
    const std::string_view encoding = view(args.second);
    if (encoding != "latin1" && encoding != "latin-1" && encoding != "iso-8859-1") return std::nullopt;
    if (const auto it = encoded_.find(args.ref); it != encoded_.end()) return Item{Slot::text, it->second};
    const std::string_view text = view(args.ref);
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c < 0x80) {
        out += static_cast<char>(c);
      } else if ((c == 0xC2 || c == 0xC3) && i + 1 < text.size()) {  // U+0080..U+00FF in UTF-8
        out += static_cast<char>(((c & 0x03U) << 6) | (static_cast<unsigned char>(text[++i]) & 0x3FU));
      } else {
        return std::nullopt;  // not Latin-1: encode would fail
      }
    }
    const Item item = pooled(out, false);
    encoded_.emplace(args.ref, item.ref);
    return item;
  }

  Item global(const std::string& module, const std::string& name) {
    std::string full = module + "." + name;
    const auto [it, fresh] = index_.try_emplace(std::move(full), out_.globals.size());
    if (fresh) {
      PickleGlobal g;
      detail::GlobalVerdict v =
          module == "copyreg extension"
              ? detail::GlobalVerdict{GlobalRisk::imports,
                                      "an extension code of copyreg's registry, which "
                                      "the loading program fills: tfdebug cannot resolve it"}
              : detail::classify_global(module, name);
      g.module = printable(module);
      g.name = printable(name);
      g.offset = op_at_;
      g.risk = v.risk;
      g.reason = std::move(v.reason);
      out_.globals.push_back(std::move(g));
    }
    ++out_.globals[it->second].references;
    return {Slot::global, static_cast<std::uint32_t>(it->second)};
  }

  // REDUCE, NEWOBJ, NEWOBJ_EX, INST, OBJ.
  void call(Item callable, std::optional<Item> args) {
    if (callable.slot != Slot::global && callable.slot != Slot::result) {
      throw Malformed{"calls something that is not a global or the result of one"};
    }
    PickleGlobal& g = out_.globals[callable.ref];
    g.called = true;
    if (callable.slot == Slot::global && detail::unpickles_argument(g.module, g.name)) {
      if (args && args->slot == Slot::text_tuple && depth_ < kMaxNesting) {
        // Each payload once: a memoised payload called again says nothing new (and would make
        // the scan quadratic).
        if (scanned_payloads_.insert(args->ref).second) nested(g.full_name(), args->ref);
      } else if (g.risk != GlobalRisk::runs_code) {
        g.risk = GlobalRisk::runs_code;
        g.reason = depth_ >= kMaxNesting ? "unpickles a pickle nested deeper than tfdebug scans"
                                         : "unpickles bytes made while loading, which tfdebug cannot see";
      }
    }
    if (callable.slot == Slot::global && g.module == "_codecs" && g.name == "encode" && args) {
      if (const std::optional<Item> bytes = latin1_bytes(*args)) {
        push(*bytes);
        return;
      }
    }
    push({Slot::result, callable.ref});
  }

  void nested(const std::string& by, std::uint32_t payload) {
    // The payload lives in the input, or in pool_, which does not change while it is scanned.
    const std::string_view bytes = view(payload);
    const std::span<const std::byte> raw(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
    const std::string origin = out_.origin + " > " + by + " argument at offset " + std::to_string(op_at_);
    // torch.storage._load_from_bytes runs torch.load on a legacy torch.save: five pickles.
    const int pickles = by == "torch.storage._load_from_bytes" ? 5 : 1;
    std::size_t at = 0;
    for (int i = 0; i < pickles && at < raw.size(); ++i) {
      PickleScan inner;
      inner.origin = pickles == 1 ? origin : origin + " pickle " + std::to_string(i + 1);
      Scanner(inner, raw.subspan(at), depth_ + 1).run();
      at += inner.end;
      const bool stop = !inner.problem.empty();
      out_.nested.push_back(std::move(inner));
      if (stop) break;
    }
  }

  void loop() {
    while (true) {
      op_at_ = pos_;
      if (pos_ >= bytes_.size()) throw Malformed{"ends without STOP"};
      const auto op = static_cast<std::uint8_t>(bytes_[pos_++]);
      switch (op) {
        case 0x80: {  // PROTO
          const std::uint64_t proto = read_le(1);
          if (proto > 5) throw Malformed{"pickle protocol " + std::to_string(proto) + " is newer than 5"};
          break;
        }
        case 0x95:  // FRAME: a length hint; its opcodes follow inline
          (void)read_le(8);
          break;
        case '.':  // STOP
          (void)pop();
          return;
        case '(':  // MARK
          if (marks_.size() >= kMaxMarks) {
            throw Malformed{"MARK nesting deeper than " + std::to_string(kMaxMarks) +
                            "; tfdebug stops scanning there"};
          }
          marks_.push_back(stack_.size());
          break;
        case '0':  // POP
          (void)pop();
          break;
        case '1':  // POP_MARK
          (void)pop_to_mark();
          break;
        case '2':  // DUP
          push(top());
          break;
        case 'N':   // NONE
        case 0x88:  // NEWTRUE
        case 0x89:  // NEWFALSE
        case ')':   // EMPTY_TUPLE
        case ']':   // EMPTY_LIST
        case '}':   // EMPTY_DICT
        case 0x8f:  // EMPTY_SET
        case 0x97:  // NEXT_BUFFER
          push({});
          break;
        case 'J':  // BININT
          (void)read_le(4);
          push({});
          break;
        case 'K':  // BININT1
          (void)read_le(1);
          push({});
          break;
        case 'M':  // BININT2
          (void)read_le(2);
          push({});
          break;
        case 0x8a:  // LONG1
          (void)read_bytes(read_le(1), "an integer");
          push({});
          break;
        case 0x8b:  // LONG4
          (void)read_bytes(read_le(4), "an integer");
          push({});
          break;
        case 'G':  // BINFLOAT
          (void)read_bytes(8, "a float");
          push({});
          break;
        case 'I':  // INT
        case 'L':  // LONG
        case 'F':  // FLOAT
          (void)read_line("a number");
          push({});
          break;
        case 'S': {  // STRING: a quoted, escaped literal
          const std::string_view line = read_line("a STRING");
          if (line.size() < 2 || line.front() != line.back() ||
              (line.front() != '\'' && line.front() != '"')) {
            throw Malformed{"a STRING argument is not quoted"};
          }
          push(decoded_text(escape_decode(line.substr(1, line.size() - 2))));
          break;
        }
        case 'V':  // UNICODE
          push(decoded_text(raw_unicode_decode(read_line("a UNICODE string"))));
          break;
        case 'U':  // SHORT_BINSTRING (a str in Python 3)
          push(text(read_bytes(read_le(1), "a string"), true));
          break;
        case 'T':  // BINSTRING
          push(text(read_bytes(read_le(4), "a string"), true));
          break;
        case 0x8c:  // SHORT_BINUNICODE
          push(text(read_bytes(read_le(1), "a string"), true));
          break;
        case 'X':  // BINUNICODE
          push(text(read_bytes(read_le(4), "a string"), true));
          break;
        case 0x8d:  // BINUNICODE8
          push(text(read_bytes(read_le(8), "a string"), true));
          break;
        case 'C':  // SHORT_BINBYTES
          push(text(read_bytes(read_le(1), "a byte string"), false));
          break;
        case 'B':  // BINBYTES
          push(text(read_bytes(read_le(4), "a byte string"), false));
          break;
        case 0x8e:  // BINBYTES8
        case 0x96:  // BYTEARRAY8
          push(text(read_bytes(read_le(8), "a byte string"), false));
          break;
        case 0x98:  // READONLY_BUFFER
          (void)top();
          break;
        case 't': {  // TUPLE
          std::vector<Item> items;
          (void)pop_to_mark(&items);
          push(tuple(items));
          break;
        }
        case 0x85:    // TUPLE1
        case 0x86:    // TUPLE2
        case 0x87: {  // TUPLE3
          std::vector<Item> items(op - 0x84U);
          for (std::size_t i = items.size(); i > 0; --i) items[i - 1] = pop();
          push(tuple(items));
          break;
        }
        case 'l':   // LIST
        case 'd':   // DICT
        case 0x91:  // FROZENSET
          (void)pop_to_mark();
          push({});
          break;
        case 'a':  // APPEND
          (void)pop();
          (void)top();
          break;
        case 's':  // SETITEM
          (void)pop();
          (void)pop();
          (void)top();
          break;
        case 'e':   // APPENDS
        case 'u':   // SETITEMS
        case 0x90:  // ADDITEMS
          (void)pop_to_mark();
          (void)top();
          break;
        case 'p':  // PUT
          memo_put(read_decimal("a PUT key"), top());
          break;
        case 'q':  // BINPUT
          memo_put(read_le(1), top());
          break;
        case 'r':  // LONG_BINPUT
          memo_put(read_le(4), top());
          break;
        case 0x94:  // MEMOIZE
          memo_put(memo_count_, top());
          break;
        case 'g':    // GET
        case 'h':    // BINGET
        case 'j': {  // LONG_BINGET
          const std::uint64_t key = op == 'g' ? read_decimal("a GET key") : read_le(op == 'h' ? 1 : 4);
          push(memo_get(key));
          break;
        }
        case 'c': {  // GLOBAL
          const std::string module(read_line("a GLOBAL module name"));
          const std::string name(read_line("a GLOBAL name"));
          push(global(module, name));
          break;
        }
        case 'i': {  // INST: the class from two lines, called with the items since MARK
          const std::string module(read_line("an INST module name"));
          const std::string name(read_line("an INST name"));
          const Item cls = global(module, name);
          (void)pop_to_mark();
          call(cls, std::nullopt);
          break;
        }
        case 'o': {  // OBJ: the class is the first item since MARK, the rest its arguments
          std::vector<Item> items;
          const std::optional<Item> cls = pop_to_mark(&items);
          if (!cls) throw Malformed{"OBJ with nothing after its MARK"};
          call(*cls, std::nullopt);
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          const Item name = pop();
          const Item module = pop();
          const auto is_str = [&](const Item& i) { return i.slot == Slot::text && texts_[i.ref].is_str; };
          constexpr std::size_t kMaxName = 4096;  // longer is no module or attribute anyone imports
          if (is_str(module) && is_str(name) &&
              (view(module.ref).size() > kMaxName || view(name.ref).size() > kMaxName)) {
            throw Malformed{"a STACK_GLOBAL name is longer than 4096 bytes"};
          }
          if (is_str(module) && is_str(name)) {
            push(global(std::string(view(module.ref)), std::string(view(name.ref))));
          } else if (module.slot == Slot::result || module.slot == Slot::global ||
                     name.slot == Slot::result || name.slot == Slot::global) {
            // A name made while unpickling (the result of a call, or a global that is a str):
            // nothing but running the pickle says what it imports.
            const Item g = global("<computed>", "<computed>");
            out_.globals[g.ref].risk = GlobalRisk::runs_code;
            out_.globals[g.ref].reason = "imports a global whose name is computed while unpickling";
            push(g);
          } else {
            throw Malformed{"STACK_GLOBAL needs two strings"};
          }
          break;
        }
        case 0x82:  // EXT1
        case 0x83:  // EXT2
        case 0x84:  // EXT4
          push(global("copyreg extension", std::to_string(read_le(op == 0x82 ? 1 : op == 0x83 ? 2 : 4))));
          break;
        case 'R':     // REDUCE
        case 0x81: {  // NEWOBJ
          const Item args = pop();
          call(pop(), args);
          break;
        }
        case 0x92: {    // NEWOBJ_EX
          (void)pop();  // kwargs
          const Item args = pop();
          call(pop(), args);
          break;
        }
        case 'b': {  // BUILD: __setstate__ or setattr on the object below the state
          (void)pop();
          const Item& object = top();
          if (object.slot == Slot::global) out_.globals[object.ref].modified = true;
          break;
        }
        case 'P':  // PERSID
          (void)read_line("a persistent id");
          push({});
          break;
        case 'Q':  // BINPERSID
          (void)pop();
          push({});
          break;
        default:
          throw Malformed{"opcode " + hex(op) + " is not a pickle opcode"};
      }
    }
  }

  PickleScan& out_;
  std::span<const std::byte> bytes_;
  int depth_ = 0;
  std::size_t pos_ = 0;
  std::size_t op_at_ = 0;
  std::vector<Item> stack_;
  std::vector<std::size_t> marks_;
  std::vector<Item> dense_memo_;                         // Note [Scan limits]
  std::unordered_map<std::uint64_t, Item> sparse_memo_;  // keys out of order, or of kMaxDenseMemo and above
  std::uint64_t memo_count_ = 0;                         // distinct keys: MEMOIZE's next key
  std::vector<Text> texts_;
  std::string pool_;                                          // decoded text (Text::in_pool)
  std::unordered_map<std::uint32_t, std::uint32_t> encoded_;  // _codecs.encode: argument -> result
  std::unordered_set<std::uint32_t> scanned_payloads_;        // texts already scanned as nested pickles
  std::unordered_map<std::string, std::size_t> index_;        // "module.name" -> out_.globals
};

}  // namespace

const char* risk_name(GlobalRisk risk) noexcept {
  switch (risk) {
    case GlobalRisk::allowed:
      return "allowed";
    case GlobalRisk::full_module:
      return "full_module";
    case GlobalRisk::imports:
      return "imports";
    case GlobalRisk::runs_code:
      return "runs_code";
  }
  return "imports";
}

GlobalRisk PickleScan::worst() const noexcept {
  GlobalRisk w = GlobalRisk::allowed;
  for (const PickleGlobal& g : globals) w = std::max(w, g.risk);
  for (const PickleScan& n : nested) w = std::max(w, n.worst());
  return w;
}

GlobalRisk FileScan::worst() const noexcept {
  GlobalRisk w = GlobalRisk::allowed;
  for (const PickleScan& p : pickles) w = std::max(w, p.worst());
  return w;
}

PickleScan scan_pickle(std::string origin, std::span<const std::byte> bytes) {
  PickleScan out;
  out.origin = std::move(origin);
  Scanner(out, bytes, 0).run();
  return out;
}

std::string global_message(const PickleGlobal& g) {
  const std::string full = g.full_name();
  switch (g.risk) {
    case GlobalRisk::runs_code:
      return "this file runs code when `torch.load` opens it: " +
             std::string(g.called ? "calls " : "references ") + full + " (" + g.reason + ")";
    case GlobalRisk::imports:
      return "torch.load imports " + g.module + (g.called ? " and calls " : " for ") + full + " (" +
             g.reason + ")";
    case GlobalRisk::full_module:
      return "a full module: " + full;
    case GlobalRisk::allowed:
      break;
  }
  return full + " (" + g.reason + ")";
}

}  // namespace tfdebug::io
