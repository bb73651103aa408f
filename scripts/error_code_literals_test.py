#!/usr/bin/env python3
"""Tests of scripts/error_code_literals.py on small trees: it passes codes used through the
table's constants and fails, naming the file, the line and the constant to use, on a code
written as a literal (plain or inside a JSON text), or one the table lacks."""

import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import error_code_literals  # noqa: E402


class ErrorCodeLiteralsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        self.write("engine/diagnostic.h",
                   'inline constexpr const char* kBusy = "E_BUSY";\n'
                   'inline constexpr const char* kDecider = "E_DECIDER";\n')
        self.write("agents/hook_run.cpp", 'return answer_failure(code::kDecider, "no decider");\n'
                                          'if (c.rfind("E_", 0) == 0) {}  // a prefix, not a code\n')
        self.write("tests/agents/hook_test.cpp", 'CHECK(code == "E_DECIDER");\n')  # tests may

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
            sys.argv = ["error_code_literals.py", self.root]
            status = error_code_literals.main()
        return status, out.getvalue()

    def test_constants_pass(self):
        status, out = self.run_check()
        self.assertEqual(status, 0, out)
        self.assertIn("ok: 2 codes", out)

    def test_a_literal_fails_naming_the_constant(self):
        self.write("server/queue.cpp", '// x\nreturn fail(id, "E_BUSY", "full");\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn('server/queue.cpp:2: "E_BUSY" written as a literal: use code::kBusy (engine/diagnostic.h)', out)

    def test_a_code_inside_a_json_text_fails(self):
        self.write("server/submit.cpp", 'send("{\\"code\\":\\"E_BUSY\\",\\"message\\":\\"x\\"}");\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn('server/submit.cpp:1: "E_BUSY" written as a literal', out)

    def test_a_code_not_in_the_table_fails(self):
        self.write("cli/main.cpp", 'std::string c = "E_NEW_THING";\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn('cli/main.cpp:1: "E_NEW_THING" written as a literal: not in the table', out)

    def test_no_table_fails(self):
        os.remove(os.path.join(self.root, "engine/diagnostic.h"))
        self.write("engine/diagnostic.h", "// empty\n")
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("wrong ROOT", out)


if __name__ == "__main__":
    unittest.main()
