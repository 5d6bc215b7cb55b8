#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

RuleSettings::RuleSettings(const RuleSettings& other) {
  entries_.reserve(other.entries_.size());
  for (const Entry& e : other.entries_) entries_.push_back({e.section, e.settings->clone()});
}

RuleSettings& RuleSettings::operator=(const RuleSettings& other) {
  if (this != &other) *this = RuleSettings(other);
  return *this;
}

const detail::SettingsBase* RuleSettings::find(std::string_view section) const noexcept {
  for (const Entry& e : entries_) {
    if (e.section == section) return e.settings.get();
  }
  return nullptr;
}

detail::SettingsBase& RuleSettings::slot(std::string_view section, std::type_index type,
                                         const std::function<std::unique_ptr<detail::SettingsBase>()>& make) {
  for (Entry& e : entries_) {
    if (e.section != section) continue;
    if (e.settings->type() != type)
      throw Error("rules." + std::string(section) + ": the section is held by another settings type");
    return *e.settings;
  }
  entries_.push_back({std::string(section), make()});
  return *entries_.back().settings;
}

}  // namespace tfdebug
