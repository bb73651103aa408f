// Roles and their rights (SPEC §5): which request actions each token role may call.
// One table, consulted by the request handler. Pure functions: thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warden::server {

enum class Role { Agent, Approver, Admin };

std::string_view role_name(Role role);  // "agent", "approver", "admin"
std::optional<Role> parse_role(std::string_view name);

// The authenticated party of a connection.
struct Identity {
  std::string principal;
  Role role = Role::Agent;
  std::vector<std::string> groups;  // from the token file; sorted, no duplicates
  // token_id() of the token it authenticated with; "" when no token did (anonymous,
  // --insecure-no-auth).
  std::string token_id;
};

// agent: decide, submit, envelope · approver: pending, approve, deny · admin: reload, status.
// health-check and auth need no right. An agent can never approve.
bool role_allows(Role role, std::string_view action);

}  // namespace warden::server
