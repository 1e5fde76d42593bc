#!/usr/bin/python3
"""The tables and the PNG of speed_report.sh, from its results folder.

Usage: speed_report.py OUT     (OUT: a RESULTS_ROOT/<timestamp>-speed/ folder that speed_report.sh wrote)

Reads OUT/plan.csv (one line per run, in the order the runs went) and each run's output in OUT/raw/: pstrain's
NAME.metrics.jsonl, PyTorch's NAME.json. Writes OUT/table.md (also printed), OUT/summary.json, OUT/rounds.csv
(every run's numbers) and OUT/speed.png (when matplotlib imports). Runs that are missing (a run that failed, or
a folder of an interrupted run) show as "-"; rerunning this on such a folder reports what is there.

Numbers:
- a run's samples/s is the mean over passes 1..N-1 of the samples/s the program reports (pass 0 warms up; a
  run of one pass: pass 0). pstrain: metrics.jsonl samples_per_sec (all trainers, slowest trainer's pass
  time); PyTorch (torch_cnn.py): the same definition.
- a cell is the median over the rounds; a ratio is computed per round (the two runs of that round) and then
  the median taken, with the range (min-max) over the rounds.
- the per-step breakdown (ms): pstrain's compute_s_per_step, push_s_per_step, barrier_s_per_step (the sync
  barriers: waiting for the servers' update and the slowest trainer), pull_s_per_step, allreduce_s_per_step,
  each the mean over the same passes, then the median over the rounds; "other" is the step time
  (pass_seconds / steps_per_trainer) minus those (the optimizer in local and all-reduce runs, batch assembly
  bookkeeping, ...), never below 0.
"""

import csv
import glob
import json
import math
import os
import statistics
import sys

PARTS = ("compute", "push", "barrier", "pull", "allreduce")
CONFIG_LABEL = {"local": "local", "sync": "sync PS", "allreduce": "all-reduce"}
# The bars: (model, batch, minimum ratio pstrain local / PyTorch).
LOCAL_BARS = (("mlp", 64, 1.2), ("mlp", 256, 1.1), ("cnn", 64, 1.2), ("cnn", 256, 1.2))
SYNC_BAR = (64, 0.85)  # 1 server + 1 trainer sync over tcp >= 0.85x local samples/s at batch 64
# MLP 784-256-128-10 local at batch 256 >= 85% of the machine's single-core sgemm rate. Its GEMM work per training
# sample: forward and dW of the three dense layers, dX of the last two (the first has no input gradient).
WIDTHS = (784, 256, 128, 10)
MLP_FLOP = sum(2 * 2 * a * b for a, b in zip(WIDTHS, WIDTHS[1:])) + sum(2 * a * b for a, b in zip(WIDTHS[1:], WIDTHS[2:]))
SGEMM_BAR = ("mlp", 256, 0.85)


def fail(message):
    raise SystemExit(f"speed_report.py: {message}")


def mean(values):
    return sum(values) / len(values)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def spread(values):
    values = [v for v in values if v is not None]
    return (min(values), max(values)) if values else (None, None)


def timed(passes):
    """The passes that count: 1..N-1, or pass 0 alone."""
    return passes[1:] if len(passes) > 1 else passes[:1]


def read_pstrain(path):
    by_pass = {}
    with open(path) as lines:
        for line in lines:
            if line.strip():
                record = json.loads(line)
                by_pass[record["pass"]] = record
    records = timed([by_pass[p] for p in sorted(by_pass)])
    if not records:
        return None
    run = {"samples_per_sec": mean([r["samples_per_sec"] for r in records]),
           "trainers": records[-1].get("trainers"), "pservers": records[-1].get("pservers"),
           "test_accuracy": records[-1].get("test_accuracy")}
    step_ms = mean([1000 * r["pass_seconds"] / r["steps_per_trainer"] for r in records
                    if r.get("steps_per_trainer")]) if all(r.get("steps_per_trainer") for r in records) else None
    known = 0.0
    for part in PARTS:
        values = [r.get(f"{part}_s_per_step") for r in records]
        run[f"{part}_ms"] = 1000 * mean(values) if all(isinstance(v, (int, float)) for v in values) else None
        known += run[f"{part}_ms"] or 0.0
    run["step_ms"] = step_ms
    run["other_ms"] = max(0.0, step_ms - known) if step_ms is not None else None
    return run


def read_sgemm(path):
    """The best provider's median GFLOP/s on the 1024^3 square (gemm_providers' results.csv)."""
    rates = [(float(r["median_gflops"]), r["provider"]) for r in csv.DictReader(open(path))
             if r["state"] == "measured"]
    if not rates:
        return None
    gflops, provider = max(rates)
    return {"gflops": gflops, "provider": provider}


