"""keyed_bar.sh's growing part: the test AUC and loss per pass of keyed and hashed tables, and the keyed run's
rows held (against its cap), admitted and evicted per pass, into one PNG.

usage: keyed_growing_plot.py KEYED_RUN HASHED_RUN OUT.png CAP_PER_TABLE
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def records(run):
    return [json.loads(line) for line in open(run + "/metrics.jsonl") if line.strip() and '"pass"' in line]


def main():
    keyed, hashed = records(sys.argv[1]), records(sys.argv[2])
    out, cap = sys.argv[3], int(sys.argv[4])
    passes = [m["pass"] for m in keyed]
    figure, (auc, loss, rows) = plt.subplots(1, 3, figsize=(16, 4.5))
    auc.plot(passes, [m["test_auc"] for m in keyed], "o-", label="keyed (--table-keys exact)")
    auc.plot([m["pass"] for m in hashed], [m["test_auc"] for m in hashed], "s-", label="hashed")
    auc.set(title="test AUC per pass", xlabel="pass")
    auc.legend()
    for runs, name in ((keyed, "keyed"), (hashed, "hashed")):
        loss.plot([m["pass"] for m in runs], [m["test_loss"] for m in runs], "-", label=name + " test")
        loss.plot([m["pass"] for m in runs], [m["train_loss"] for m in runs], "--", label=name + " train")
    loss.set(title="loss per pass (20 passes over the same lines)", xlabel="pass")
    loss.legend()
    held = [m["keyed_rows_held"] for m in keyed]
    admitted = [m["keyed_rows_admitted"] for m in keyed]
    evicted = [m["keyed_rows_evicted"] for m in keyed]
    per_pass = lambda totals: [b - a for a, b in zip([0] + totals[:-1], totals)]
    rows.plot(passes, held, "o-", label="rows held")
    rows.axhline(cap * 26, color="gray", linestyle=":", label="cap (26 tables x %d)" % cap)
    rows.plot(passes, per_pass(admitted), "^-", label="admitted in the pass")
    rows.plot(passes, per_pass(evicted), "v-", label="evicted in the pass")
    rows.set(title="keyed rows per pass", xlabel="pass")
    rows.legend()
    figure.tight_layout()
    figure.savefig(out, dpi=90)
    print("drew", out)


if __name__ == "__main__":
    main()
