// Test support: the agent, approver and admin tokens the test daemons accept, and the token
// file that lists their hashes. No daemon headers, so light tests can use it.
#pragma once

#include <string>

#include "server/tokens.h"

namespace warden::server::testing {

struct Tokens {
  std::string agent = "wdn_test_agent_token";
  std::string approver = "wdn_test_approver_token";
  std::string admin = "wdn_test_admin_token";
  std::string file_text() const {
    return "# test tokens\nagent alice " + token_hash_text(agent) + "\napprover bob " +
           token_hash_text(approver) + "\nadmin root " + token_hash_text(admin) + "\n";
  }
};

}  // namespace warden::server::testing
