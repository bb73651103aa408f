// The agents' child processes (the MCP server, the hook doctor's probe) hold no descriptor
// after a start that failed: the pipes made before the failing one are closed, whether the
// failure is at a pipe (EMFILE under a capped RLIMIT_NOFILE) or at exec.
#include <errno.h>

#include "agents/hook_doctor_checks.h"
#include "agents/mcp_child.h"
#include "tests/support/descriptors.h"

using namespace std::chrono_literals;
using warden::testing::DescriptorCap;
using warden::testing::open_descriptors;

TEST_CASE("an MCP server whose pipes cannot all be made leaves no descriptor open") {
  const auto before = open_descriptors();
  for (int free : {2, 4}) {  // the second pipe fails, then the third
    INFO("descriptors left: " << free);
    std::string error;
    {
      DescriptorCap cap(free);
      warden::agents::mcp::ChildProcess child;
      CHECK_FALSE(child.start({"/bin/true"}, &error));
    }
    CHECK(error.find("Too many open files") != std::string::npos);
    CHECK(open_descriptors() == before);
  }
}

TEST_CASE("an MCP server that cannot be run leaves no descriptor open") {
  const auto before = open_descriptors();
  {
    warden::agents::mcp::ChildProcess child;
    std::string error;
    CHECK_FALSE(child.start({"/nonexistent/mcp-server"}, &error));
    CHECK(error == "cannot run /nonexistent/mcp-server: No such file or directory");
  }
  CHECK(open_descriptors() == before);
}

TEST_CASE("a hook probe whose pipes cannot all be made leaves no descriptor open") {
  const auto before = open_descriptors();
  for (int free : {2, 4}) {
    INFO("descriptors left: " << free);
    warden::agents::doctor::ChildOutput run;
    {
      DescriptorCap cap(free);
      run = warden::agents::doctor::run_child({"/bin/true"}, "/", "", 5000ms, nullptr);
    }
    CHECK_FALSE(run.ran);
    CHECK(run.failure.find("Too many open files") != std::string::npos);
    CHECK(open_descriptors() == before);
  }
}

TEST_CASE(
    "a hook probe reports a program it cannot run or a directory it cannot enter as a shell does") {
  const auto before = open_descriptors();
  auto missing =
      warden::agents::doctor::run_child({"/nonexistent/hook"}, "/", "{}", 5000ms, nullptr);
  CHECK(missing.ran);
  CHECK(missing.exit_code == 127);
  auto no_dir =
      warden::agents::doctor::run_child({"/bin/true"}, "/nonexistent/dir", "{}", 5000ms, nullptr);
  CHECK(no_dir.ran);
  CHECK(no_dir.exit_code == 126);
  auto runs = warden::agents::doctor::run_child({"/bin/sh", "-c", "cat; echo err >&2; exit 3"}, "/",
                                                "{}", 5000ms, nullptr);
  CHECK(runs.ran);
  CHECK(runs.exit_code == 3);
  CHECK(runs.out == "{}");
  CHECK(runs.err == "err\n");
  CHECK(open_descriptors() == before);
}
