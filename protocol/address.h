// Where a client finds the daemon: HOST:PORT and [v6]:PORT parsing, what counts as a loopback
// address, and the defaults every client shares (the daemon's Unix socket in its state
// directory, else 127.0.0.1:9105). The daemon reads its listen address with the same parser.
// Pure functions over text and the environment; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace warden::protocol {

// The daemon's TCP address when none is configured ([listen] in warden.toml, --addr).
inline constexpr const char* kDefaultAddress = "127.0.0.1:9105";

// Splits "HOST:PORT" / "[V6]:PORT". False when malformed.
bool split_host_port(std::string_view address, std::string* host, std::uint16_t* port);

// True for a loopback address in text form: 127.0.0.0/8, ::1, and IPv4-mapped 127.x
// (::ffff:127.0.0.1). Anything else, a name included, is not.
bool is_loopback_ip(std::string_view ip);

// The daemon's default state directory: $XDG_STATE_HOME/warden, else
// $HOME/.local/state/warden; "" when neither variable is an absolute path.
std::string default_state_dir();

// The daemon's default Unix socket, STATE_DIR/warden.sock; "" when there is no state directory.
std::string default_socket_path();

}  // namespace warden::protocol
