#!/usr/bin/python3
"""Wraps Boost.Program_options tables in `// clang-format off` / `// clang-format on` so that clang-format keeps
one option per line (it would otherwise run the chained `("name", value, "help")` calls together):

    options.add_options()          ->   // clang-format off
        ("a", ..., "help")               options.add_options()
        ("b", ..., "help");                  ("a", ..., "help")
                                             ("b", ..., "help");
                                         // clang-format on

A table is a line ending in `add_options()` followed by lines starting with `(`, up to the one ending in `;`.
Tables already wrapped are left alone, so running it twice changes nothing. Usage: protect_option_tables.py FILE...
"""
import re
import sys

TABLE_START = re.compile(r"^(\s*).*\badd_options\(\)\s*$")


def protect(lines):
    out, i = [], 0
    while i < len(lines):
        start = TABLE_START.match(lines[i])
        wrapped = out and out[-1].strip() == "// clang-format off"
        if not start or wrapped or i + 1 >= len(lines) or not lines[i + 1].lstrip().startswith("("):
            out.append(lines[i])
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not lines[end].rstrip().endswith(";"):
            end += 1
        indent = start.group(1)
        out += [indent + "// clang-format off\n"] + lines[i:end + 1] + [indent + "// clang-format on\n"]
        i = end + 1
    return out


if __name__ == "__main__":
    changed = 0
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as source:
            lines = source.readlines()
        protected = protect(lines)
        if protected != lines:
            with open(path, "w", encoding="utf-8") as target:
                target.writelines(protected)
            changed += 1
    print("protect_option_tables: %d file(s) with option tables wrapped" % changed)
