#!/usr/bin/env bash
# examples/brown-nplm.ini as shipped (only --passes 1 and the data added), on the small text fixture instead of
# the Brown corpus, through mpirun on 3 ranks: the recipe parses, holds the embedding table by rows on the
# server, and reports the language-model figures (perplexities, words/s, best-valid).
#   example_brown.sh PATH
source "$(dirname "$0")/common.sh"
path=$1
work=$(new_work_dir "example_brown_nplm_np3_${path}")
repo="$(cd "$(dirname "$0")/../.." && pwd)"
text_fixture="$repo/tests/unit/data/text"
"$BIN_DIR/pstrain-data" text --train "$text_fixture/train.txt" --valid "$text_fixture/valid.txt" \
  --test "$text_fixture/test.txt" --output "$work/text" --split-count 2 > "$work/convert.log" 2>&1 \
  || { cat "$work/convert.log"; fail "convert"; }
run_mpi 3 "$path" 120 "$BIN_DIR/pstrain" --config "$repo/examples/brown-nplm.ini" --data-dir "$work/text" \
  --passes 1 --output-dir "$work/run" > "$work/run.log" 2>&1 || { cat "$work/run.log"; fail "the recipe did not run"; }
grep -q "1 parameter-server shard(s) + 2 trainer(s), mode sync" "$work/run.log" || fail "not sync on 1 server + 2 trainers"
grep -q "embed.weight .* is held by rows on the servers" "$work/run.log" || fail "the table was not held by rows"
python3 - "$work/run" <<'PY' || fail "the language-model figures are missing or wrong"
import json, math, os, sys
out = sys.argv[1]
m = json.loads(open(os.path.join(out, "metrics.jsonl")).read().strip().splitlines()[-1])
for split in ("train", "valid", "test"):
    assert m[split + "_perplexity"] > 1, (split, m)
assert math.isclose(m["test_perplexity"], math.exp(m["test_loss"]), rel_tol=1e-5), m
assert m["words_per_sec"] > 0 and m["model"] == "nplm", m
assert os.readlink(os.path.join(out, "best-valid")) == "pass-00000"
print("test perplexity", round(m["test_perplexity"], 1), "valid", round(m["valid_perplexity"], 1))
PY
echo "PASS: examples/brown-nplm.ini runs on 3 ranks ($path)"
