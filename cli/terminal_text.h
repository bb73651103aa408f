// Output for a terminal: strings that may carry agent or rule text (reasons, messages, rule
// and file names) with every control character made visible, so printed text cannot move the
// cursor, erase a line or reorder what is shown. Every text-format output of the CLI goes
// through printable(); JSON output through json_for_terminal(). Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace warden::cli {

// `text` with each of these written as a visible escape, everything else unchanged:
//   C0 controls and DEL  → \n \r \t \b \f \v, else \xNN   (ESC is \x1b)
//   C1 controls U+0080–U+009F, bidirectional formatting U+061C U+200E U+200F U+202A–U+202E
//   U+2066–U+2069, line/paragraph separators U+2028 U+2029  → \uNNNN
//   bytes that are not UTF-8 → \xNN
// A backslash is left as it is: the result is for reading, not for decoding.
std::string printable(std::string_view text);

// JSON text (as written by the engine or the daemon client) with the characters above that
// JSON allows raw inside strings (DEL, C1, bidi, separators) rewritten as \uNNNN escapes:
// the same JSON value, safe to show. C0 controls other than JSON whitespace (never written
// raw by a JSON writer) become \u00NN and bytes that are not UTF-8 \ufffd.
std::string json_for_terminal(std::string_view json);

}  // namespace warden::cli
