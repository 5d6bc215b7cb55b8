#include "tfdebug/session/observation.hpp"

namespace tfdebug {

std::string_view role_name(Role role) noexcept {
  switch (role) {
    case Role::output:
      return "output";
    case Role::parameter:
      return "parameter";
    case Role::gradient:
      return "gradient";
    case Role::update:
      return "update";
  }
  return "unknown";
}

}  // namespace tfdebug
