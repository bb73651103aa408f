// dry-run input: proposals read and decided as they arrive (JSON lines), one JSON document
// over several lines, and the exit status of a run over several proposals.
#include "cli/proposal_stream.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "tests/cli/cli_process.h"

using warden::Outcome;
using warden::cli::ProposalStream;
using warden::cli::RunStatus;
using namespace warden::cli::testing;
namespace fs = std::filesystem;

namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() { REQUIRE(::pipe(&r) == 0); }
  ~Pipe() {
    close_write();
    ::close(r);
  }
  void put(const std::string& s) {
    REQUIRE(::write(w, s.data(), s.size()) == static_cast<ssize_t>(s.size()));
  }
  void close_write() {
    if (w >= 0) ::close(w);
    w = -1;
  }
};

std::vector<ProposalStream::Item> all(const std::string& input) {
  Pipe p;
  p.put(input);
  p.close_write();
  ProposalStream s(p.r, 1 << 20);
  std::vector<ProposalStream::Item> items;
  ProposalStream::Item item;
  while (s.next(&item)) items.push_back(item);
  CHECK_FALSE(s.read_error());
  return items;
}

const char* kStreamRules = R"(
(defrule no-rm (shell-command (proposal ?id) (program "rm"))
  => (assert (decision (proposal ?id) (outcome reject) (rule no-rm) (reason "rm"))))
(defrule ls-ok (shell-command (proposal ?id) (program "ls"))
  => (assert (decision (proposal ?id) (outcome approve) (rule ls-ok) (reason "listing"))))
)";

std::string stream_shell(const std::string& command) {
  return R"({"target":"shell","payload":{"command":")" + command + "\"}}\n";
}
const std::string kAsk = "{\"target\":\"message\",\"payload\":{\"text\":\"hi\"}}\n";

struct RulesFile {
  fs::path path = fs::temp_directory_path() / ("warden-ps-" + std::to_string(::getpid()) + ".clp");
  RulesFile() { std::ofstream(path) << kStreamRules; }
  ~RulesFile() { fs::remove(path); }
};

}  // namespace

TEST_CASE("ProposalStream: JSON lines with their line numbers, blank lines skipped",
          "[cli][stream]") {
  auto items = all("{\"a\":1}\n\n  \nnot json\n{\"b\":2}");
  REQUIRE(items.size() == 3);
  CHECK(items[0].line == 1);
  CHECK(items[0].text == "{\"a\":1}");
  CHECK(items[1].line == 4);
  CHECK(items[1].text == "not json");
  CHECK(items[2].line == 5);  // last line without '\n'
}

TEST_CASE(
    "ProposalStream: lines over many reads, some across a read's end, each whole and numbered",
    "[cli][stream]") {
  // About 1.2 MB in lines of 1 to 3,000 bytes: lines end inside a read, across one and
  // exactly at one, and the buffer drops the lines handed out as it reads more.
  std::vector<std::string> lines;
  std::string input;
  for (int i = 0; input.size() < 1200000; ++i) {
    std::string line = "{\"n\":" + std::to_string(i) + ",\"pad\":\"" +
                       std::string(static_cast<std::size_t>((i * 7919) % 3000), 'x') + "\"}";
    input += line + "\n";
    lines.push_back(std::move(line));
  }
  Pipe p;
  std::thread writer([&] {
    p.put(input);
    p.close_write();
  });
  ProposalStream stream(p.r, 1 << 20);
  std::vector<ProposalStream::Item> items;
  ProposalStream::Item item;
  while (stream.next(&item)) items.push_back(item);
  writer.join();
  CHECK_FALSE(stream.read_error());
  REQUIRE(items.size() == lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    INFO("line " << i + 1);
    CHECK(items[i].line == static_cast<long>(i + 1));
    CHECK(items[i].text == lines[i]);
  }
}

TEST_CASE("ProposalStream: one JSON document over several lines is one item", "[cli][stream]") {
  auto items = all("\n{\n  \"target\": \"shell\",\n  \"payload\": {\"command\": \"ls\"}\n}\n");
  REQUIRE(items.size() == 1);
  CHECK(items[0].line == 2);
  CHECK(items[0].text.find("\"command\": \"ls\"") != std::string::npos);
}

TEST_CASE("ProposalStream: an unfinished first line that is not one document falls back to lines",
          "[cli][stream]") {
  auto items = all("{\"target\":\"shell\"\n{\"a\":1}\n");
  REQUIRE(items.size() == 2);
  CHECK(items[0].line == 1);
  CHECK(items[1].line == 2);
  CHECK(items[1].text == "{\"a\":1}");
  // Past the size cap the buffered lines are lines too, and reading goes on.
  Pipe p;
  p.put("[\n1,\n2,\n3\n");
  p.close_write();
  ProposalStream small(p.r, 4);
  ProposalStream::Item item;
  std::vector<long> lines;
  while (small.next(&item)) lines.push_back(item.line);
  CHECK(lines == std::vector<long>{1, 2, 3, 4});
}

