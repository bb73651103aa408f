#!/usr/bin/env python3
"""Tests of scripts/format_check.py on small git checkouts holding the project's .clang-format:
it passes formatted files and fails, naming the file, on one clang-format would change, on a
missing clang-format and on a checkout with nothing to check; --fix formats the files. And the
style itself keeps bindings/clips.h the last include of its block (CLIPS defines macros)."""

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import format_check  # noqa: E402

FORMATTED = ('#include "engine/a.h"\n'
             "\n"
             "namespace warden {\n"
             "\n"
             "int twice(int x) { return 2 * x; }\n"
             "\n"
             "}  // namespace warden\n")
# The same code as it might be typed: clang-format would change it.
UNFORMATTED = FORMATTED.replace("int twice(int x) { return 2 * x; }", "int twice( int x ){\n    return 2*x;\n}")


class FormatCheckTest(unittest.TestCase):
    def setUp(self):
        if shutil.which("clang-format") is None:
            self.fail("clang-format not found: install the Debian package clang-format")
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        shutil.copy(os.path.join(HERE, "..", ".clang-format"), os.path.join(self.root, ".clang-format"))
        subprocess.run(["git", "init", "-q", self.root], check=True)
        self.write("engine/a.h", "#pragma once\n\nnamespace warden {\nint twice(int x);\n}  // namespace warden\n")
        self.write("engine/a.cpp", FORMATTED)
        self.saved_env = os.environ.get("CLANG_FORMAT")

    def tearDown(self):
        if self.saved_env is None:
            os.environ.pop("CLANG_FORMAT", None)
        else:
            os.environ["CLANG_FORMAT"] = self.saved_env
        self.tmp.cleanup()

    def write(self, rel, text, track=True):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        if track:
            subprocess.run(["git", "-C", self.root, "add", rel], check=True)

    def read(self, rel):
        with open(os.path.join(self.root, rel)) as f:
            return f.read()

    def run_check(self, *flags):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = format_check.main([*flags, self.root])
        return status, out.getvalue()

    def test_formatted_files_pass(self):
        status, out = self.run_check()
        self.assertEqual(status, 0, out)
        self.assertIn("ok: 2 tracked C++ files formatted", out)

    def test_an_unformatted_file_fails_and_is_named(self):
        self.write("engine/b.cc", UNFORMATTED)
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("engine/b.cc:5:", out)
        self.assertIn("code should be clang-formatted", out)
        self.assertIn("format_check: 1 of 3 files are not formatted", out)
        self.assertIn("\n  engine/b.cc\n", out)
        self.assertNotIn("\n  engine/a.cpp\n", out)

    def test_an_untracked_file_is_not_checked(self):
        self.write("engine/scratch.cpp", UNFORMATTED, track=False)
        status, out = self.run_check()
        self.assertEqual(status, 0, out)

    def test_fix_formats_the_files_and_the_check_then_passes(self):
        self.write("engine/b.cc", UNFORMATTED)
        status, out = self.run_check("--fix")
        self.assertEqual(status, 0, out)
        self.assertEqual(self.read("engine/b.cc"), FORMATTED)
        status, out = self.run_check()
        self.assertEqual(status, 0, out)

    def test_clips_h_stays_the_last_include_of_its_block(self):
        self.write("engine/c.cpp",
                   '#include "engine/c.h"\n\n'
                   '#include "bindings/clips.h"  // last: CLIPS defines macros\n'
                   '#include "bindings/text.h"\n#include "engine/a.h"\n#include "zeta/z.h"\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("\n  engine/c.cpp\n", out)
        self.assertEqual(self.run_check("--fix")[0], 0)
        includes = [line for line in self.read("engine/c.cpp").splitlines() if line.startswith("#include")]
        self.assertEqual(includes, ['#include "engine/c.h"', '#include "bindings/text.h"',
                                    '#include "engine/a.h"', '#include "zeta/z.h"',
                                    '#include "bindings/clips.h"  // last: CLIPS defines macros'])

    def test_includes_are_not_moved_across_blocks(self):
        text = ('#include "engine/d.h"\n\n#include <utility>\n\n#include <boost/asio.hpp>\n\n'
                '#include "zeta/z.h"\n// after z.h: reads its macros\n#include "alpha/a.h"\n')
        self.write("engine/d.cpp", text)
        status, out = self.run_check()
        self.assertEqual(status, 0, out)

    def test_raw_strings_keep_their_text(self):
        text = 'const char* kCode = R"cc(int   x ;)cc";\nconst char* kProto = R"pb(a:   1)pb";\n'
        self.write("engine/e.cpp", text)
        status, out = self.run_check()
        self.assertEqual(status, 0, out)

    def test_a_missing_clang_format_fails(self):
        os.environ["CLANG_FORMAT"] = os.path.join(self.root, "no-such-clang-format")
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("not found: install the Debian package clang-format", out)

    def test_nothing_to_check_fails(self):
        subprocess.run(["git", "-C", self.root, "rm", "-q", "--cached", "engine/a.h", "engine/a.cpp"], check=True)
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("wrong ROOT", out)

    def test_a_directory_that_is_no_checkout_fails(self):
        shutil.rmtree(os.path.join(self.root, ".git"))
        # git must not find a checkout above the temporary directory either.
        os.environ["GIT_CEILING_DIRECTORIES"] = os.path.dirname(self.root)
        try:
            status, out = self.run_check()
        finally:
            del os.environ["GIT_CEILING_DIRECTORIES"]
        self.assertEqual(status, 1, out)
        self.assertIn("is not a git checkout", out)


if __name__ == "__main__":
    unittest.main()
