# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lines of code of the collection's product (plugins/, roles/, playbooks/) at git revisions.

What counts: Python lines holding code (not comments, docstrings, blank lines, nor the
DOCUMENTATION/EXAMPLES/RETURN of modules); YAML, Jinja and shell lines that are neither blank
nor comments. Not counted: README.md, meta/argument_specs.yml (documentation of the variables)
and plugins/filter/*.yml (filter documentation).

  python3 benchmarks/code_size.py REV             total at REV
  python3 benchmarks/code_size.py REV1 REV2       both totals and the change per file
  python3 benchmarks/code_size.py --log A..B      the change each commit of A..B made
"""

from __future__ import absolute_import, division, print_function

import ast
import io
import subprocess
import sys
import tokenize

DOC_NAMES = ("DOCUMENTATION", "EXAMPLES", "RETURN")
SKIPPED_TOKENS = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)


def git(*args):
    return subprocess.run(["git"] + list(args), check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True).stdout


def python_lines(text):
    tree = ast.parse(text)
    skipped = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            skipped.update(range(first.lineno, first.end_lineno + 1))  # a docstring
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) in DOC_NAMES for target in node.targets):
            skipped.update(range(node.lineno, node.end_lineno + 1))
    code = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in SKIPPED_TOKENS:
            code.update(range(token.start[0], token.end[0] + 1))
    return len(code - skipped)


def other_lines(text):
    return sum(1 for line in text.splitlines() if line.strip() not in ("", "---") and not line.strip().startswith("#"))


def counted(path):
    if not path.startswith(("plugins/", "roles/", "playbooks/")) or path.endswith(("README.md", "argument_specs.yml")):
        return False
    if path.startswith("plugins/filter/") and path.endswith(".yml"):
        return False
    return path.endswith((".py", ".yml", ".yaml", ".j2", ".sh"))


def file_lines(rev, path):
    try:
        text = git("show", "%s:%s" % (rev, path))
    except subprocess.CalledProcessError:
        return 0  # not there at rev
    return python_lines(text) if path.endswith(".py") else other_lines(text)


def size(rev):
    return dict((path, file_lines(rev, path)) for path in git("ls-tree", "-r", "--name-only", rev).split() if counted(path))


def main(args):
    if args[:1] == ["--log"] and len(args) == 2:
        for line in git("log", "--reverse", "--format=%h %s", args[1]).splitlines():
            commit = line.split()[0]
            paths = [path for path in git("diff", "--no-renames", "--name-only", commit + "^", commit).split() if counted(path)]
            change = sum(file_lines(commit, path) - file_lines(commit + "^", path) for path in paths)
            print("%+5d %s" % (change, line[:110]))
        return 0
    if not 1 <= len(args) <= 2 or any(arg.startswith("-") for arg in args):
        print(__doc__, file=sys.stderr)
        return 2
    sizes = [size(rev) for rev in args]
    for rev, per_file in zip(args, sizes):
        print("%s %d" % (rev, sum(per_file.values())))
    if len(sizes) == 2:
        before, after = sizes
        for path in sorted(set(before) | set(after)):
            change = after.get(path, 0) - before.get(path, 0)
            if change:
                print("%+5d %s" % (change, path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
