// The pickle stack machine, restricted. Opcode meanings follow Python's pickletools
// documentation; only the opcodes a torch.save data.pkl can hold are accepted.
//
// Note [Pickle limits]
// A pickle is a program, so an unchecked one can ask for anything. Each opcode reads its operand
// only after checking it against the bytes left; strings and byte strings are copied, so their
// total is at most the input size; the stack, the MARK nesting and the number of values built
// are capped (kMaxStack, kMaxMarkDepth, kMaxValues). Containers hold pointers to values owned by
// the Unpickler, so a pickle that appends a list to itself (possible through the memo) makes a
// cycle of plain pointers, not a leak; whoever walks the result bounds its depth.
#include "pickle.hpp"

#include <bit>
#include <cstring>

#include "tfdebug/core/error.hpp"

namespace tfdebug::io::detail::pickle {
namespace {

bool valid_utf8(std::span<const std::byte> s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<std::uint8_t>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1FU;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0FU;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07U;
    } else {
      return false;
    }
    if (s.size() - i - 1 < n) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<std::uint8_t>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3FU);
    }
    static constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

std::string hex(unsigned v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[(v >> 4) & 0xF] + kDigits[v & 0xF];
}

}  // namespace

Unpickler::Unpickler(std::string origin, std::span<const std::byte> bytes, Hooks& hooks)
    : origin_(std::move(origin)), bytes_(bytes), hooks_(hooks) {}

void Unpickler::fail(const std::string& problem) const {
  throw Error(origin_ + ": " + problem + " (pickle offset " + std::to_string(op_at_) + ")");
}

Value* Unpickler::make(Kind kind) {
  if (values_.size() >= kMaxValues) fail("builds more than " + std::to_string(kMaxValues) + " values");
  values_.push_back(std::make_unique<Value>());
  values_.back()->kind = kind;
  return values_.back().get();
}

std::uint64_t Unpickler::read_le(int width) {
  const std::span<const std::byte> raw = read_bytes(static_cast<std::uint64_t>(width), "an operand");
  std::uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(raw[std::size_t(i)]);
  return v;
}

std::span<const std::byte> Unpickler::read_bytes(std::uint64_t n, const char* what) {
  if (n > bytes_.size() - pos_) {
    fail(std::string(what) + " of " + std::to_string(n) + " bytes runs past the end of the pickle (" +
         std::to_string(bytes_.size() - pos_) + " left)");
  }
  const std::span<const std::byte> out = bytes_.subspan(pos_, static_cast<std::size_t>(n));
  pos_ += static_cast<std::size_t>(n);
  return out;
}

std::string Unpickler::read_line(const char* what) {
  constexpr std::size_t kMaxLine = 256;
  const std::size_t start = pos_;
  while (pos_ < bytes_.size() && static_cast<char>(bytes_[pos_]) != '\n') {
    if (pos_ - start == kMaxLine) fail(std::string(what) + " is longer than 256 bytes");
    ++pos_;
  }
  if (pos_ == bytes_.size()) fail(std::string(what) + " has no end of line");
  std::string line(reinterpret_cast<const char*>(bytes_.data() + start), pos_ - start);
  ++pos_;
  if (!valid_utf8(std::as_bytes(std::span(line.data(), line.size()))))
    fail(std::string(what) + " is not UTF-8");
  return line;
}

void Unpickler::push(Value* v) {
  if (stack_.size() >= kMaxStack) fail("stack grows past " + std::to_string(kMaxStack) + " entries");
  stack_.push_back(v);
}

Value* Unpickler::pop() {
  if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("stack underflow");
  Value* v = stack_.back();
  stack_.pop_back();
  return v;
}

Value* Unpickler::top() {
  if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("stack underflow");
  return stack_.back();
}

std::vector<Value*> Unpickler::pop_to_mark() {
  if (marks_.empty()) fail("no MARK to pop to");
  const std::size_t mark = marks_.back();
  marks_.pop_back();
  std::vector<Value*> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
  stack_.resize(mark);
  return items;
}

