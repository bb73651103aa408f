#include "cli/proposal_stream.h"

#include <poll.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <cerrno>

#include "bindings/json.h"
#include "cli/commands.h"

namespace warden::cli {
namespace {

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

enum class Parse { Complete, Incomplete, Invalid };

// Whether `text` is one JSON value, the start of one (input ended inside it), or neither.
Parse parse_json(const std::string& text) {
  // Any depth: the daemon reads the proposal against its configured one.
  rapidjson::Document doc;
  const warden::json::Error e = warden::json::parse(text, &doc, warden::json::Limits::any_depth());
  if (!e) return Parse::Complete;
  if (e.refusal == warden::json::Refusal::kSyntax &&
      e.code != rapidjson::kParseErrorDocumentRootNotSingular && e.offset >= text.size()) {
    return Parse::Incomplete;
  }
  return Parse::Invalid;
}

}  // namespace

ProposalStream::ProposalStream(int fd, std::size_t max_document_bytes)
    : fd_(fd), max_document_bytes_(max_document_bytes) {}

bool ProposalStream::line_ready() {
  if (eof_) return true;
  if (buffer_.find('\n', scan_from_) != std::string::npos) return true;
  scan_from_ = buffer_.size();
  return false;
}

bool ProposalStream::read_line(std::string* line) {
  for (;;) {
    std::size_t nl = buffer_.find('\n', scan_from_);
    if (nl != std::string::npos) {
      line->assign(buffer_, start_, nl - start_);
      start_ = scan_from_ = nl + 1;
      ++line_no_;
      return true;
    }
    scan_from_ = buffer_.size();
    if (eof_) {
      if (start_ == buffer_.size()) return false;
      line->assign(buffer_, start_);
      buffer_.clear();
      start_ = scan_from_ = 0;
      ++line_no_;
      return true;
    }
    // The lines handed out leave the buffer before it grows: one move per read, not one
    // per line (a 64 KiB read holds hundreds of lines).
    buffer_.erase(0, start_);
    scan_from_ -= start_;
    start_ = 0;
    char chunk[65536];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_error_ = true;
    if (n <= 0) {
      eof_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

bool ProposalStream::ready() {
  if (!queued_.empty() || line_ready()) return true;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;  // data, end of input or an error: read() will not block
}

bool ProposalStream::next(Item* item) {
  if (!queued_.empty()) {
    *item = std::move(queued_.front());
    queued_.pop_front();
    return true;
  }
  std::string line;
  while (read_line(&line)) {
    if (blank(line)) continue;
    const bool first = !after_first_;
    after_first_ = true;
    if (!first || parse_json(line) != Parse::Incomplete) {
      *item = {line_no_, std::move(line)};
      return true;
    }
    // The first proposal starts a JSON value it does not finish: perhaps one document.
    std::deque<Item> lines{{line_no_, line}};
    std::string whole = line;
    bool overflow = false;
    while (!overflow && read_line(&line)) {
      whole += '\n';
      whole += line;
      lines.push_back({line_no_, std::move(line)});
      overflow = whole.size() > max_document_bytes_;
    }
    if (!overflow && parse_json(whole) == Parse::Complete) {
      *item = {lines.front().line, std::move(whole)};
      return true;
    }
    for (auto& l : lines)
      if (!blank(l.text)) queued_.push_back(std::move(l));
    return next(item);
  }
  return false;
}

void RunStatus::add(Outcome outcome) {
  strictest_ = any_ ? stricter(strictest_, outcome) : outcome;
  any_ = true;
}

int RunStatus::exit_code() const {
  if (invalid_) return kExitUsage;
  return any_ ? exit_code_for(strictest_) : kExitOk;
}

}  // namespace warden::cli
