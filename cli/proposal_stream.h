// The input of `warden dry-run` and `warden decide`: proposals read as they arrive, and the
// exit status of a run over several of them. One ProposalStream per input, one thread.
//
// Input is JSON lines (one proposal per line, each handed out as soon as its line is read),
// or one JSON document spread over several lines: when the first non-blank line is an
// incomplete JSON value, lines are buffered (at most max_document_bytes) until end of input,
// and if the whole is one JSON value it is one proposal; otherwise the lines are JSON lines.
#pragma once

#include <cstddef>
#include <deque>
#include <string>

#include "engine/decision.h"

namespace warden::cli {

class ProposalStream {
 public:
  struct Item {
    long line = 0;     // 1-based line where the proposal starts
    std::string text;  // the line, or the whole document
  };

  // Reads from fd (not owned; not closed).
  ProposalStream(int fd, std::size_t max_document_bytes);

  // The next non-blank item; false at end of input or on a read error (see read_error).
  bool next(Item* item);
  // True when next() returns without waiting for more input.
  bool ready();
  bool read_error() const { return read_error_; }

 private:
  bool read_line(std::string* line);  // one raw line (without '\n'); false at end
  bool line_ready();

  int fd_;
  std::size_t max_document_bytes_;
  bool after_first_ = false;   // a non-blank line was seen: only the first may open a document
  std::string buffer_;         // bytes read; from start_ on, not yet split into lines
  std::size_t start_ = 0;      // where the next line starts
  std::size_t scan_from_ = 0;  // buffer_ from start_ to before this has no '\n'
  bool eof_ = false;
  bool read_error_ = false;
  long line_no_ = 0;
  std::deque<Item> queued_;  // lines buffered while looking for one document
};

// Exit status of dry-run or decide over any number of proposals (SPEC §1 codes):
// 2 if any input was not a valid proposal, else 1 if any was rejected, else 3 if any needs
// approval, else 0. One proposal gives that proposal's code.
class RunStatus {
 public:
  void add(Outcome outcome);
  void add_invalid() { invalid_ = true; }
  int exit_code() const;

 private:
  bool invalid_ = false;
  bool any_ = false;
  Outcome strictest_ = Outcome::Approve;
};

}  // namespace warden::cli
