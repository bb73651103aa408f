#include "server/roles.h"

#include <array>
#include <utility>

namespace warden::server {

namespace {

struct Right {
  std::string_view action;
  Role role;
};

// Each action belongs to exactly one role; nothing else grants it.
constexpr std::array<Right, 8> kRights{{
    {"decide", Role::Agent},
    {"envelope", Role::Agent},
    {"submit", Role::Agent},
    {"pending", Role::Approver},
    {"approve", Role::Approver},
    {"deny", Role::Approver},
    {"reload", Role::Admin},
    {"status", Role::Admin},
}};

}  // namespace

std::string_view role_name(Role role) {
  switch (role) {
    case Role::Agent:
      return "agent";
    case Role::Approver:
      return "approver";
    case Role::Admin:
      return "admin";
  }
  return "agent";
}

std::optional<Role> parse_role(std::string_view name) {
  if (name == "agent") return Role::Agent;
  if (name == "approver") return Role::Approver;
  if (name == "admin") return Role::Admin;
  return std::nullopt;
}

bool role_allows(Role role, std::string_view action) {
  if (action == "health-check" || action == "auth") return true;
  for (const Right& right : kRights) {
    if (right.action == action) return right.role == role;
  }
  return false;
}

}  // namespace warden::server
