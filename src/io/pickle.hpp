// Private: a restricted unpickler. It runs the stack machine of Python's pickle format for the
// opcodes torch.save writes (protocol 2, and the framing and memo opcodes of protocols 4 and 5)
// and builds plain values: None, bools, 64-bit integers, floats, strings, bytes, tuples, lists and
// dicts. It never imports or calls anything: a GLOBAL is passed to Hooks::global, which refuses
// whatever is not on the caller's allow-list, and REDUCE, NEWOBJ and BINPERSID go to the hooks,
// which build their own values (a tensor, a storage) or refuse.
//
//   struct MyHooks : pickle::Hooks { ... };
//   pickle::Unpickler u("model.pt:archive/data.pkl", bytes, hooks);
//   const pickle::Value& root = u.load();   // values live as long as `u`
//
// Limits (Note [Pickle limits]): every length is checked against the bytes left; the stack, the
// MARK nesting and the number of values are bounded, so memory is linear in the input and capped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tfdebug::io::detail::pickle {

enum class Kind : std::uint8_t {
  none,
  boolean,
  integer,
  floating,
  string,   // text: UTF-8 (checked)
  bytes,    // text: raw bytes
  tuple,    // items
  list,     // items
  dict,     // entries, in insertion order
  global,   // text: "module.name", a reference the hooks allowed
  external  // built by the hooks (a tensor, a storage); handle is theirs
};

struct Value {
  Kind kind = Kind::none;
  bool boolean = false;
  std::int64_t integer = 0;
  double floating = 0;
  std::size_t handle = 0;
  std::string text;
  std::vector<Value*> items;
  std::vector<std::pair<Value*, Value*>> entries;
};

constexpr std::size_t kMaxStack = 1'000'000;
constexpr std::size_t kMaxMarkDepth = 1'000;
// About 150 MB of values at most (Note [Memory budget] in readers.hpp); a state dict needs ~15
// values a tensor, so this reads checkpoints of ~60,000 tensors.
constexpr std::size_t kMaxValues = 1'000'000;

class Unpickler;

class Hooks {
 public:
  virtual ~Hooks() = default;
  // GLOBAL / STACK_GLOBAL: throw tfdebug::Error unless module.name is allowed.
  virtual void global(const std::string& module, const std::string& name) = 0;
  // REDUCE and NEWOBJ: `callable` is an allowed global, `args` a tuple.
  virtual Value* call(Unpickler& u, const Value& callable, const Value& args) = 0;
  // BINPERSID.
  virtual Value* persistent_load(Unpickler& u, const Value& pid) = 0;
  // BUILD (set state on `object`); the default ignores the state.
  virtual void build(Value& object, const Value& state) {
    (void)object;
    (void)state;
  }
};

class Unpickler {
 public:
  // `origin` names the pickle in errors ("file.pt:archive/data.pkl").
  Unpickler(std::string origin, std::span<const std::byte> bytes, Hooks& hooks);

  // Runs to STOP and returns the result. Throws tfdebug::Error("<origin>: ...").
  Value& load();

  // A fresh value owned by this Unpickler (counted against kMaxValues).
  Value* make(Kind kind);
  [[noreturn]] void fail(const std::string& problem) const;
  const std::string& origin() const noexcept { return origin_; }

 private:
  std::uint64_t read_le(int width);
  std::span<const std::byte> read_bytes(std::uint64_t n, const char* what);
  std::string read_line(const char* what);
  Value* pop();
  Value* top();
  std::vector<Value*> pop_to_mark();
  void push(Value* v);
  Value* string_value(std::span<const std::byte> raw);

  std::string origin_;
  std::span<const std::byte> bytes_;
  Hooks& hooks_;
  std::size_t pos_ = 0;
  std::size_t op_at_ = 0;  // offset of the opcode being run, for errors
  std::vector<Value*> stack_;
  std::vector<std::size_t> marks_;  // stack sizes at each MARK
  std::unordered_map<std::uint64_t, Value*> memo_;
  std::vector<std::unique_ptr<Value>> values_;
};

}  // namespace tfdebug::io::detail::pickle
