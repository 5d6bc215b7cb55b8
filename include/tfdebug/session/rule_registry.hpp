// RuleRegistry: every rule a Session runs, with its configuration section and keys. The built-in
// rules (docs/rules.md) are registered when the registry is first used, in the table's order; a
// program adds its own rules before it reads a configuration file or makes a Session:
//
//   struct LimitSettings { ... };                    // kSection, enabled, describe (rule_settings.hpp)
//   class LimitRule : public tfdebug::Rule {
//    public:
//     LimitRule(const tfdebug::RunConfig& config, const LimitSettings& settings);
//     ...
//   };
//   TFDEBUG_REGISTER_RULE(LimitSettings, LimitRule);   // at namespace scope, in one .cpp file
//
// Then `[rules.limit]` in a run configuration file sets its keys, RunConfig::entries lists them,
// RunConfig::validate checks them, and every Session with the rule enabled runs it.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "tfdebug/session/rule.hpp"
#include "tfdebug/session/rule_settings.hpp"
#include "tfdebug/session/run_config.hpp"

namespace tfdebug {

// One registered rule.
struct RuleInfo {
  std::string section;  // its [rules.<section>] table and its keys' prefix
  std::type_index settings_type = typeid(void);
  std::vector<SettingKey> keys;
  std::vector<std::function<void(const void*)>> checks;
  std::function<std::unique_ptr<detail::SettingsBase>()> make_settings;  // the defaults
  std::function<bool(const void*)> enabled;
  std::function<std::unique_ptr<Rule>(const RunConfig&, const void*)> make_rule;
};

class RuleRegistry {
 public:
  // The process's registry, with the built-in rules.
  static RuleRegistry& instance();

  // Registers rule R with settings S (R must be constructible from (const RunConfig&, const S&)).
  // Throws tfdebug::Error when S's section is taken.
  template <RuleSettingsType S, class R>
  void add() {
    RuleInfo info;
    info.section = std::string(S::kSection);
    info.settings_type = typeid(S);
    RuleKeys<S> keys;
    S::describe(keys);
    info.keys = std::move(keys.keys());
    info.checks = std::move(keys.checks());
    info.make_settings = [] { return std::make_unique<detail::SettingsOf<S>>(); };
    info.enabled = [](const void* s) { return static_cast<const S*>(s)->enabled; };
    info.make_rule = [](const RunConfig& config, const void* s) -> std::unique_ptr<Rule> {
      return std::make_unique<R>(config, *static_cast<const S*>(s));
    };
    add(std::move(info));
  }
  void add(RuleInfo info);

  // Every registered rule, in registration order.
  std::vector<std::shared_ptr<const RuleInfo>> rules() const;
  std::shared_ptr<const RuleInfo> find(std::string_view section) const;
  // The enabled rules of `config`, in registration order.
  std::vector<std::unique_ptr<Rule>> instantiate(const RunConfig& config) const;

 private:
  RuleRegistry() = default;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const RuleInfo>> rules_;
};

namespace detail {
// Registers the built-in rules (generated from the RULES list of src/session/CMakeLists.txt).
void register_builtin_rules(RuleRegistry& registry);

template <RuleSettingsType S, class R>
struct RuleRegistration {
  RuleRegistration() { RuleRegistry::instance().add<S, R>(); }
};
}  // namespace detail

}  // namespace tfdebug

// Registers a rule at static initialisation, from a .cpp file of the program (not of a static
// library the program links: the linker would leave that object file out).
#define TFDEBUG_REGISTER_RULE(Settings, Rule) \
  static const ::tfdebug::detail::RuleRegistration<Settings, Rule> tfdebug_rule_registration_##Rule
