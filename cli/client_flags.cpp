#include "cli/client_flags.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/terminal_text.h"
#include "protocol/address.h"

namespace warden::cli {

using protocol::Client;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

bool read_all(const std::string& path, std::string* text) {
  std::ostringstream out;
  if (path == "-") {
    out << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    out << in.rdbuf();
  }
  *text = out.str();
  return true;
}

}  // namespace

void add_client_flags(CLI::App* cmd, ClientFlags* flags) {
  cmd->add_option("--addr", flags->addr,
                  "Daemon HOST:PORT or unix:PATH (default $WARDEN_ADDR or 127.0.0.1:9105)");
  cmd->add_option("--unix", flags->unix_path, "Connect to the daemon's Unix socket at PATH");
  cmd->add_flag("--tls", flags->tls,
                "Use TLS and verify the daemon's certificate (implied by --ca and --pin)");
  cmd->add_option("--ca", flags->ca, "PEM file of the CA that signed the daemon's certificate");
  cmd->add_option("--pin", flags->pin,
                  "sha256:HEX of the daemon's certificate (DER); with no --ca the pin alone "
                  "identifies the daemon");
  cmd->add_option("--server-name", flags->server_name,
                  "Name the certificate must carry (default: the host of --addr)");
  cmd->add_option("--token", flags->token, "Token (default $WARDEN_TOKEN)");
  cmd->add_option("--token-file", flags->token_file,
                  "Read the token from this file (keeps it out of ps)");
  cmd->add_option("--timeout-ms", flags->timeout_ms, "Connect and reply timeout")
      ->capture_default_str();
  cmd->add_flag("--allow-plaintext-token", flags->allow_plaintext_token,
                "Send the token over plain TCP to a host that is not this one (anyone on the "
                "path could take it; prefer --tls or --unix)");
}

std::string client_address(const ClientFlags& flags) {
  if (!flags.unix_path.empty()) return "unix:" + flags.unix_path;
  if (!flags.addr.empty()) return flags.addr;
  if (const char* value = std::getenv("WARDEN_ADDR"); value && *value) return value;
  // Locally the Unix socket: the kernel says who is at the other end, and no port on the
  // host can pretend to be the daemon.
  const bool tls = flags.tls || !flags.ca.empty() || !flags.pin.empty();
  if (const std::string path = protocol::default_socket_path(); !tls && !path.empty()) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) return "unix:" + path;
  }
  return protocol::kDefaultAddress;
}

int open_client(const ClientFlags& flags, Client* client) {
  std::string addr = client_address(flags);
  // What the command line (or the environment standing in for it) got wrong is a usage
  // error, exit 2, found before anything is sent: a malformed address or pin, TLS on a Unix
  // socket, an unreadable token file, no token for a daemon that needs one.
  if (addr.rfind("unix:", 0) == 0) {
    if (addr.size() == 5) {
      std::fprintf(stderr, "warden: the address unix: names no socket path\n");
      return kExitUsage;
    }
  } else {
    std::string host;
    std::uint16_t port = 0;
    if (!protocol::split_host_port(addr, &host, &port)) {
      std::fprintf(stderr, "warden: the daemon address must be HOST:PORT or unix:PATH, not '%s'\n",
                   printable(addr).c_str());
      return kExitUsage;
    }
  }
  std::string token = flags.token.empty() ? env_or("WARDEN_TOKEN", "") : flags.token;
  if (!flags.token_file.empty()) {
    std::string text;
    if (!read_all(flags.token_file, &text)) {
      std::fprintf(stderr, "warden: cannot read the token file %s\n",
                   printable(flags.token_file).c_str());
      return kExitUsage;
    }
    token = text.substr(0, text.find_first_of("\r\n"));
  }
  client->set_allow_plaintext_token(flags.allow_plaintext_token);
  const bool tls = flags.tls || !flags.ca.empty() || !flags.pin.empty();
  if (tls) {
    if (addr.rfind("unix:", 0) == 0) {
      std::fprintf(stderr, "warden: --tls, --ca and --pin apply to TCP addresses, not unix:\n");
      return kExitUsage;
    }
    if (!flags.pin.empty() && !protocol::valid_certificate_pin(flags.pin)) {
      std::fprintf(stderr, "warden: --pin must be sha256: followed by 64 hex digits\n");
      return kExitUsage;
    }
    client->set_tls({true, flags.ca, flags.server_name, flags.pin});
  }
  auto timeout = std::chrono::milliseconds(flags.timeout_ms);
  std::string error;
  if (!client->connect(addr, timeout, &error)) {
    std::fprintf(stderr, "warden: %s\n", printable(error).c_str());
    return kExitInternal;
  }
  if (token.empty()) {
    if (!client->auth_required()) return kExitOk;
    std::fprintf(stderr,
                 "warden: the daemon needs a token: --token, --token-file or WARDEN_TOKEN\n");
    return kExitUsage;
  }
  if (!client->authenticate(token, timeout, &error)) {
    std::fprintf(stderr, "warden: authentication failed: %s\n", printable(error).c_str());
    return kExitInternal;
  }
  return kExitOk;
}

}  // namespace warden::cli