// Whether lines are one document is told with the shared parser (bindings/json.h): an
// unfinished first line holding a byte that is not UTF-8 is no document's start, and lines
// joined with a NUL byte after the object are no document (RapidJSON took the NUL for the end),
// so each line goes to the daemon, which refuses it.
TEST_CASE("ProposalStream: lines with a byte that is not UTF-8 or a NUL are not one document",
          "[cli][stream]") {
  using namespace std::string_literals;
  for (const std::string& text : {"{\"target\":\"sh\xffll\",\n\"action\":\"run\"}"s,
                                  "{\"target\":\"shell\",\n\"action\":\"run\"}\0x"s}) {
    auto items = all(text + "\n");
    REQUIRE(items.size() == 2);
    CHECK(items[0].line == 1);
    CHECK(items[0].text == text.substr(0, text.find('\n')));
    CHECK(items[1].line == 2);
    CHECK(items[1].text == text.substr(text.find('\n') + 1));
  }
  // Well-formed, the same two lines are one document.
  REQUIRE(all("{\"target\":\"shell\",\n\"action\":\"run\"}\n").size() == 1);
}

TEST_CASE("ProposalStream: a line is handed out before the writer sends the next",
          "[cli][stream]") {
  Pipe p;
  ProposalStream s(p.r, 1 << 20);
  CHECK_FALSE(s.ready());  // nothing written yet: next() would wait
  p.put("{\"a\":1}\n{\"b\"");
  CHECK(s.ready());
  ProposalStream::Item item;
  REQUIRE(s.next(&item));  // returns although the writer is still open
  CHECK(item.text == "{\"a\":1}");
  p.put(":2}\n");
  REQUIRE(s.next(&item));
  CHECK(item.text == "{\"b\":2}");
  p.close_write();
  CHECK(s.ready());
  CHECK_FALSE(s.next(&item));
}

TEST_CASE("RunStatus: invalid input 2, else reject 1, else approval-required 3, else 0",
          "[cli][exit]") {
  RunStatus none;
  CHECK(none.exit_code() == 0);
  RunStatus approve;
  approve.add(Outcome::Approve);
  approve.add(Outcome::Approve);
  CHECK(approve.exit_code() == 0);
  RunStatus ask;
  ask.add(Outcome::Approve);
  ask.add(Outcome::ApprovalRequired);
  ask.add(Outcome::Approve);
  CHECK(ask.exit_code() == 3);
  RunStatus reject;
  reject.add(Outcome::Reject);
  reject.add(Outcome::ApprovalRequired);
  reject.add(Outcome::Approve);
  CHECK(reject.exit_code() == 1);
  RunStatus invalid;
  invalid.add(Outcome::Reject);
  invalid.add_invalid();
  invalid.add(Outcome::Approve);
  CHECK(invalid.exit_code() == 2);
}

TEST_CASE("dry-run decides each line before the next one is written", "[cli][stream]") {
  RulesFile rules;
  // The child keeps stdin open: a dry-run that reads all input before deciding never answers.
  Child child({"dry-run", "--rules", rules.path.string(), "-"});
  child.write(stream_shell("ls -la"));
  std::string first = child.read_line();
  INFO(child.err());
  REQUIRE_FALSE(child.timed_out);
  CHECK(first.find("\"outcome\":\"approve\"") != std::string::npos);
  child.write(stream_shell("rm x"));
  std::string second = child.read_line();
  REQUIRE_FALSE(child.timed_out);
  CHECK(second.find("\"outcome\":\"reject\"") != std::string::npos);
  child.write("not json\n");
  CHECK(child.read_line().find("\"code\":\"E_INPUT_JSON\"") != std::string::npos);
  REQUIRE_FALSE(child.timed_out);
  CHECK(child.finish() == 2);
}

TEST_CASE("dry-run on several proposals exits with the strictest outcome", "[cli][exit]") {
  RulesFile rules;
  auto run = [&](const std::string& input) {
    return run_warden({"dry-run", "--rules", rules.path.string(), "-"}, input).code;
  };
  CHECK(run(stream_shell("ls") + stream_shell("ls")) == 0);
  CHECK(run(stream_shell("ls") + kAsk + stream_shell("ls")) == 3);
  CHECK(run(stream_shell("ls") + stream_shell("rm x") + stream_shell("ls")) == 1);  // old code: 0
  CHECK(run(kAsk + stream_shell("rm x") + kAsk) == 1);
  CHECK(run(stream_shell("rm x") + "not json\n" + stream_shell("ls")) == 2);
  CHECK(run(stream_shell("rm x")) == 1);
  CHECK(run(kAsk) == 3);
}