def read_torch(path):
    with open(path) as lines:
        result = json.loads(lines.read().strip().splitlines()[-1])
    return {"samples_per_sec": result["samples_per_sec"], "test_accuracy": result.get("final_test_accuracy")}


def load(out):
    plan_path = os.path.join(out, "plan.csv")
    if not os.path.isfile(plan_path):
        fail(f"{plan_path} not found (is {out} a speed_report.sh results folder?)")
    runs = []
    for entry in csv.DictReader(open(plan_path)):
        entry["round"], entry["batch"], entry["ranks"] = int(entry["round"]), int(entry["batch"]), int(entry["ranks"])
        raw = os.path.join(out, "raw", entry["name"])
        try:
            if entry["program"] == "pstrain":
                data = read_pstrain(raw + ".metrics.jsonl")
            elif entry["program"] == "gemm_providers":
                data = read_sgemm(raw + ".csv")
            else:
                data = read_torch(raw + ".json")
        except (OSError, ValueError, KeyError, IndexError, ZeroDivisionError) as error:
            print(f"speed_report.py: skipping {entry['name']}: {error}", file=sys.stderr)
            data = None
        if data is not None:
            runs.append({**entry, **data})
    return runs


def fmt(value, spec=".0f", suffix=""):
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec) + suffix


def span(low, high):
    """'min-max', or '-' when there is nothing."""
    return "-" if low is None else f"{low:.2f}-{high:.2f}"


def ordered(values):
    """Distinct values in first-seen order."""
    return list(dict.fromkeys(values))


# ---- part local: pstrain vs PyTorch ---------------------------------------------------------------------------

def local_rows(runs):
    mine = [r for r in runs if r["part"] == "local"]
    rows = []
    for model in ordered(r["model"] for r in mine):
        for batch in ordered(r["batch"] for r in mine if r["model"] == model):
            cell = [r for r in mine if r["model"] == model and r["batch"] == batch]
            by_round = {}
            for r in cell:
                by_round.setdefault(r["round"], {})[r["program"]] = r["samples_per_sec"]
            ratios = [v["pstrain"] / v["pytorch"] for v in by_round.values() if "pstrain" in v and "pytorch" in v]
            low, high = spread(ratios)
            rows.append({"model": model, "batch": batch,
                         "pstrain": median([v.get("pstrain") for v in by_round.values()]),
                         "pytorch": median([v.get("pytorch") for v in by_round.values()]),
                         "ratio": median(ratios), "ratio_min": low, "ratio_max": high, "rounds": len(ratios),
                         "ratios": ratios})
    return rows


def local_table(rows):
    lines = ["| model | batch | pstrain local samples/s | PyTorch samples/s | ratio (median) | ratio range | rounds |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['batch']} | {fmt(r['pstrain'])} | {fmt(r['pytorch'])} "
                     f"| {fmt(r['ratio'], '.2f', 'x')} | {span(r['ratio_min'], r['ratio_max'])} "
                     f"| {r['rounds']} |")
    return lines


# ---- part scaling --------------------------------------------------------------------------------------------

def local_reference(runs, model, batch, round_):
    """samples/s of pstrain local for this model, batch and round: the scaling part's, else the local part's."""
    for part in ("scaling", "local"):
        for r in runs:
            if (r["part"], r["model"], r["batch"], r["round"], r["program"], r["config"]) == \
                    (part, model, batch, round_, "pstrain", "local"):
                return r["samples_per_sec"]
    return None


def scaling_rows(runs):
    mine = [r for r in runs if r["part"] == "scaling"]
    rows = []
    for model in ordered(r["model"] for r in mine):
        for batch in ordered(r["batch"] for r in mine if r["model"] == model):
            cell = [r for r in mine if r["model"] == model and r["batch"] == batch]
            for config, path, ranks in ordered((r["config"], r["path"], r["ranks"]) for r in cell):
                group = [r for r in cell if (r["config"], r["path"], r["ranks"]) == (config, path, ranks)]
                ratios = []
                for r in group:
                    reference = local_reference(runs, model, batch, r["round"])
                    if reference:
                        ratios.append(r["samples_per_sec"] / reference)
                low, high = spread(ratios)
                row = {"model": model, "batch": batch, "config": config, "path": path, "ranks": ranks,
                       "trainers": group[0]["trainers"], "pservers": group[0]["pservers"],
                       "samples_per_sec": median([r["samples_per_sec"] for r in group]),
                       "vs_local": median(ratios), "vs_local_min": low, "vs_local_max": high, "rounds": len(group)}
                for key in [f"{p}_ms" for p in PARTS] + ["other_ms", "step_ms"]:
                    row[key] = median([r[key] for r in group])
                rows.append(row)
    return rows


