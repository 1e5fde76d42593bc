#!/usr/bin/python3
"""The scaling table (Markdown, stdout) and figure (PNG) from scaling.sh's CSV: per platform, mode and rank
count the best server count (highest samples/s), its samples/s, step breakdown and efficiency against one
trainer alone (batch / the profile's compute per step: a local step without any exchange).
    /usr/bin/python3 benchmarks/scale/plot_scaling.py benchmarks/results/scale/scaling.csv scaling.png [TITLE]
TITLE names the job in the figure (default "MLP, batch 64 per trainer")."""
import csv
import os
import sys
import tempfile
from collections import defaultdict

os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp())
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def best_rows(rows):
    best = {}
    for row in rows:
        key = (row["platform"], row["mode"], int(row["ranks"]))
        if key not in best or float(row["samples_per_s"]) > float(best[key]["samples_per_s"]):
            best[key] = row
    return best


def efficiency(row):
    alone = float(row["batch"]) / (float(row["compute_ms"]) / 1000)
    return float(row["samples_per_s"]) / (int(row["trainers"]) * alone)


def rate_text(samples_per_s):
    return f"{samples_per_s / 1000:.0f}k" if samples_per_s >= 1e5 else f"{samples_per_s:.0f}"


def table(best, rows):
    tried = defaultdict(list)
    for row in sorted(rows, key=lambda r: int(r["servers"])):
        tried[(row["platform"], row["mode"], int(row["ranks"]))].append(
            f'{row["servers"]}:{rate_text(float(row["samples_per_s"]))}')
    print("| platform | mode | ranks | best servers | trainers | samples/s | efficiency | step ms | compute / push / "
          "sync / pull / gate / all-reduce ms | max server MB in per step | server MiB | trainer MiB | "
          "servers tried (samples/s) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|")
    for key in sorted(best, key=lambda k: (k[0], k[1], k[2])):
        r = best[key]
        parts = " / ".join(f'{float(r[f]):.2f}' for f in
                           ("compute_ms", "push_ms", "sync_ms", "pull_ms", "gate_ms", "allreduce_ms"))
        print(f'| {key[0]} | {key[1]} | {key[2]} | {r["servers"]} | {r["trainers"]} | {float(r["samples_per_s"]):.0f} '
              f'| {efficiency(r):.2f} | {float(r["step_ms"]):.2f} | {parts} '
              f'| {float(r["server_bytes_in_per_step"]) / 1e6:.1f} | {float(r["server_memory_bytes"]) / 2**20:.0f} '
              f'| {float(r["trainer_memory_bytes"]) / 2**20:.0f} | {" ".join(tried[key])} |')


def figure(best, path, title):
    platforms = sorted({k[0] for k in best})
    fig, axes = plt.subplots(len(platforms), 2, figsize=(11, 4 * len(platforms)), squeeze=False)
    for row_axes, platform in zip(axes, platforms):
        for mode, color in (("sync", "C0"), ("sync-nodeagg", "C4"), ("async", "C1"), ("ssp", "C2"), ("allreduce", "C3")):
            keys = sorted(k for k in best if k[0] == platform and k[1] == mode)
            if not keys:
                continue
            ranks = [k[2] for k in keys]
            row_axes[0].plot(ranks, [float(best[k]["samples_per_s"]) for k in keys], marker="o", color=color, label=mode)
            row_axes[1].plot(ranks, [efficiency(best[k]) for k in keys], marker="o", color=color, label=mode)
        row_axes[0].set(xscale="log", yscale="log", xlabel="ranks", ylabel="samples/s (best server count)",
                        title=f"{platform}: {title}")
        row_axes[1].set(xscale="log", xlabel="ranks", ylabel="efficiency vs one trainer alone", ylim=(0, 1.05),
                        title=f"{platform}: weak-scaling efficiency")
        for ax in row_axes:
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
    fig.tight_layout()
    fig.savefig(path + ".tmp.png", dpi=90)
    os.replace(path + ".tmp.png", path)


def main():
    with open(sys.argv[1]) as handle:
        rows = [r for r in csv.DictReader(handle) if r["samples_per_s"]]
    best = best_rows(rows)
    table(best, rows)
    figure(best, sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "MLP, batch 64 per trainer")


if __name__ == "__main__":
    main()