Value* Unpickler::string_value(std::span<const std::byte> raw) {
  if (!valid_utf8(raw)) fail("a string is not valid UTF-8");
  Value* v = make(Kind::string);
  v->text.assign(reinterpret_cast<const char*>(raw.data()), raw.size());
  return v;
}

Value& Unpickler::load() {
  while (true) {
    op_at_ = pos_;
    if (pos_ >= bytes_.size()) fail("ends without STOP");
    const auto op = static_cast<std::uint8_t>(bytes_[pos_++]);
    switch (op) {
      case 0x80: {  // PROTO
        const std::uint64_t proto = read_le(1);
        if (proto > 5) fail("pickle protocol " + std::to_string(proto) + " is newer than 5");
        break;
      }
      case 0x95:  // FRAME: a length hint; the frame's opcodes follow inline
        (void)read_le(8);
        break;
      case '.': {  // STOP
        Value* result = pop();
        return *result;
      }
      case '(':  // MARK
        if (marks_.size() >= kMaxMarkDepth) fail("MARK nesting deeper than " + std::to_string(kMaxMarkDepth));
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
      case 'N':
        push(make(Kind::none));
        break;
      case 0x88:    // NEWTRUE
      case 0x89: {  // NEWFALSE
        Value* v = make(Kind::boolean);
        v->boolean = op == 0x88;
        push(v);
        break;
      }
      case 'J': {  // BININT: signed 32-bit
        Value* v = make(Kind::integer);
        v->integer = static_cast<std::int32_t>(static_cast<std::uint32_t>(read_le(4)));
        push(v);
        break;
      }
      case 'K':    // BININT1
      case 'M': {  // BININT2
        Value* v = make(Kind::integer);
        v->integer = static_cast<std::int64_t>(read_le(op == 'K' ? 1 : 2));
        push(v);
        break;
      }
      case 0x8a:    // LONG1
      case 0x8b: {  // LONG4
        const std::uint64_t n = read_le(op == 0x8a ? 1 : 4);
        if (n > 8) fail("an integer of " + std::to_string(n) + " bytes does not fit in 64 bits");
        std::uint64_t u = n == 0 ? 0 : read_le(static_cast<int>(n));
        if (n > 0 && n < 8 && (u >> (8 * n - 1)) != 0) u |= ~std::uint64_t{0} << (8 * n);  // sign-extend
        Value* v = make(Kind::integer);
        v->integer = static_cast<std::int64_t>(u);
        push(v);
        break;
      }
      case 'G': {  // BINFLOAT: big-endian IEEE double
        const std::span<const std::byte> raw = read_bytes(8, "a float");
        std::uint64_t u = 0;
        for (std::size_t i = 0; i < 8; ++i) u = (u << 8) | static_cast<std::uint8_t>(raw[i]);
        Value* v = make(Kind::floating);
        v->floating = std::bit_cast<double>(u);
        push(v);
        break;
      }
      case 0x8c:  // SHORT_BINUNICODE
        push(string_value(read_bytes(read_le(1), "a string")));
        break;
      case 'X':  // BINUNICODE
        push(string_value(read_bytes(read_le(4), "a string")));
        break;
      case 0x8d:  // BINUNICODE8
        push(string_value(read_bytes(read_le(8), "a string")));
        break;
      case 'U':     // SHORT_BINSTRING
      case 'C':     // SHORT_BINBYTES
      case 'T':     // BINSTRING
      case 'B':     // BINBYTES
      case 0x8e:    // BINBYTES8
      case 0x96: {  // BYTEARRAY8
        const int width = (op == 'U' || op == 'C') ? 1 : (op == 'T' || op == 'B') ? 4 : 8;
        const std::span<const std::byte> raw = read_bytes(read_le(width), "a byte string");
        Value* v = make(Kind::bytes);
        v->text.assign(reinterpret_cast<const char*>(raw.data()), raw.size());
        push(v);
        break;
      }
      case ')':
        push(make(Kind::tuple));
        break;
      case ']':
        push(make(Kind::list));
        break;
      case '}':
        push(make(Kind::dict));
        break;
      case 't': {  // TUPLE
        Value* v = make(Kind::tuple);
        v->items = pop_to_mark();
        push(v);
        break;
      }
      case 0x85:    // TUPLE1
      case 0x86:    // TUPLE2
      case 0x87: {  // TUPLE3
        const std::size_t n = op - 0x84U;
        Value* v = make(Kind::tuple);
        v->items.resize(n);
        for (std::size_t i = n; i > 0; --i) v->items[i - 1] = pop();
        push(v);
        break;
      }
      case 'l': {  // LIST
        Value* v = make(Kind::list);
        v->items = pop_to_mark();
        push(v);
        break;
      }
      case 'a': {  // APPEND
        Value* item = pop();
        Value* list = top();
        if (list->kind != Kind::list) fail("APPEND to something that is not a list");
        list->items.push_back(item);
        break;
      }
      case 'e': {  // APPENDS
        std::vector<Value*> items = pop_to_mark();
        Value* list = top();
        if (list->kind != Kind::list) fail("APPENDS to something that is not a list");
        list->items.insert(list->items.end(), items.begin(), items.end());
        break;
      }
      case 'd': {  // DICT
        std::vector<Value*> items = pop_to_mark();
        if (items.size() % 2 != 0) fail("DICT with an odd number of items");
        Value* v = make(Kind::dict);
        for (std::size_t i = 0; i < items.size(); i += 2) v->entries.emplace_back(items[i], items[i + 1]);
        push(v);
        break;
      }
      case 's': {  // SETITEM
        Value* value = pop();
        Value* key = pop();
        Value* dict = top();
        if (dict->kind != Kind::dict) fail("SETITEM on something that is not a dict");
        dict->entries.emplace_back(key, value);
        break;
      }
      case 'u': {  // SETITEMS
        std::vector<Value*> items = pop_to_mark();
        if (items.size() % 2 != 0) fail("SETITEMS with an odd number of items");
        Value* dict = top();
        if (dict->kind != Kind::dict) fail("SETITEMS on something that is not a dict");
        for (std::size_t i = 0; i < items.size(); i += 2) dict->entries.emplace_back(items[i], items[i + 1]);
        break;
      }
      case 'q':  // BINPUT
      case 'r':  // LONG_BINPUT
        memo_[read_le(op == 'q' ? 1 : 4)] = top();
        break;
      case 0x94: {  // MEMOIZE
        Value* v = top();
        memo_[memo_.size()] = v;
        break;
      }
      case 'h':    // BINGET
      case 'j': {  // LONG_BINGET
        const std::uint64_t key = read_le(op == 'h' ? 1 : 4);
        const auto it = memo_.find(key);
        if (it == memo_.end()) fail("memo entry " + std::to_string(key) + " was never stored");
        push(it->second);
        break;
      }
      case 'c': {  // GLOBAL
        const std::string module = read_line("a GLOBAL module name");
        const std::string name = read_line("a GLOBAL name");
        hooks_.global(module, name);
        Value* v = make(Kind::global);
        v->text = module + "." + name;
        push(v);
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        Value* name = pop();
        Value* module = pop();
        if (module->kind != Kind::string || name->kind != Kind::string)
          fail("STACK_GLOBAL needs two strings");
        hooks_.global(module->text, name->text);
        Value* v = make(Kind::global);
        v->text = module->text + "." + name->text;
        push(v);
        break;
      }
      case 'R':     // REDUCE
      case 0x81: {  // NEWOBJ
        Value* args = pop();
        Value* callable = pop();
        if (callable->kind != Kind::global) fail("REDUCE/NEWOBJ calls something that is not a global");
        if (args->kind != Kind::tuple) fail("REDUCE/NEWOBJ arguments are not a tuple");
        push(hooks_.call(*this, *callable, *args));
        break;
      }
      case 'b': {  // BUILD
        Value* state = pop();
        hooks_.build(*top(), *state);
        break;
      }
      case 'Q': {  // BINPERSID
        Value* pid = pop();
        push(hooks_.persistent_load(*this, *pid));
        break;
      }
      default:
        fail("opcode " + hex(op) + " is not one that torch.save writes; tfdebug does not run it");
    }
  }
}

}  // namespace tfdebug::io::detail::pickle
