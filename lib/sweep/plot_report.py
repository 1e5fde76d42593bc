#!/usr/bin/python3
"""Draws SWEEP_DIR/report.png for `pstrain-sweep report`: every set's test accuracy and test loss per pass (from
runs/set-NNNN/metrics.jsonl), the best set of report.json drawn thick and named in the legend.

Usage: plot_report.py SWEEP_DIR. Exit 3 when matplotlib is missing (Debian: python3-matplotlib), 2 on bad input.
"""
import json
import os
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.stderr.write("report.png needs matplotlib (Debian: apt-get install python3-matplotlib)\n")
    sys.exit(3)


def curves(sweep_dir, name):
    """Per-pass test accuracy and loss of one set, the last line of each pass winning (a resumed pass)."""
    path = os.path.join(sweep_dir, "runs", name, "metrics.jsonl")
    by_pass = {}
    if os.path.exists(path):
        for line in open(path):
            try:
                record = json.loads(line)
                by_pass[int(record["pass"])] = (float(record["test_accuracy"]), float(record["test_loss"]))
            except (ValueError, KeyError):
                continue
    passes = sorted(by_pass)
    return passes, [by_pass[p][0] for p in passes], [by_pass[p][1] for p in passes]


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    sweep_dir = sys.argv[1]
    report = json.load(open(os.path.join(sweep_dir, "report.json")))
    best = report.get("best_set")
    figure, (accuracy_axis, loss_axis) = plt.subplots(1, 2, figsize=(12, 4.5))
    drawn = 0
    for entry in sorted(report["sets"], key=lambda e: e["set"] == best):  # the best one last, on top
        passes, accuracy, loss = curves(sweep_dir, entry["name"])
        if not passes:
            continue
        is_best = entry["set"] == best
        style = dict(linewidth=3 if is_best else 1, alpha=1.0 if is_best else 0.45, marker="o" if is_best else None,
                     color="crimson" if is_best else None)
        label = "best: " + entry["name"] if is_best else entry["name"]
        accuracy_axis.plot(passes, accuracy, label=label, **style)
        loss_axis.plot(passes, loss, label=label, **style)
        drawn += 1
    accuracy_axis.set(title="test accuracy per pass", xlabel="pass", ylabel="accuracy")
    loss_axis.set(title="test loss per pass", xlabel="pass", ylabel="loss")
    for axis in (accuracy_axis, loss_axis):
        axis.grid(alpha=0.3)
        axis.xaxis.get_major_locator().set_params(integer=True)
    handles, labels = accuracy_axis.get_legend_handles_labels()
    if handles:
        figure.legend(handles[::-1][:12], labels[::-1][:12], loc="center right", fontsize=8)
    figure.suptitle("%s: %d set(s), ranked by %s" % (os.path.basename(os.path.abspath(sweep_dir)), drawn,
                                                   report.get("ranked_by", "best_test_accuracy")))
    figure.tight_layout(rect=(0, 0, 0.86, 0.95))
    output = os.path.join(sweep_dir, "report.png")
    figure.savefig(output + ".tmp.png", dpi=100)
    os.replace(output + ".tmp.png", output)
    print("drew %d set(s) into %s" % (drawn, output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
