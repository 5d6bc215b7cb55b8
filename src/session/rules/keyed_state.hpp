// KeyedState<State>: a rule's state per (module, op) key, for at most `capacity` keys (the rest
// are counted, RunSummary::untracked_observations), with the key's look-up made cheap for the
// producers' strings. Private to tfdebug::session.
//
// Producers pass the same stable module and op strings every step (the LibTorch adapter's
// interned paths and schema names), so a direct-mapped cache by their addresses, checked against
// the stored key, skips building and hashing the key. Entries are never erased, so a state's
// address is stable.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace tfdebug::detail {

// "module\x1fop": the key of a (module, op) pair.
inline std::string make_key(std::string_view module, std::string_view op) {
  std::string key;
  key.reserve(module.size() + op.size() + 1);
  key.append(module);
  key.push_back('\x1f');
  key.append(op);
  return key;
}

// Hash and equality that take a std::string_view too.
struct KeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view key) const noexcept { return std::hash<std::string_view>()(key); }
};

template <class State>
class KeyedState {
 public:
  explicit KeyedState(std::size_t capacity) : capacity_(capacity) {}

  // The state of (module, op), created (value-initialised) at first sight; nullptr beyond the
  // capacity. `created` says whether it was made by this call.
  State* find_or_add(std::string_view module, std::string_view op, bool* created = nullptr) {
    if (created != nullptr) *created = false;
    Recent& recent = recent_[slot(module, op)];
    if (recent.module == module.data() && recent.op == op.data() && recent.entry != nullptr &&
        is_key_of(recent.entry->first, module, op))
      return &recent.entry->second;
    scratch_ = make_key(module, op);
    auto it = states_.find(std::string_view(scratch_));
    if (it == states_.end()) {
      if (states_.size() >= capacity_) {
        ++untracked_;
        return nullptr;
      }
      it = states_.try_emplace(scratch_).first;
      if (created != nullptr) *created = true;
    }
    recent = Recent{module.data(), op.data(), &*it};
    return &it->second;
  }

  // Every key and state, in no particular order: f(module, op, state).
  template <class F>
  void for_each(const F& f) {
    for (auto& [key, state] : states_) f(module_of(key), op_of(key), state);
  }
  template <class F>
  void for_each(const F& f) const {
    for (const auto& [key, state] : states_) f(module_of(key), op_of(key), state);
  }

  std::size_t size() const noexcept { return states_.size(); }
  std::int64_t untracked() const noexcept { return untracked_; }

 private:
  using Map = std::unordered_map<std::string, State, KeyHash, std::equal_to<>>;
  struct Recent {
    const char* module = nullptr;
    const char* op = nullptr;
    typename Map::value_type* entry = nullptr;  // never moves, never erased
  };

  static std::size_t slot(std::string_view module, std::string_view op) {
    const auto address = reinterpret_cast<std::uintptr_t>(module.data()) ^
                         (reinterpret_cast<std::uintptr_t>(op.data()) * 0x9E3779B97F4A7C15ULL);
    return static_cast<std::size_t>((address * 0x9E3779B97F4A7C15ULL) >> (64 - 9));
  }
  static bool is_key_of(const std::string& key, std::string_view module, std::string_view op) {
    return key.size() == module.size() + 1 + op.size() && key.compare(0, module.size(), module) == 0 &&
           key.compare(module.size() + 1, op.size(), op) == 0;
  }
  static std::string_view module_of(const std::string& key) {
    return std::string_view(key).substr(0, key.find('\x1f'));
  }
  static std::string_view op_of(const std::string& key) {
    return std::string_view(key).substr(key.find('\x1f') + 1);
  }

  std::size_t capacity_;
  Map states_;
  std::array<Recent, 512> recent_{};
  std::string scratch_;
  std::int64_t untracked_ = 0;
};

}  // namespace tfdebug::detail
