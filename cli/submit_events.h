// A submit's events (docs/PROTOCOL.md, "submit") as a person reads them, for `warden submit`
// and `warden chat`: a visible marker per decision with its rules —
//   ✓ approve shell: ls  [workspace-read]
//   ✗ reject shell: rm -rf ~  [shell-destructive-rm]: deletes the home directory
//   ⏸ approval required http: POST https://…  [http-post]: needs a person
// — the model's replies, tool output below its action, errors and the final status. Every
// text from the model, a tool or a rule goes through printable(). Pure; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>

namespace warden::cli {

// The lines to print for one event's payload (a JSON object text), each ending in '\n';
// "" when there is nothing to show. Output of a tool is shown up to max_output_lines lines.
std::string render_event(std::string_view event_json, std::size_t max_output_lines = 50);

// What an action does in a few words: "shell: ls -la", "http: POST https://x", "reply: …".
std::string action_summary(const rapidjson::Value& action);

// The exit status of `warden submit` for a run's final status: done 0, rejected 1,
// suspended 3, anything else (failed, dropped, cancelled) 4.
int exit_code_for_status(std::string_view status);

}  // namespace warden::cli
