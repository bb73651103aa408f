#!/usr/bin/env python3
"""Fails when two source files of one unity-built target define an internal function of one name.

Production code and tests compile in unity batches (CMakeLists.txt): several .cpp files in one
translation unit, so the functions each file keeps to itself (in an anonymous namespace, or
`static`) share one scope. Two of one name and one signature fail to compile; of one name and
different signatures they compile as overloads, and a call in one file can silently resolve to
the other file's function. Which files share a batch changes as files are added, so no two files
of a target may define an internal function of one name.

Usage: unity_names.py DIR [DIR...]: each DIR's *.cpp files are one target (a test directory's
*_test.cpp files, a library's sources). Prints each clash and exits 1; exits 0 when none.
"""
import os
import re
import sys

IDENT = re.compile(r'[A-Za-z_]\w*')


def code_only(text):
    """TEXT with comments, string and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
            continue
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append('\n' * text.count('\n', i, j))
            i = j
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(', text[i:])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            end = text.find(')' + raw.group(1) + '"', i + raw.end())
            end = n if end < 0 else end + len(raw.group(1)) + 2
            out.append('""' + '\n' * text.count('\n', i, end))
            i = end
            continue
        if c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return ''.join(out)


def internal_functions(text):
    """The functions TEXT defines in an anonymous namespace or as `static` at namespace scope
    (not members, not lambdas), each as its enclosing named namespaces and name: a function in
    an inner namespace hides one of its name in an outer one, so only these can clash."""
    code = code_only(text)
    names = set()
    # A stack of what each open brace is: 'anon', 'ns' (a named namespace), or 'other'.
    stack = []
    statement = ''
    for ch in code:
        if ch == '{':
            head = statement.strip()
            named = re.fullmatch(r'(?:inline\s+)?namespace\s+([\w:]+)', head)
            if re.fullmatch(r'(inline\s+)?namespace', head):
                stack.append('anon')
            elif named:
                stack.append('ns:' + named.group(1))
            elif head.startswith('extern "'):
                stack.append('ns:')
            else:
                at_namespace_scope = all(k == 'anon' or k.startswith('ns:') for k in stack)
                internal = 'anon' in stack or re.match(r'(static\b|.*\bstatic\s)', head)
                # NAME(PARAMS) QUALIFIERS, NAME not qualified (Class::member is defined elsewhere).
                m = re.search(r'(?:^|[\s*&>])([A-Za-z_]\w*)\s*\((?:[^()]|\([^()]*\))*\)[^()=]*$', head)
                if (at_namespace_scope and internal and m
                        and not re.match(r'(struct|class|union|enum)\b', head)
                        and not m.group(1).isupper()  # a macro: TEST_CASE("…") {
                        and m.group(1) not in ('if', 'for', 'while', 'switch', 'catch', 'return', 'operator')):
                    scope = '::'.join(k[3:] for k in stack if k.startswith('ns:') and k != 'ns:')
                    names.add((scope + '::' if scope else '') + m.group(1))
                stack.append('other')
            statement = ''
        elif ch == '}':
            if stack:
                stack.pop()
            statement = ''
        elif ch == ';':
            statement = ''
        else:
            statement += ch
            if ch == '\n' and statement.lstrip().startswith('#'):
                statement = ''
    return names


def main(dirs):
    clashes = 0
    for d in dirs:
        where = {}
        for name in sorted(os.listdir(d)):
            if not name.endswith('.cpp'):
                continue
            with open(os.path.join(d, name), encoding='utf-8') as f:
                for fn in internal_functions(f.read()):
                    where.setdefault(fn, []).append(name)
        for fn, files in sorted(where.items()):
            if len(files) > 1:
                print(f'{d}: {fn} is defined internally in {", ".join(files)}')
                clashes += 1
    if clashes:
        print('rename all but one: their unity batch would make them overloads of each other '
              '(a function two files share belongs in a header)')
    return 1 if clashes else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
