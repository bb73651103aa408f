#!/usr/bin/env python3
"""Tests of scripts/include_layers.py on small trees: it passes downward includes and fails,
naming the file, the line and the folders, on an include against the layering, on a library
it does not know and on a tree where it finds nothing to check."""

import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import include_layers  # noqa: E402


class IncludeLayersTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        for lib in ("bindings", "engine", "server"):
            self.write(f"{lib}/CMakeLists.txt", "# a library\n")
        self.write("engine/policy.cpp", '#include "engine/policy.h"\n#include "bindings/text.h"\n')
        self.write("tests/engine/t.cpp", '#include "server/daemon.h"\n')  # tests include anything

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def run_check(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            sys.argv = ["include_layers.py", self.root]
            status = include_layers.main()
        return status, out.getvalue()

    def test_downward_includes_pass(self):
        status, out = self.run_check()
        self.assertEqual(status, 0, out)
        self.assertIn("ok: 1 includes", out)

    def test_an_upward_include_fails_at_its_line(self):
        self.write("bindings/clips_functions.cpp", '// x\n#include "bindings/a.h"\n#include "engine/clips.h"\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("bindings/clips_functions.cpp:3: bindings may not include engine/clips.h "
                      "(bindings may include: nothing)", out)
        self.assertIn("1 include(s) against the layering", out)

    def test_a_cycle_through_two_folders_fails_on_the_upward_edge(self):
        self.write("engine/engine.h", '#include "server/config.h"\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("engine/engine.h:1: engine may not include server/config.h (engine may include: bindings)", out)

    def test_an_unknown_library_fails(self):
        self.write("newlib/CMakeLists.txt", "# a library\n")
        self.write("newlib/a.cpp", '#include "engine/engine.h"\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("newlib/: a library not placed in the layering", out)

    def test_nothing_to_check_fails(self):
        os.remove(os.path.join(self.root, "engine/policy.cpp"))
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("wrong ROOT", out)


if __name__ == "__main__":
    unittest.main()
