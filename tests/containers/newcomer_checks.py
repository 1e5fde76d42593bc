#!/usr/bin/env python3
"""The newcomer's first hour, judged (tests/containers/fresh_machine.sh newcomer runs this in the container).

A newcomer reads the output of each step; this script reads the files instead. It takes the quickstart's time,
exit code and log, and the doc runner's RESULTS file (tests/docs/run_doc_commands.sh: one line per ```bash block
of the pages the newcomer followed, run in place in the checkout), names each block's step from its commands, checks
what the step left behind (paths taken from the block's own commands, so that a renamed folder in the docs is
followed), and writes the table: step, doc block, wall seconds, pass/fail, what was checked. Exit 1 when a step
failed, or a step of the hour (quickstart, own .npz data, resumed run, 2-node launch, sweep) is missing.

  newcomer_checks.py --checkout DIR --quickstart-command CMD --quickstart-rc RC --quickstart-seconds S
                     --quickstart-log LOG --results RESULTS.tsv --table TABLE.md
"""
import argparse
import glob
import json
import os
import re
import shlex

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class CheckFailed(Exception):
    pass


def require(condition, message):
    if not condition:
        raise CheckFailed(message)


def metrics(run_dir):
    path = os.path.join(run_dir, "metrics.jsonl")
    require(os.path.isfile(path), f"no {path}")
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def is_png(path):
    require(os.path.isfile(path), f"no {path}")
    with open(path, "rb") as f:
        require(f.read(8) == PNG_SIGNATURE, f"{path} is not a PNG")


