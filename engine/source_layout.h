// SourceLayout: where in a construct a `)` most likely went missing, judged by how the author
// indented it. Used only to place an error already found (a construct never closed, `=>`
// inside a pattern, CLIPS's own syntax errors), never to find one. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/rule_tokens.h"

namespace warden {

// The first '(' in tokens [from, to) that the author's indentation says should have been
// closed but is still open: a later line starts at or left of the indentation of the line it
// opened on (for a '(' on the construct's first line, left of the '(' itself). The group
// opening at `from` (the construct) is never the answer. Returns its index, or `to` if none;
// *evidence (if given) is then the first token of the line that shows it.
std::size_t unclosed_by_indentation(const std::vector<Token>& t, std::size_t from, std::size_t to,
                                    std::size_t* evidence = nullptr);

// The ')' in tokens [from, to) that closed a group too early, judged by the first line (up to
// and including the one starting at `to`) whose indentation its depth belies: a continuation
// (indented further than the line before) of a line that left nothing open, or a line starting
// shallower than the last earlier line or group aligned with it (no line further left between).
// `from` opens the outermost group (depth 0 before it). Returns its index, or `to` if no line
// shows one.
std::size_t extra_close_by_indentation(const std::vector<Token>& t, std::size_t from,
                                       std::size_t to);

// "`(proposal`" for the '(' at `open`: the parenthesis and the name after it, to quote.
std::string quoted_group(const std::vector<Token>& t, std::size_t open);

}  // namespace warden
