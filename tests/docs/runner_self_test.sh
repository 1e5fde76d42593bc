#!/usr/bin/env bash
# The doc runner can fail: on fixture pages it must pass good blocks, count skipped ones with their reason, and
# report (exit 1) a command that fails, a block whose exit code is not the one its marker states, a link to a file
# or a heading that does not exist, a ```sh block and a block that never closes. CTest passes BUILD_DIR and WORK_ROOT.
set -euo pipefail
: "${BUILD_DIR:?}"
runner=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/run_doc_commands.sh
mkdir -p "${WORK_ROOT:-/tmp}"
work=$(mktemp -d "${WORK_ROOT:-/tmp}/doc-runner-self-test.XXXXXX")
fail() { echo "FAIL: $*" >&2; exit 1; }
fence='```'

# --- good pages: every block passes, a skipped block is counted with its reason --------------------------------
mkdir -p "$work/good/docs"
cat > "$work/good/README.md" <<PAGE
# fixture
[a page](docs/page.md) and [its heading](docs/page.md#a-heading-with-code)
${fence}bash
echo hello > greeting.txt
build/bin/pstrain --version
${fence}
${fence}bash no-test: needs a cluster
false
${fence}
PAGE
cat > "$work/good/docs/page.md" <<PAGE
## A heading, with \`code\`
${fence}bash exit=2
build/bin/pstrain --no-such-flag
${fence}
${fence}text
not a command
${fence}
PAGE
out=$(SOURCE_DIR=$work/good WORK_ROOT=$work bash "$runner" 2>&1) || fail "good pages failed: $out"
grep -q "ran 3 command(s) in 2 block(s) of 2 page(s)" <<< "$out" || fail "good pages: wrong counts: $out"
grep -q "skipped 1: needs a cluster" <<< "$out" || fail "good pages: the skip reason is not counted: $out"
echo "PASS: good pages pass, 3 commands run, 1 skipped with its reason"

# --- bad pages: each mistake is reported ------------------------------------------------------------------------
mkdir -p "$work/bad/docs"
cat > "$work/bad/README.md" <<PAGE
[missing](docs/missing.md) [no such heading](docs/page.md#nowhere)
${fence}bash
build/bin/pstrain --no-such-flag
${fence}
PAGE
cat > "$work/bad/docs/page.md" <<PAGE
${fence}bash exit=2
true
${fence}
${fence}sh
echo hidden command
${fence}
${fence}bash
echo never closed
PAGE
rc=0
out=$(SOURCE_DIR=$work/bad WORK_ROOT=$work bash "$runner" README.md docs/page.md 2>&1) || rc=$?
[ "$rc" -eq 1 ] || fail "bad pages: exit $rc, expected 1: $out"
for want in "README.md links to docs/missing.md, which does not exist" \
  "README.md links to docs/page.md#nowhere, a heading docs/page.md does not have" "FAIL README.md:2: exit 2, expected 0" \
  "FAIL docs/page.md:1: exit 0, expected 2" "docs/page.md:4: a \`\`\`sh block" "docs/page.md:7: the block never closes"; do
  grep -qF -- "$want" <<< "$out" || fail "bad pages: no '$want' in: $out"
done
echo "PASS: a failing command, a wrong exit code, a broken link, a sh block and an unclosed block are each reported"
rm -rf "$work"
