#!/usr/bin/env python3
"""Tests of scripts/doc_commands.py on small Markdown files: it runs what it should, and it
fails, naming the file, the line, the command and its output, when a doc command is broken
or a block is not classified."""

import contextlib
import io
import os
import sys
import tempfile
import textwrap
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_commands  # noqa: E402


class DocCommandsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        # A checkout with rules/ and examples/, and a stand-in `warden`.
        for sub in ("rules", "examples"):
            os.makedirs(os.path.join(self.dir, "src", sub))
        with open(os.path.join(self.dir, "src", "rules", "a.clp"), "w") as f:
            f.write("; rules\n")
        self.warden = os.path.join(self.dir, "warden")
        with open(self.warden, "w") as f:
            f.write("#!/bin/sh\necho \"fake warden $*\"\n[ \"$1\" = fail ] && exit 1\nexit 0\n")
        os.chmod(self.warden, 0o755)

    def tearDown(self):
        self.tmp.cleanup()

    def run_doc(self, markdown):
        path = os.path.join(self.dir, "doc.md")
        with open(path, "w") as f:
            f.write(textwrap.dedent(markdown))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = doc_commands.main(["--no-netns", "--warden", self.warden, "--source",
                                    os.path.join(self.dir, "src"), path])
        return rc, out.getvalue(), err.getvalue()

    def test_blocks_run_in_order_with_warden_rules_and_exit_markers(self):
        rc, out, err = self.run_doc("""\
            # Doc
            ```sh
            warden check rules/ > checked.txt
            test -f rules/a.clp && test -x build/cli/warden
            warden fail   # exit 1: the documented status
            ```
            Some output:
            ```text
            fake warden check rules/
            ```
            ```sh
            grep -q 'fake warden check rules/' checked.txt   # state passes through files
            test "$HOME" = "$PWD"
            ```
            ```sh skip-test: needs a real model
            curl https://example.com
            ```
            """)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("2 of 2 sh block(s) run, 1 skipped", out)
        self.assertIn("doc.md:15: needs a real model", out)

    def test_a_failing_command_names_file_line_command_and_output(self):
        rc, out, err = self.run_doc("""\
            Intro.

            ```sh
            echo fine
            echo "the output of the broken one"; ls /nonexistent-doc-path
            echo never
            ```
            """)
        self.assertEqual(rc, 1)
        self.assertIn("doc.md:3: the block failed (exit 2)", err)
        self.assertIn("doc.md:5: this command failed: echo \"the output of the broken one\"; "
                      "ls /nonexistent-doc-path", err)
        self.assertIn("ls /nonexistent-doc-path", err)
        self.assertIn("the output of the broken one", err)
        self.assertNotIn("\nnever\n", err.split("--- its output")[1])

    def test_a_wrong_exit_status_fails(self):
        rc, out, err = self.run_doc("""\
            ```sh
            true
            warden ok   # exit 1: rejected
            ```
            """)
        self.assertEqual(rc, 1)
        self.assertIn("doc.md:3: exit 0, the doc says exit 1", err)

    def test_a_non_zero_exit_without_a_marker_fails(self):
        rc, out, err = self.run_doc("```sh\nwarden fail\n```\n")
        self.assertEqual(rc, 1)
        self.assertIn("the block failed (exit 1)", err)

    def test_the_failing_line_is_found_after_markers_and_here_documents(self):
        rc, out, err = self.run_doc("""\
            ```sh
            warden fail   # exit 1
            cat > f.txt <<EOF
            a
            EOF
            warden fail
            ```
            """)
        self.assertEqual(rc, 1)
        self.assertIn("doc.md:6: this command failed: warden fail", err)

    def test_unclassified_blocks_fail(self):
        # After a first block of three lines, so each problem is on line 4 or later.
        for markdown, message in [
            ("Text:\n\n    warden check rules/\n", "doc.md:6: an indented code block"),
            ("```\nwarden check rules/\n```\n", "doc.md:4: a fence without an info string"),
            ("```bash\nwarden check rules/\n```\n", "doc.md:4: fence `bash`"),
            ("```sh skip-test\nwarden x\n```\n", "doc.md:4: unknown sh fence"),
            ("```sh skip-test:\nwarden x\n```\n", "doc.md:4: unknown sh fence"),
            ("```sh\nwarden x\n", "doc.md:4: code block never closed"),
        ]:
            with self.subTest(markdown=markdown):
                rc, out, err = self.run_doc("```sh\ntrue\n```\n" + markdown)
                self.assertEqual(rc, 1, out + err)
                self.assertIn(message, err)

    def test_options_of_warden_commands_not_run_must_exist(self):
        self.warden_help("check", "--strict --format")
        rc, out, err = self.run_doc("""\
            ```sh
            true
            ```
            ```text
            warden check [--strict] [--format text|json] DIR   # --anything in a comment
            $ warden check --stritc rules/
            ok: 3 rules
            ```
            ```sh skip-test: a reason
            WARDEN_TOKEN=x warden check --fromat json rules/
            ```
            """)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("doc.md:6: `warden check` has no option --stritc", err)
        self.assertIn("doc.md:10: `warden check` has no option --fromat", err)
        self.assertNotIn("--strict", err.replace("--stritc", ""))
        self.assertNotIn("--anything", err)

    def warden_help(self, sub, options):
        """The stand-in `warden` answers `SUB --help` with these options, other words fail."""
        with open(self.warden, "w") as f:
            f.write("#!/bin/sh\n"
                    f"if [ \"$1 $2\" = \"{sub} --help\" ]; then echo 'options: {options}'; exit 0; fi\n"
                    "[ \"$2\" = --help ] && exit 109\n"
                    "[ \"$1\" = --help ] && { echo 'subcommands'; exit 0; }\n"
                    "exit 0\n")

    def test_a_list_continuation_is_no_code_block(self):
        rc, out, err = self.run_doc("""\
            ```sh
            true
            ```
            - an item

                its second paragraph, indented
            """)
        self.assertEqual(rc, 0, out + err)

    def test_nothing_run_is_a_failure(self):
        rc, out, err = self.run_doc("```sh skip-test: a reason\nwarden x\n```\n```text\nout\n```\n")
        self.assertEqual(rc, 1)
        self.assertIn("no sh block ran", err)
        self.assertIn("skipped", out)

    def test_background_processes_are_stopped_after_the_file(self):
        pidfile = os.path.join(self.dir, "pid")
        rc, out, err = self.run_doc(f"""\
            ```sh
            sleep 300 &
            echo $! > {pidfile}
            ```
            ```sh
            kill -0 "$(cat {pidfile})"   # still running in the next block
            ```
            """)
        self.assertEqual(rc, 0, out + err)
        with open(pidfile) as f:
            pid = int(f.read())
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            self.fail(f"the background process {pid} outlived the run")


if __name__ == "__main__":
    unittest.main()