def words(block):
    """The block's commands as shell words, continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", block)
    result = []
    for line in text.splitlines():
        try:
            result.append(shlex.split(line, comments=True))
        except ValueError:  # a multi-line quoted string (python3 -c '...'): its words do not matter here
            result.append(line.split())
    return [w for w in result if w]


def flag(block, name):
    """The last value the block gives FLAG (its commands' own words)."""
    value = None
    for command in words(block):
        for i, word in enumerate(command[:-1]):
            if word == name:
                value = command[i + 1]
    return value


def shards(folder, trains):
    for name in ["MANIFEST", "test.h5"] + [f"train-{i:05d}.h5" for i in range(trains)]:
        require(os.path.isfile(os.path.join(folder, name)), f"{folder}/{name} missing")


# --- one check per step: each returns what it verified ------------------------------------------------------------

def check_quickstart(args):
    require(args.quickstart_rc == 0, f"'{args.quickstart_command}' exited {args.quickstart_rc}")
    runs = sorted(glob.glob("runs/fashion-mnist-*/metrics.jsonl"))
    require(len(runs) == 1, f"expected one runs/fashion-mnist-<time>/ run, found {runs}")
    run_dir = os.path.dirname(runs[0])
    records = metrics(run_dir)
    require([r["pass"] for r in records] == list(range(10)), f"passes {[r['pass'] for r in records]}, not 0..9")
    with open(args.quickstart_log, errors="replace") as f:
        finished = [line for line in f if "training finished:" in line]
    require(finished, "the quickstart printed no 'training finished' line")
    printed = re.search(r"final ([0-9.]+)", finished[-1])
    final = records[-1]["test_accuracy"]
    require(printed and abs(float(printed.group(1)) - final) < 1e-3,
            f"printed '{finished[-1].strip()}' but metrics.jsonl says {final}")
    require(final >= 0.85, f"final test accuracy {final} < 0.85")
    is_png(os.path.join(run_dir, "training.png"))
    return f"{run_dir}: 10 passes, test accuracy {final:.4f} (printed = metrics.jsonl), training.png"


def check_train(block, log):
    data, out = flag(block, "--output"), flag(block, "--output-dir")
    shards(data, int(flag(block, "--split-count")))
    passes = int(flag(block, "--passes"))
    require(len(metrics(out)) >= passes, f"{out}/metrics.jsonl has fewer than {passes} passes")
    return f"{data}: {flag(block, '--split-count')} shards + test.h5 + MANIFEST; {out}: {passes} passes trained"


def check_curves(block, log):
    run_dir = next(w[1] for w in words(block) if w[0].endswith("pstrain-plot"))
    is_png(os.path.join(run_dir, "training.png"))
    return f"{run_dir}/training.png is a PNG"


def check_resume(block, log):
    out, passes = flag(block, "--output-dir"), int(flag(block, "--passes"))
    require(flag(block, "--resume") == "auto", "the block does not use --resume auto")
    resumed = re.findall(r"resuming from (\S+): pass (\d+), step (\d+) of it", log)
    require(resumed, "the resumed run printed no 'resuming from CHECKPOINT' line: it started over")
    checkpoint, at_pass = resumed[0][0], int(resumed[0][1])
    require(checkpoint.startswith(os.path.join(out, "checkpoints", "ckpt-")), f"resumed from {checkpoint}, not {out}'s")
    require(at_pass > 0, f"resumed at pass {at_pass}: nothing was kept")
    records = metrics(out)
    require([r["pass"] for r in records] == list(range(passes)),
            f"{out}/metrics.jsonl passes {[r['pass'] for r in records]}, not 0..{passes - 1} once each")
    return f"continued from {checkpoint} at pass {at_pass}; {out}/metrics.jsonl: passes 0..{passes - 1} once each"


def check_two_nodes(block, log):
    hostfile = flag(block, "--hostfile")
    with open(hostfile) as f:
        hosts = [line.split()[0] for line in f if line.strip()]
    require(len(hosts) >= 2, f"{hostfile} names {len(hosts)} host entr(ies), not 2")
    ranks = int(flag(block, "-np"))
    out = os.path.join(flag(block, "--output-root") or "runs", flag(block, "--run-name"))
    records = metrics(out)
    require(len(records) == int(flag(block, "--passes")), f"{out}: {len(records)} pass(es)")
    nodes = sorted(glob.glob(os.path.join(out, "node_*")))
    require(len(nodes) == ranks, f"{out}: {len(nodes)} node_* folders for {ranks} ranks")
    require(re.search(rf"pstrain-launch: {ranks} ranks, output in \S*{re.escape(out)}", log),
            "pstrain-launch did not announce its ranks and output folder")
    tcp = "--tcp" in block
    return f"hostfile {hostfile} ({' + '.join(hosts)}), {ranks} ranks{' over TCP' if tcp else ''}, {out}: " \
           f"{len(records)} pass(es), {len(nodes)} node folders"


def check_sweep(block, log):
    sweep = flag(block, "--sweep-dir")
    require(os.path.isfile(os.path.join(sweep, "report.json")), f"no {sweep}/report.json")
    with open(os.path.join(sweep, "report.csv")) as f:
        rows = [line for line in f if line.strip()][1:]
    sets = sorted(glob.glob(os.path.join(sweep, "runs", "set-*", "metrics.jsonl")))
    require(len(rows) >= 2 and len(sets) == len(rows), f"{sweep}: {len(rows)} report rows, {len(sets)} finished sets")
    return f"{sweep}: {len(sets)} sets trained, report.csv/report.json written"


def check_own_data(block, log):
    npz = flag(block, "--input")
    require(npz.endswith(".npz") and os.path.isfile(npz), f"no {npz}")
    data = next(c[c.index("--output") + 1] for c in words(block) if "npz" in c and "--output" in c)
    shards(data, 2)
    require(os.path.isfile(os.path.join(data, "valid.h5")), f"{data}/valid.h5 missing (--valid-fraction)")
    trained = next(c for c in words(block) if c[0].endswith("/pstrain") and "--data-dir" in c)
    out = trained[trained.index("--output-dir") + 1]
    records = metrics(out)
    require(len(records) >= 1 and "test_accuracy" in records[-1], f"{out}: no pass trained")
    return f"{npz} -> {data} (2 shards, test, valid); {out}: {len(records)} pass(es) trained on it"


# A block's step, from its commands; the hour needs every step marked required.
STEPS = [  # (step, test on the block's text, check, required)
    ("own data from a .npz", lambda b: "pstrain-data npz" in b, check_own_data, True),
    ("resumed run (--resume auto)", lambda b: "--resume" in b, check_resume, True),
    ("2-node launch (pstrain-launch, hostfile)", lambda b: "pstrain-launch" in b and "--hostfile" in b,
     check_two_nodes, True),
    ("sweep (grid, run, report)", lambda b: "pstrain-sweep report" in b, check_sweep, True),
    ("curves (pstrain-plot)", lambda b: "pstrain-plot" in b, check_curves, False),
    ("train on real data, 3 ranks", lambda b: "pstrain-data fashion-mnist" in b and "mpirun" in b, check_train, True),
]


def judge_blocks(results, setup_command):
    rows = []
    with open(results) as f:
        lines = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    for where, result, seconds, rc, log_path, first in lines:
        if result == "skip":
            if first.split("#")[0].strip() == setup_command:
                continue  # the set-up block: the quickstart row
            rows.append(("(not run: marked no-test)", where, 0.0, "skip", first))
            continue
        block_file = log_path[: -len(".log")]
        with open(block_file) as f:
            block = f.read()
        with open(log_path, errors="replace") as f:
            log = f.read()
        step, check, _ = next(((s, c, r) for s, test, c, r in STEPS if test(block)), (first[:50], None, False))
        if result != "ok":
            rows.append((step, where, float(seconds), "FAIL", f"exit {rc}; log {log_path}"))
            continue
        try:
            rows.append((step, where, float(seconds), "pass", check(block, log) if check else "exit 0"))
        except (CheckFailed, OSError, ValueError, StopIteration, TypeError) as e:
            rows.append((step, where, float(seconds), "FAIL", f"exit 0, but: {e}"))
    return rows


def main():
    parser = argparse.ArgumentParser()
    for name in ("checkout", "quickstart-command", "quickstart-log", "results", "table"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--quickstart-rc", type=int, required=True)
    parser.add_argument("--quickstart-seconds", type=float, required=True)
    args = parser.parse_args()
    os.chdir(args.checkout)
    try:
        quickstart = ("pass", check_quickstart(args))
    except (CheckFailed, OSError, ValueError, KeyError) as e:
        quickstart = ("FAIL", str(e))
    rows = [("set-up + quickstart (README's first command)", "README.md:5", args.quickstart_seconds, *quickstart)]
    if os.path.isfile(args.results):
        rows += judge_blocks(args.results, args.quickstart_command)
    missing = [s for s, _, _, required in STEPS if required and s not in [r[0] for r in rows]]
    total = sum(r[2] for r in rows)
    lines = ["| step | doc block | seconds | result | checked |", "|---|---|---:|---|---|"]
    lines += [f"| {s} | {w} | {t:.1f} | {res} | {what} |" for s, w, t, res, what in rows]
    lines += [f"| {s} | - | - | FAIL | the pages followed have no block for this step |" for s in missing]
    lines.append(f"| total (commands only, no reading) | | {total:.1f} | | |")
    with open(args.table + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(args.table + ".tmp", args.table)
    print("\n".join(lines))
    failed = [r for r in rows if r[3] == "FAIL"]
    if failed or missing:
        print(f"FAIL: {len(failed)} step(s) failed, {len(missing)} step(s) missing")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
