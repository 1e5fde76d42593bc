#!/usr/bin/env bash
# The doc runner can fail: on fixture pages it must pass good blocks, count skipped ones with their reason, and
# report (exit 1) a command that fails, a block whose exit code is not the one its marker states, a link to a file
# or a heading that does not exist, a ```sh block and a block that never closes; PAGE#HEADING must run that
# heading's blocks only (a heading it lacks is reported), IN_PLACE=1 in the checkout itself, RESULTS one line per
# block. CTest passes BUILD_DIR and WORK_ROOT.
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

# --- PAGE#HEADING, IN_PLACE=1 and RESULTS: only the heading's blocks, run in the checkout, one line each ----------
mkdir -p "$work/session"
cat > "$work/session/README.md" <<PAGE
# Tour
${fence}bash
echo outside > outside.txt
${fence}
## Own data
${fence}bash
echo inside > inside.txt
${fence}
### A subsection of it
${fence}bash no-test: a skip is recorded too
false
${fence}
## Next
${fence}bash
echo after > after.txt
${fence}
PAGE
out=$(SOURCE_DIR=$work/session WORK_ROOT=$work IN_PLACE=1 RESULTS=$work/results.tsv bash "$runner" \
      'README.md#own-data' 2>&1) || fail "a section in place failed: $out"
[ -f "$work/session/inside.txt" ] || fail "IN_PLACE=1: the block did not run in SOURCE_DIR: $out"
[ ! -e "$work/session/outside.txt" ] && [ ! -e "$work/session/after.txt" ] \
  || fail "README.md#own-data ran blocks outside its heading: $out"
[ "$(cut -f 1,2 "$work/results.tsv")" = "$(printf 'README.md:6\tok\nREADME.md:10\tskip')" ] \
  || fail "RESULTS: $(cat "$work/results.tsv")"
[ "$(cut -f 6 "$work/results.tsv" | head -n 1)" = "echo inside > inside.txt" ] || fail "RESULTS: the first command"
rc=0
out=$(SOURCE_DIR=$work/session WORK_ROOT=$work bash "$runner" 'README.md#no-such-heading' 2>&1) || rc=$?
[ "$rc" -eq 1 ] && grep -qF "README.md has no heading #no-such-heading" <<< "$out" \
  || fail "a missing heading: exit $rc: $out"
echo "PASS: PAGE#HEADING runs that heading's blocks only, IN_PLACE=1 in the checkout, RESULTS has a line per block"
rm -rf "$work"