def layout(row):
    if row["config"] == "local":
        return "local (1 process, no MPI)"
    if row["config"] == "sync":
        return f"sync PS, 1 server + {row['ranks'] - 1} trainer{'s' if row['ranks'] > 2 else ''}"
    return f"all-reduce, {row['ranks']} trainers"


def scaling_table(rows):
    lines = ["| model | batch | path | configuration | ranks | samples/s | vs local | range | compute | push "
             "| barrier (wait) | pull | allreduce | other | step ms |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        shown = {"compute", "other"} | ({"push", "barrier", "pull"} if r["config"] == "sync" else set()) | \
                ({"allreduce"} if r["config"] == "allreduce" else set())
        parts = [fmt(r[f"{p}_ms"], ".3f") if p in shown else "-" for p in PARTS + ("other",)]
        lines.append(f"| {r['model']} | {r['batch']} | {r['path']} | {layout(r)} | {r['ranks']} "
                     f"| {fmt(r['samples_per_sec'])} | {fmt(r['vs_local'], '.2f', 'x')} "
                     f"| {span(r['vs_local_min'], r['vs_local_max'])} | " + " | ".join(parts) +
                     f" | {fmt(r['step_ms'], '.3f')} |")
    return lines


# ---- the bars --------------------------------------------------------------------------------------------------

def bars(local, scaling):
    checks = []
    for model, batch, bar in LOCAL_BARS:
        text = f"{model} local >= {bar}x PyTorch at batch {batch}"
        row = next((r for r in local if r["model"] == model and r["batch"] == batch), None)
        value = row["ratio"] if row else None
        checks.append({"bar": text, "measured": value, "minimum": bar,
                       "result": "SKIP" if value is None else ("PASS" if value >= bar else "FAIL")})
    batch, bar = SYNC_BAR
    rows = [r for r in scaling if r["config"] == "sync" and r["path"] == "tcp" and r["ranks"] == 2
            and r["batch"] == batch]
    for row in rows:
        checks.append({"bar": f"{row['model']} 1 server + 1 trainer sync over tcp >= {bar}x local at batch {batch}",
                       "measured": row["vs_local"], "minimum": bar,
                       "result": "SKIP" if row["vs_local"] is None else ("PASS" if row["vs_local"] >= bar else "FAIL")})
    if not rows:
        checks.append({"bar": f"1 server + 1 trainer sync over tcp >= {bar}x local at batch {batch}",
                       "measured": None, "minimum": bar, "result": "SKIP"})
    return checks


def sgemm_share(runs):
    """Per round: pstrain's MLP GFLOP/s at batch 256 (local part) over that round's single-core sgemm rate."""
    model, batch, bar = SGEMM_BAR
    peaks = {r["round"]: r for r in runs if r["part"] == "sgemm"}
    shares, rates = [], []
    for r in runs:
        if (r["part"], r["program"], r["model"], r["batch"]) == ("local", "pstrain", model, batch) \
                and r["round"] in peaks:
            rate = r["samples_per_sec"] * MLP_FLOP / 1e9
            rates.append(rate)
            shares.append(rate / peaks[r["round"]]["gflops"])
    peak = median([p["gflops"] for p in peaks.values()])
    providers = ordered(p["provider"] for p in peaks.values())
    value = median(shares)
    low, high = spread(shares)
    return {"bar": f"{model} local at batch {batch} >= {bar:.0%} of the single-core sgemm rate",
            "measured": value, "minimum": bar, "range": [low, high], "mlp_gflops": median(rates), "peak_gflops": peak,
            "peak_providers": providers, "unit": "%", "result": "SKIP" if value is None else ("PASS" if value >= bar else "FAIL")}


# ---- the PNG ---------------------------------------------------------------------------------------------------

def draw_sgemm(axis, share):
    """pstrain's MLP GFLOP/s at batch 256 beside the single-core sgemm rate, with the share."""
    axis.set_visible(True)
    heights = [share["mlp_gflops"], share["peak_gflops"]]
    axis.bar([0, 1], heights, 0.6, color=["C0", "C7"])
    axis.annotate(f"{share['measured']:.1%}", (0, heights[0]), ha="center", va="bottom", fontsize=9)
    axis.axhline(share["minimum"] * share["peak_gflops"], color="C3", linestyle=":",
                 label=f"bar: {share['minimum']:.0%} of the sgemm rate")
    axis.set_xticks([0, 1])
    axis.set_xticklabels(["pstrain mlp, batch 256", f"sgemm 1024^3\n({', '.join(share['peak_providers'])})"])
    axis.set_ylabel("GFLOP/s, 1 thread (median)")
    axis.set_title("mlp local against the single-core sgemm rate")
    axis.margins(y=0.15)
    axis.legend(fontsize=8, loc="lower right")


def draw(out, local, scaling, environment, share):
    try:
        import matplotlib
        matplotlib.use("Agg")  # no display: files only
        import matplotlib.pyplot as plt
    except ImportError:
        print("speed_report.py: no matplotlib (apt-get install python3-matplotlib): no PNG", file=sys.stderr)
        return None
    models = ordered(r["model"] for r in local)
    combos = ordered((r["model"], r["batch"]) for r in scaling)
    columns = max(len(models), len(combos), 1)
    rows = (1 if models else 0) + (2 if combos else 0)
    if rows == 0:
        return None
    figure, axes = plt.subplots(rows, columns, figsize=(max(5.2 * columns, 7.0), 4.2 * rows), squeeze=False)
    for axis in axes.flat:
        axis.set_visible(False)
    row = 0
    if models:
        for column, model in enumerate(models):
            axis = axes[row][column]
            axis.set_visible(True)
            cells = [r for r in local if r["model"] == model]
            xs = range(len(cells))
            width = 0.38
            for offset, key, label in ((-width / 2, "pstrain", "pstrain local"), (width / 2, "pytorch", "PyTorch")):
                heights = [c[key] or 0 for c in cells]
                axis.bar([x + offset for x in xs], heights, width, label=label)
            for x, c in zip(xs, cells):
                if c["ratio"] is not None:
                    top = max(c["pstrain"] or 0, c["pytorch"] or 0)
                    axis.annotate(f"{c['ratio']:.2f}x", (x, top), ha="center", va="bottom", fontsize=9)
            axis.set_xticks(list(xs))
            axis.set_xticklabels([f"batch {c['batch']}" for c in cells])
            axis.set_ylabel("samples/s (median)")
            axis.set_title(f"{model}: pstrain local vs PyTorch, 1 thread")
            axis.margins(y=0.15)
            axis.legend(fontsize=8, loc="lower right")
        row += 1
    if combos:
        for column, (model, batch) in enumerate(combos):
            cells = [r for r in scaling if r["model"] == model and r["batch"] == batch]
            axis = axes[row][column]
            axis.set_visible(True)
            reference = next((c for c in cells if c["config"] == "local"), None)
            for config, colour in (("sync", "C0"), ("allreduce", "C1")):
                for path, style in (("shm", "-"), ("tcp", "--")):
                    curve = sorted((c for c in cells if c["config"] == config and c["path"] == path),
                                   key=lambda c: c["ranks"])
                    if reference:
                        curve = [reference] + curve
                    if len(curve) > (1 if reference else 0):
                        axis.plot([c["ranks"] for c in curve], [c["samples_per_sec"] for c in curve], style,
                                  color=colour, marker="o" if path == "shm" else "s",
                                  label=f"{CONFIG_LABEL[config]}, {path}")
            axis.set_xlabel("ranks (MPI processes; 1 = local)")
            axis.set_ylabel("samples/s, all trainers (median)")
            axis.set_title(f"{model}, batch {batch}: scaling")
            axis.set_xticks(sorted({c["ranks"] for c in cells}))
            axis.set_ylim(bottom=0)
            axis.legend(fontsize=8)

            axis = axes[row + 1][column]
            axis.set_visible(True)
            bottoms = [0.0] * len(cells)
            for part in PARTS + ("other",):
                heights = [c[f"{part}_ms"] or 0.0 for c in cells]
                if any(heights):
                    axis.bar(range(len(cells)), heights, bottom=bottoms, label=part if part != "barrier" else
                             "barrier (wait)")
                    bottoms = [b + h for b, h in zip(bottoms, heights)]
            labels = ["local" if c["config"] == "local" else
                      f"{'PS' if c['config'] == 'sync' else 'AR'} {c['path']}\n{c['ranks']} ranks" for c in cells]
            axis.set_xticks(range(len(cells)))
            axis.set_xticklabels(labels, fontsize=7, rotation=60)
            axis.set_ylabel("ms per step (median)")
            axis.set_title(f"{model}, batch {batch}: per-step breakdown")
            axis.legend(fontsize=7)
        if share["measured"] is not None and len(combos) < columns:  # the free place beside the scaling curves
            draw_sgemm(axes[row][len(combos)], share)
    stamp = environment.get("timestamp_utc", "")
    figure.suptitle(f"pstrain speed report {stamp}\n{environment.get('cpu', 'cpu')}, {environment.get('nproc', '?')} "
                    f"cores; medians of {environment.get('rounds', '?')} round(s)", fontsize=10)
    figure.tight_layout()
    path = os.path.join(out, "speed.png")
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


# ---- main ------------------------------------------------------------------------------------------------------

def timed_passes(environment):
    passes = int(environment.get("passes", "3"))
    return "pass 0 (one pass)" if passes == 1 else \
        "pass 1 (pass 0 warms up)" if passes == 2 else f"passes 1..{passes - 1} (pass 0 warms up)"


def read_environment(out):
    environment = {}
    path = os.path.join(out, "environment.txt")
    if os.path.isfile(path):
        for line in open(path):  # NAME=VALUE lines; the first of a NAME wins
            key, equals, value = line.rstrip("\n").partition("=")
            if equals:
                environment.setdefault(key, value)
    return environment


def built_from(out):
    """The commits the pstrain runs were built from (their provenance.json), in first-seen order."""
    commits = []
    for path in sorted(glob.glob(os.path.join(out, "raw", "*.provenance.json"))):
        try:
            commits.append(json.load(open(path)).get("git_commit", "?")[:12])
        except (OSError, ValueError, AttributeError):
            continue
    return ordered(commits) or ["?"]


def main(argv):
    if len(argv) != 2:
        fail("usage: speed_report.py RESULTS_FOLDER")
    out = argv[1]
    runs = load(out)
    environment = read_environment(out)
    local, scaling = local_rows(runs), scaling_rows(runs)
    checks = bars(local, scaling)
    share = sgemm_share(runs)
    checks.insert(len(LOCAL_BARS), share)

    env = environment.get
    header = (f"{env('cpu', '')}, {env('nproc', '?')} cores; {env('pstrain_version', 'pstrain')} built from "
              f"{', '.join(built_from(out))} (benchmark scripts at {env('git_head', '?')[:12]}, "
              f"{env('git_dirty_files', '?')} dirty files); load average {env('loadavg_start', '?')} at the start, "
              f"{env('loadavg_end', '?')} at the end. {env('threads', '1')} thread(s) per process; samples/s = the "
              f"mean over {timed_passes(environment)} of each run, median over {env('rounds', '?')} round(s); "
              f"ratios per round, then the median. Samples per pass: {env('limits', '?')} "
              f"(test set: {env('test_limit', '?')}).")
    lines = [f"# pstrain speed report {env('timestamp_utc', '')}", "", header, ""]
    if local:
        lines += ["## pstrain local vs the plain PyTorch loop (one thread each)", ""] + local_table(local) + [""]
    if scaling:
        lines += ["## pstrain sync PS and all-reduce by ranks (ranks = MPI processes; 1 = local)", "",
                  "shm: Open MPI defaults (shared memory, osc/sm); tcp: `--mca btl tcp,self --mca osc pt2pt`. "
                  "samples/s of all trainers; per-step times in ms, measured on the trainers; `other` = step time "
                  "(pass time / steps) minus the parts shown.", ""] + scaling_table(scaling) + [""]
    if share["measured"] is not None:
        lines += [f"MLP at batch 256: {share['mlp_gflops']:.1f} GFLOP/s ({MLP_FLOP / 1e6:.3f} MFLOP per sample), "
                  f"{share['measured']:.1%} of the single-core sgemm rate {share['peak_gflops']:.1f} GFLOP/s (1024^3, "
                  f"best of {', '.join(share['peak_providers'])}; per round, then the median; range "
                  f"{span(*share['range'])}).", ""]
    lines += ["## The issue's bars", ""]
    for c in checks:
        measured = fmt(c["measured"], ".1%") if c.get("unit") == "%" else fmt(c["measured"], ".2f", "x")
        lines.append(f"{c['result']}: {c['bar']}: measured {measured}")
    png = draw(out, local, scaling, environment, share)
    lines += ["", f"Plot: {png}" if png else "Plot: none (no matplotlib)"]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"environment": environment, "local": local, "scaling": scaling, "bars": checks}, f, indent=1)
    keys = ["part", "round", "model", "batch", "program", "config", "path", "ranks", "name", "samples_per_sec",
            "trainers", "pservers", "test_accuracy", "step_ms"] + [f"{p}_ms" for p in PARTS] + ["other_ms"]
    with open(os.path.join(out, "rounds.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
