// Reading a person's lines for `warden chat`: on a terminal, libedit (BSD editline: line
// editing, in-memory history, ~/.editrc); otherwise plain lines from stdin, no prompt, so
// scripts and tests can pipe a conversation in. One per process, on the main thread.
#pragma once

#include <string>

struct editline;
struct history;

namespace warden::cli {

class LineEditor {
 public:
  // program: libedit's name for ~/.editrc sections. Terminal mode when stdin and stdout are
  // both terminals.
  LineEditor(const char* program, std::string prompt);
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // The next line without its newline; false at the end of input (Ctrl-D, EOF).
  bool read(std::string* line);
  bool interactive() const { return editor_ != nullptr; }
  const std::string& prompt() const { return prompt_; }

 private:
  std::string prompt_;
  struct editline* editor_ = nullptr;
  struct history* history_ = nullptr;
};

}  // namespace warden::cli
