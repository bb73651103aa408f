#!/usr/bin/env python3
"""Tests of scripts/cli_reference.py with a stand-in `warden` (a script printing CLI11-style
help) and small documents: it passes a reference that has every command and option, and
fails, naming each, on a missing command section, a missing option (long or short name),
an option written only as part of a longer one, and a --help that lists no command."""

import contextlib
import io
import json
import os
import stat
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_reference  # noqa: E402

# The stand-in: prints the help its JSON file (WARDEN.json) holds for the words it was given.
FAKE = """#!/usr/bin/env python3
import json, sys
with open(sys.argv[0] + ".json", encoding="utf-8") as f:
    helps = json.load(f)
print(helps[" ".join(a for a in sys.argv[1:] if a != "--help")], end="")
"""

HELP = {
    "": """Test tool
Usage: warden [OPTIONS] SUBCOMMAND

Options:
  -h,--help                   Print this help message and exit
  --version                   Print the versions and exit

Subcommands:
  check                       Check things
  audit                       The log
""",
    "check": """Check things
Usage: warden check [OPTIONS] paths...

Positionals:
  paths TEXT ... REQUIRED     Files

Options:
  -h,--help                   Print this help message and exit
  -c,--config TEXT            A config
  --format TEXT:{text,json}=text
                              Output format
""",
    "audit": """The log
Usage: warden audit [OPTIONS] SUBCOMMAND

Options:
  -h,--help                   Print this help message and exit

Subcommands:
  query                       Query it
""",
    "audit query": """Query it
Usage: warden audit query [OPTIONS]

Options:
  -h,--help                   Print this help message and exit
  --since TEXT                From
""",
}

GOOD = """# Tool

`--version` prints the versions.

## `warden check`

| `paths` | files |
| `-c`, `--config TEXT` | a config |
| `--format` | text or json |

## `warden audit`

## `warden audit query`

`--since TEXT`: from.
"""


class CliReferenceTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.warden = self.fake(HELP)

    def tearDown(self):
        self.tmp.cleanup()

    def fake(self, helps):
        path = os.path.join(self.tmp.name, "warden%d" % len(os.listdir(self.tmp.name)))
        with open(path, "w", encoding="utf-8") as f:
            f.write(FAKE)
        with open(path + ".json", "w", encoding="utf-8") as f:
            json.dump(helps, f)
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def run_check(self, doc_text, warden=None):
        doc = os.path.join(self.tmp.name, "CLI.md")
        with open(doc, "w", encoding="utf-8") as f:
            f.write(doc_text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            rc = cli_reference.main(["cli_reference.py", warden or self.warden, doc])
        return rc, out.getvalue()

    def test_complete_reference_passes(self):
        rc, out = self.run_check(GOOD)
        self.assertEqual(rc, 0, out)
        self.assertIn("its 3 commands", out)

    def assert_fails(self, doc_text, *messages, warden=None):
        rc, out = self.run_check(doc_text, warden)
        self.assertEqual(rc, 1, out)
        for m in messages:
            self.assertIn(m, out)

    def test_missing_command_section_fails(self):
        self.assert_fails(GOOD.replace("## `warden audit query`", "## audit query"),
                          "warden audit query: the command has no section")

    def test_missing_options_fail_each(self):
        self.assert_fails(GOOD.replace("`-c`, ", "").replace("`--since TEXT`: from.", ""),
                          "warden check: option -c is not documented",
                          "warden audit query: option --since is not documented")

    def test_option_in_another_section_does_not_count(self):
        self.assert_fails(GOOD.replace("| `--format` | text or json |\n", "") + "\n`--format`\n",
                          "warden check: option --format is not documented")

    def test_longer_option_name_does_not_count(self):
        self.assert_fails(GOOD.replace("`--format`", "`--formats`"), "option --format is not documented")

    def test_top_level_option_belongs_before_the_commands(self):
        self.assert_fails(GOOD.replace("`--version` prints the versions.", ""),
                          "warden: option --version is not documented")

    def test_help_listing_no_command_fails(self):
        self.assert_fails(GOOD, "lists no command", warden=self.fake({"": "Nothing\nUsage: warden\n"}))

if __name__ == "__main__":
    unittest.main()
