#!/bin/bash
# Applies .clang-format to every C++/CUDA source and header, once, as a commit of its own (after the branches in
# flight are merged: it touches most files), and marks the tree as formatted so that the `style` test then checks
# the layout instead of skipping:
#   bash tests/style/format_tree.sh && git commit -am "clang-format over the whole tree"
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/style/sources.sh"
command -v clang-format > /dev/null || { echo "format_tree: clang-format is missing (bash mpi_launch/setup.sh --tests)" >&2; exit 1; }
cd "$ROOT"
# Boost.Program_options tables keep one option per line (clang-format cannot be told so: they are fenced off).
pstrain_cxx_sources | xargs -d '\n' /usr/bin/python3 tests/style/protect_option_tables.py
pstrain_cxx_sources | xargs -d '\n' clang-format -i --style=file
clang-format --version > tests/style/tree-formatted
git add tests/style/tree-formatted
echo "format_tree: $(git diff --name-only | wc -l) file(s) reformatted; tests/style/tree-formatted added"
