// Options every daemon client command shares (decide, status, submit, chat): address, Unix
// socket, TLS checks, token; and connecting + authenticating with them. Thin wiring over
// protocol::Client; used on the command's thread only.
#pragma once

#include <rapidjson/document.h>

#include <CLI/CLI.hpp>
#include <string>

#include "protocol/client.h"
#include "protocol/reply.h"

namespace warden::cli {

struct ClientFlags {
  std::string addr;
  std::string unix_path;
  bool tls = false;
  std::string ca;
  std::string pin;
  std::string server_name;
  std::string token;
  std::string token_file;
  int timeout_ms = 30000;
  bool allow_plaintext_token = false;  // --allow-plaintext-token
};

// The address a client command connects to: --unix, else --addr, else $WARDEN_ADDR, else the
// daemon's default Unix socket (STATE_DIR/warden.sock) when one is there, else
// 127.0.0.1:9105.
std::string client_address(const ClientFlags& flags);

void add_client_flags(CLI::App* cmd, ClientFlags* flags);

// Connects and authenticates. 0 (kExitOk) when connected; on failure the reason is printed
// and the exit status returned: 2 for what the caller got wrong (a malformed address or
// --pin, TLS flags on a Unix socket, an unreadable token file, no token for a daemon that
// needs one), 4 when the daemon could not be reached or refused the token.
int open_client(const ClientFlags& flags, protocol::Client* client);

// The member `key` of `v` when it is a string, else "" (protocol/reply.h).
using protocol::string_member;

}  // namespace warden::cli
