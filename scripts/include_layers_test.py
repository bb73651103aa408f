#!/usr/bin/env python3
"""Tests of scripts/include_layers.py on small trees: it passes downward includes and fails,
naming the file, the line and the folders, on an include against the layering, an include
through .., a link against it, an include of another folder's internal header, a public
header that includes an internal one or that no other folder reaches, a listed internal
header that does not exist, a library it does not know and a tree where it finds nothing to
check."""

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
        for lib in ("bindings", "server"):
            self.write(f"{lib}/CMakeLists.txt", f"warden_library_headers(warden_{lib})\n")
        self.write("engine/CMakeLists.txt", "warden_library_headers(warden_engine INTERNAL\n  policy_impl.h)  # x.h\n")
        self.write("engine/policy.cpp", '#include "engine/policy.h"\n#include "bindings/text.h"\n')
        self.write("bindings/text.h", "#pragma once\n")
        self.write("engine/policy.h", "#pragma once\n")
        self.write("engine/policy_impl.h", '#pragma once\n#include "engine/policy.h"\n')
        self.write("server/daemon.cpp", '#include "engine/policy.h"\n')
        self.write("tests/engine/t.cpp", '#include "server/daemon.h"\n')  # tests include anything

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def run_check(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            sys.argv = ["include_layers.py", self.root, *args]
            status = include_layers.main()
        return status, out.getvalue()

    def test_downward_includes_pass(self):
        status, out = self.run_check()
        self.assertEqual(status, 0, out)
        self.assertIn("ok: 2 includes", out)

    def test_an_upward_include_fails_at_its_line(self):
        self.write("bindings/clips_functions.cpp", '// x\n#include "bindings/a.h"\n#include "engine/clips.h"\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("bindings/clips_functions.cpp:3: bindings may not include engine/clips.h "
                      "(bindings may include: nothing)", out)
        self.assertIn("1 problem(s) with the layering", out)

    def test_an_include_through_dotdot_fails(self):
        self.write("engine/rules.cpp", '#include "../server/config.h"\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn('engine/rules.cpp:1: ../server/config.h goes through ..', out)

    def test_a_link_against_the_layering_fails(self):
        self.write("links.txt", "warden_bindings: \nwarden_engine: warden_bindings warden_server\n")
        status, out = self.run_check("--links", os.path.join(self.root, "links.txt"))
        self.assertEqual(status, 1, out)
        self.assertIn("warden_engine links warden_server: engine may include: bindings", out)
        self.write("links.txt", "warden_bindings: \nwarden_engine: warden_bindings\n")
        status, out = self.run_check("--links", os.path.join(self.root, "links.txt"))
        self.assertEqual(status, 0, out)

    def test_an_include_of_another_folders_internal_header_fails(self):
        self.write("server/daemon.cpp", '#include "engine/policy_impl.h"\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("server/daemon.cpp:1: engine/policy_impl.h is internal to engine (engine/CMakeLists.txt)", out)

    def test_a_public_header_including_an_internal_one_fails(self):
        self.write("engine/policy.h", '#pragma once\n#include "engine/policy_impl.h"\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("engine/policy.h:2: the public engine/policy.h includes the internal engine/policy_impl.h", out)

    def test_a_public_header_no_other_folder_reaches_fails(self):
        self.write("engine/helpers.h", "#pragma once\n")
        self.write("engine/policy.cpp", '#include "engine/helpers.h"\n#include "bindings/text.h"\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("engine/helpers.h: public, but no other folder includes it: list it INTERNAL in "
                      "engine/CMakeLists.txt", out)
        # Reached through a public header that another folder includes, it is public.
        self.write("engine/policy.h", '#pragma once\n#include "engine/helpers.h"\n')
        self.write("server/daemon.cpp", '#include "engine/policy.h"\n')
        status, out = self.run_check()
        self.assertEqual(status, 0, out)

    def test_a_listed_internal_header_that_does_not_exist_fails(self):
        os.remove(os.path.join(self.root, "engine/policy_impl.h"))
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("engine/CMakeLists.txt: lists policy_impl.h as internal; there is no engine/policy_impl.h", out)

    def test_a_library_that_does_not_stage_its_headers_fails(self):
        self.write("engine/CMakeLists.txt", "add_library(warden_engine STATIC a.cpp)\n")
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("engine/CMakeLists.txt: does not stage its headers (warden_library_headers)", out)

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
        os.remove(os.path.join(self.root, "server/daemon.cpp"))
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("wrong ROOT", out)


if __name__ == "__main__":
    unittest.main()
