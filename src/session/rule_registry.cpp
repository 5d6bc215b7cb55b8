#include "tfdebug/session/rule_registry.hpp"

namespace tfdebug {

RuleRegistry& RuleRegistry::instance() {
  // Never destroyed: rules registered at static initialisation may outlive main's locals.
  static RuleRegistry* registry = [] {
    auto* r = new RuleRegistry();
    detail::register_builtin_rules(*r);
    return r;
  }();
  return *registry;
}

void RuleRegistry::add(RuleInfo info) {
  const std::lock_guard lock(mutex_);
  for (const auto& known : rules_) {
    if (known->section == info.section)
      throw Error("RuleRegistry: a rule with the section '" + info.section + "' is already registered");
  }
  rules_.push_back(std::make_shared<const RuleInfo>(std::move(info)));
}

std::vector<std::shared_ptr<const RuleInfo>> RuleRegistry::rules() const {
  const std::lock_guard lock(mutex_);
  return rules_;
}

std::shared_ptr<const RuleInfo> RuleRegistry::find(std::string_view section) const {
  const std::lock_guard lock(mutex_);
  for (const auto& info : rules_) {
    if (info->section == section) return info;
  }
  return nullptr;
}

std::vector<std::unique_ptr<Rule>> RuleRegistry::instantiate(const RunConfig& config) const {
  std::vector<std::unique_ptr<Rule>> out;
  for (const auto& info : rules()) {
    const detail::SettingsBase* held = config.rules.find(info->section);
    const auto defaults = held != nullptr ? nullptr : info->make_settings();
    const void* settings = held != nullptr ? held->data() : defaults->data();
    if (info->enabled(settings)) out.push_back(info->make_rule(config, settings));
  }
  return out;
}

}  // namespace tfdebug
