// libFuzzer: the restricted unpickler alone, behind permissive hooks: every global but os.* is
// allowed (os.* is refused, so the refusal path runs too), and calls and persistent ids build
// plain values. It must throw tfdebug::Error or return; ASan watches the stack machine, the memo
// and the value arena.
#include <cstdint>
#include <span>

#include "pickle.hpp"
#include "tfdebug/core/error.hpp"

namespace {

using tfdebug::io::detail::pickle::Kind;
using tfdebug::io::detail::pickle::Unpickler;
using tfdebug::io::detail::pickle::Value;

class AllowAll final : public tfdebug::io::detail::pickle::Hooks {
 public:
  void global(const std::string& module, const std::string& name) override {
    if (module == "os") throw tfdebug::Error("refused " + module + "." + name);
  }
  Value* call(Unpickler& u, const Value& callable, const Value& args) override {
    Value* v = u.make(Kind::list);
    v->text = callable.text;
    v->items = args.items;
    return v;
  }
  Value* persistent_load(Unpickler& u, const Value& pid) override {
    Value* v = u.make(Kind::tuple);
    v->items.push_back(const_cast<Value*>(&pid));
    return v;
  }
};

// Walks the result to a bounded depth and a bounded number of visits, touching values (cycles
// and shared references are possible: a value appended twice at each of 32 levels is 2^32 paths).
std::size_t walk(const Value& v, int depth, std::size_t& budget) {
  if (depth > 32 || budget == 0) return 0;
  --budget;
  std::size_t n = 1 + v.text.size();
  for (const Value* item : v.items) n += walk(*item, depth + 1, budget);
  for (const auto& [k, x] : v.entries) n += walk(*k, depth + 1, budget) + walk(*x, depth + 1, budget);
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  AllowAll hooks;
  Unpickler u("fuzz.pkl", std::span(reinterpret_cast<const std::byte*>(data), size), hooks);
  try {
    std::size_t budget = 100000;
    (void)walk(u.load(), 0, budget);
  } catch (const tfdebug::Error&) {
  }
  return 0;
}
