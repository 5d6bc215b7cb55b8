// The settings of the rules, in a RunConfig: one struct per rule, declared by the rule itself
// (include/tfdebug/session/rules/<rule>.hpp for the built-in ones), reached by its type.
//
//   tfdebug::RunConfig config;
//   config.rules.get<tfdebug::DeadUnitsRule>().window = 50;
//   bool on = config.rules.get<tfdebug::SpectralRule>().enabled;
//
// A settings struct names its section of the configuration file (`[rules.<section>]`), has an
// `enabled` flag, and lists its keys with their ranges, so that files are read, checked and
// listed from the rule's own declaration (RuleKeys):
//
//   struct MyRule {
//     static constexpr std::string_view kSection = "my_rule";
//     bool enabled = true;
//     double limit = 3.0;
//     static void describe(tfdebug::RuleKeys<MyRule>& keys) {
//       keys.flag("enabled", &MyRule::enabled).real("limit", &MyRule::limit, tfdebug::Range::positive);
//     }
//   };
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <typeindex>
#include <variant>
#include <vector>

#include "tfdebug/core/error.hpp"

namespace tfdebug {

// A value of a configuration key.
using SettingValue = std::variant<bool, std::int64_t, double>;

enum class Range : std::uint8_t {
  any,        // every number
  positive,   // > 0
  fraction,   // in [0, 1]
  above_one,  // > 1: a limit on a growth or a ratio, where 1 would call every value that did not shrink
};

// One key of a rule's section: its name, kind, allowed values, and how to reach it in the
// (type-erased) settings struct.
struct SettingKey {
  enum class Kind : std::uint8_t { flag, integer, real };
  std::string name;
  std::vector<std::string> aliases;  // older names a file may still use (read, never written)
  Kind kind = Kind::flag;
  std::int64_t min = 0;  // integers: the values accepted from a file
  std::int64_t max = 0;
  Range range = Range::any;  // checked by RunConfig::validate
  std::function<SettingValue(const void*)> get;
  std::function<void(void*, SettingValue)> set;
};

template <class S>
class RuleKeys {
 public:
  RuleKeys& flag(std::string name, bool S::*member) {
    return add(std::move(name), SettingKey::Kind::flag, 0, 0, Range::any, member);
  }
  // An int key; files may give values in [min, max].
  RuleKeys& integer(std::string name, int S::*member, Range range = Range::any, std::int64_t min = 0,
                    std::int64_t max = 1'000'000'000) {
    return add(std::move(name), SettingKey::Kind::integer, min, max, range, member);
  }
  RuleKeys& integer(std::string name, std::int64_t S::*member, Range range = Range::any, std::int64_t min = 0,
                    std::int64_t max = INT64_MAX) {
    return add(std::move(name), SettingKey::Kind::integer, min, max, range, member);
  }
  RuleKeys& real(std::string name, double S::*member, Range range = Range::any) {
    return add(std::move(name), SettingKey::Kind::real, 0, 0, range, member);
  }
  // Another name a configuration file may give the key just added: its name before a rename.
  RuleKeys& alias(std::string old_name) {
    keys_.back().aliases.push_back(std::move(old_name));
    return *this;
  }
  // A condition across keys, checked by RunConfig::validate: throw tfdebug::Error naming the key.
  RuleKeys& check(std::function<void(const S&)> condition) {
    checks_.push_back(
        [condition = std::move(condition)](const void* s) { condition(*static_cast<const S*>(s)); });
    return *this;
  }

  std::vector<SettingKey>& keys() { return keys_; }
  std::vector<std::function<void(const void*)>>& checks() { return checks_; }

 private:
  template <class T>
  RuleKeys& add(std::string name, SettingKey::Kind kind, std::int64_t min, std::int64_t max, Range range,
                T S::*member) {
    SettingKey key;
    key.name = std::move(name);
    key.kind = kind;
    key.min = min;
    key.max = max;
    key.range = range;
    key.get = [member](const void* s) -> SettingValue {
      const T& v = static_cast<const S*>(s)->*member;
      if constexpr (std::is_same_v<T, bool>)
        return v;
      else if constexpr (std::is_integral_v<T>)
        return std::int64_t(v);
      else
        return double(v);
    };
    key.set = [member](void* s, SettingValue value) {
      T& v = static_cast<S*>(s)->*member;
      if constexpr (std::is_same_v<T, bool>)
        v = std::get<bool>(value);
      else if constexpr (std::is_integral_v<T>)
        v = static_cast<T>(std::get<std::int64_t>(value));
      else
        v = std::get<double>(value);
    };
    keys_.push_back(std::move(key));
    return *this;
  }

  std::vector<SettingKey> keys_;
  std::vector<std::function<void(const void*)>> checks_;
};

// What a settings struct of a rule provides.
template <class S>
concept RuleSettingsType = std::default_initializable<S> && std::copy_constructible<S> && requires(S s) {
  { S::kSection } -> std::convertible_to<std::string_view>;
  { s.enabled } -> std::convertible_to<bool>;
};

namespace detail {
struct SettingsBase {
  virtual ~SettingsBase() = default;
  virtual std::unique_ptr<SettingsBase> clone() const = 0;
  virtual void* data() noexcept = 0;
  virtual const void* data() const noexcept = 0;
  virtual std::type_index type() const noexcept = 0;
};

template <class S>
struct SettingsOf final : SettingsBase {
  S value;
  std::unique_ptr<SettingsBase> clone() const override { return std::make_unique<SettingsOf>(*this); }
  void* data() noexcept override { return &value; }
  const void* data() const noexcept override { return &value; }
  std::type_index type() const noexcept override { return typeid(S); }
};
}  // namespace detail

// The settings of every rule of a configuration, by section. A section not set here has its
// struct's defaults. Copies are deep.
class RuleSettings {
 public:
  RuleSettings() = default;
  RuleSettings(const RuleSettings& other);
  RuleSettings& operator=(const RuleSettings& other);
  RuleSettings(RuleSettings&&) noexcept = default;
  RuleSettings& operator=(RuleSettings&&) noexcept = default;
  ~RuleSettings() = default;

  // The settings of rule S, created with S's defaults on first use. Throws tfdebug::Error when
  // another type holds S's section.
  template <RuleSettingsType S>
  S& get() {
    detail::SettingsBase& base =
        slot(S::kSection, typeid(S), [] { return std::make_unique<detail::SettingsOf<S>>(); });
    return static_cast<detail::SettingsOf<S>&>(base).value;
  }
  template <RuleSettingsType S>
  const S& get() const {
    if (const detail::SettingsBase* base = find(S::kSection)) {
      if (base->type() != typeid(S))
        throw Error("rules." + std::string(S::kSection) + ": held by another settings type");
      return static_cast<const detail::SettingsOf<S>&>(*base).value;
    }
    static const S kDefaults{};
    return kDefaults;
  }

  // Type-erased access, for the configuration reader and the rule registry.
  const detail::SettingsBase* find(std::string_view section) const noexcept;
  detail::SettingsBase& slot(std::string_view section, std::type_index type,
                             const std::function<std::unique_ptr<detail::SettingsBase>()>& make);

 private:
  struct Entry {
    std::string section;
    std::unique_ptr<detail::SettingsBase> settings;
  };
  std::vector<Entry> entries_;
};

}  // namespace tfdebug
