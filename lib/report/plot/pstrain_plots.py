"""Plots of pstrain's metrics.jsonl, shared by `pstrain-plot` (one run) and `pstrain-sweep report` (a sweep).

A run's figure (draw_run) has one panel per thing the run recorded: loss per pass; accuracy per pass, or
perplexity where the run logs `*_perplexity` (language models), the test AUC where it logs `test_auc` (click
models); the test figures against the global step where the run evaluated every --eval-every-steps steps
(evaluation records, "kind": "eval"); samples/s; the per-step time breakdown; the
staleness histogram (async, ssp); the chunks per trainer (dynamic dispatch); and, for an elastic run (the driver's
OUTPUT/elastic.jsonl), the ranks training over time beside the samples/s of each pass, with the events marked.
A sweep's figure (draw_sweep) has
every set's test accuracy and test loss per pass, the best set drawn thick.

Input problems raise PlotError with one message naming the file (and line); the caller turns it into an exit code.
"""
import json
import math
import os

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

# The per-step breakdown, in the order the trainer loop spends it.
STEP_PARTS = ("compute", "push", "barrier", "pull", "allreduce", "update", "copy", "ssp_gate")
SPLITS = ("train", "valid", "test")


class PlotError(Exception):
    """Bad input: the message names the file and what is wrong with it."""


def _json_lines(path):
    """(line number, value) of each non-blank line of a JSON-lines file; PlotError names a line that is not JSON."""
    with open(path, encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except ValueError as error:
                raise PlotError("%s:%d: not a JSON object (%s)" % (path, number, error)) from None


def is_evaluation(record):
    """An evaluation record (--eval-every-steps): {"kind": "eval", "step": G, ...}, with no "pass" key."""
    return isinstance(record, dict) and record.get("kind") == "eval" and isinstance(record.get("step"), int)


def read_evaluations(path):
    """The evaluation records of a metrics.jsonl, in step order; the last line of a step wins. Empty for a run
    without --eval-every-steps (read_metrics has checked the file)."""
    by_step = {}
    for _, record in _json_lines(path):
        if is_evaluation(record):
            by_step[record["step"]] = record
    return [by_step[s] for s in sorted(by_step)]


def read_metrics(path):
    """The per-pass records of a metrics.jsonl, in pass order; the last line of a pass wins (a resumed pass).
    Evaluation records between them are read_evaluations'."""
    if not os.path.isfile(path):
        raise PlotError("%s not found (is this a pstrain output folder? the file appears after the first pass)" % path)
    by_pass = {}
    for number, record in _json_lines(path):
        if is_evaluation(record):
            continue
        if not isinstance(record, dict) or not isinstance(record.get("pass"), int):
            raise PlotError("%s:%d: a metrics line needs an integer \"pass\" field" % (path, number))
        by_pass[record["pass"]] = record
    if not by_pass:
        raise PlotError("%s holds no passes yet" % path)
    return [by_pass[p] for p in sorted(by_pass)]


def _series(records, key):
    """(passes, values) of the records that carry a finite number under key."""
    points = [(r["pass"], r[key]) for r in records
              if isinstance(r.get(key), (int, float)) and math.isfinite(r[key])]
    return [p for p, _ in points], [v for _, v in points]


def _per_pass_lines(axis, records, metric):
    """train/valid/test curves of one metric; returns the metric's name, or None when no split has it."""
    drawn = None
    for split in SPLITS:
        passes, values = _series(records, "%s_%s" % (split, metric))
        if passes:
            axis.plot(passes, values, marker="o", markersize=3, label=split)
            drawn = metric
    axis.set(title="%s per pass" % metric, xlabel="pass")
    axis.legend(fontsize=8)
    return drawn


def _panel_loss(axis, records):
    return _per_pass_lines(axis, records, "loss")


def _panel_quality(axis, records):
    """Perplexity where the run logs it (language models), the test AUC for click models, accuracy otherwise."""
    if _series(records, "test_auc")[0]:
        return _per_pass_lines(axis, records, "auc")
    if any(_series(records, "%s_perplexity" % split)[0] for split in SPLITS):
        axis.set_yscale("log")
        return _per_pass_lines(axis, records, "perplexity")
    return _per_pass_lines(axis, records, "accuracy")


def _panel_test_per_step(axis, records, evaluations):
    """The test figures of the evaluation records against the global step: AUC (click models), perplexity (language
    models) or accuracy, and the test loss on the right; a dotted line where a pass ended."""
    del records  # drawn from the evaluation records alone
    for key in ("test_auc", "test_perplexity", "test_accuracy"):
        points = [(r["step"], r[key]) for r in evaluations
                  if isinstance(r.get(key), (int, float)) and math.isfinite(r[key])]
        if points:
            break
    if not points:
        return None
    axis.plot([p for p, _ in points], [v for _, v in points], marker="o", markersize=3, color="tab:blue",
              label=key)
    axis.set(title="test per step", xlabel="global step", ylabel=key)
    loss = [(r["step"], r["test_loss"]) for r in evaluations
            if isinstance(r.get("test_loss"), (int, float)) and math.isfinite(r["test_loss"])]
    if loss:
        right = axis.twinx()
        right.plot([p for p, _ in loss], [v for _, v in loss], color="tab:red", linewidth=1, label="test_loss")
        right.set_ylabel("test_loss")
    for record in evaluations:
        if record.get("step_in_pass") is not None and record.get("step_in_pass") == record.get("steps_in_pass"):
            axis.axvline(record["step"], color="gray", linestyle=":", linewidth=1)
    axis.legend(fontsize=8, loc="lower right")
    return "test per step"


def _panel_speed(axis, records):
    passes, values = _series(records, "samples_per_sec")
    if not passes:
        return None
    axis.bar(passes, values, color="tab:green")
    axis.set(title="samples/s per pass (all trainers)", xlabel="pass")
    return "samples/s"


def _panel_step_breakdown(axis, records):
    passes = [r["pass"] for r in records]
    bottom = [0.0] * len(records)
    drawn = None
    for part in STEP_PARTS:
        values = [r.get("%s_s_per_step" % part) or 0.0 for r in records]
        if not any(values):
            continue
        milliseconds = [1000.0 * v for v in values]
        axis.bar(passes, milliseconds, bottom=bottom, label=part)
        bottom = [b + m for b, m in zip(bottom, milliseconds)]
        drawn = "step breakdown"
    axis.set(title="time per step", xlabel="pass", ylabel="ms")
    if drawn:
        axis.legend(fontsize=8)
    return drawn


def _summed_lists(records, key):
    """Element-wise sum over the passes of a list-valued field (histograms, chunk counts)."""
    total = []
    for record in records:
        values = record.get(key)
        if not isinstance(values, list):
            continue
        total += [0] * max(0, len(values) - len(total))
        for index, value in enumerate(values):
            if isinstance(value, (int, float)):
                total[index] += value
    return total


def _panel_staleness(axis, records):
    histogram = _summed_lists(records, "staleness_histogram")
    if not any(histogram):
        return None
    axis.bar(range(len(histogram)), histogram, color="tab:purple")
    axis.set(title="staleness of applied updates (all passes)", xlabel="updates behind", ylabel="updates")
    return "staleness"


def _panel_chunks(axis, records):
    chunks = _summed_lists(records, "chunks_per_trainer")
    if not any(chunks):
        return None
    axis.bar(range(len(chunks)), chunks, color="tab:orange")
    axis.set(title="chunks per trainer (all passes)", xlabel="trainer", ylabel="chunks")
    return "chunks per trainer"


# Each panel draws on an axis and returns the name of what it drew, or None (nothing in this run: left out).
RUN_PANELS = (_panel_loss, _panel_quality, _panel_speed, _panel_step_breakdown, _panel_staleness, _panel_chunks)


# Events after which the job that was training stops (a relaunch or the end follows); the ranks drop to 0 until
# the next job's first step.
JOB_ENDING_EVENTS = ("job_failed", "slots_changed", "hosts_added", "hosts_removed", "host_back", "driver_signalled",
                     "driver_finished", "driver_gave_up")
FAILURE_EVENTS = ("job_failed", "driver_gave_up")
# Marked with a line on the time axis: what changed the job (the finish is the end of the axis).
MARKED_EVENTS = ("job_failed", "slots_changed", "hosts_added", "hosts_removed", "host_back", "driver_signalled",
                 "driver_gave_up")


def read_elastic_events(path):
    """The records of an elastic driver's event log (OUTPUT/elastic.jsonl) in time order; None when the run has none
    (not an elastic run)."""
    if not os.path.isfile(path):
        return None
    events = []
    for number, record in _json_lines(path):
        if not isinstance(record, dict) or not isinstance(record.get("unix_time"), (int, float)) or \
                not isinstance(record.get("event"), str):
            raise PlotError("%s:%d: an elastic event needs a numeric \"unix_time\" and an \"event\"" %
                            (path, number))
        events.append(record)
    if not events:
        raise PlotError("%s holds no events" % path)
    return sorted(events, key=lambda e: e["unix_time"])


def ranks_over_time(events):
    """[(unix_time, ranks training from then on)]: a launch's ranks from its first training step (the launch record's
    time plus its seconds_to_next_step) until the next event that ends that job; 0 in between."""
    steps = [(events[0]["unix_time"], 0)]
    for index, event in enumerate(events):
        if event["event"] != "launch" or not isinstance(event.get("ranks"), int):
            continue
        to_step = event.get("seconds_to_next_step")
        if not isinstance(to_step, (int, float)):
            continue  # never trained (stopped or failed before its first step)
        start = event["unix_time"] + to_step
        end = next((e["unix_time"] for e in events[index + 1:]
                    if e["event"] in JOB_ENDING_EVENTS and e["unix_time"] >= start), None)
        steps.append((start, event["ranks"]))
        if end is not None:
            steps.append((end, 0))
    return sorted(steps)


def _pass_spans(records, folder):
    """(start, end, samples/s) of each pass, in unix time: it ended when its pass-NNNNN/done was written and
    took pass_seconds (after a resume: the part the resumed job trained)."""
    spans = []
    for record in records:
        done = os.path.join(folder, "pass-%05d" % record["pass"], "done")
        speed, seconds = record.get("samples_per_sec"), record.get("pass_seconds")
        if os.path.isfile(done) and isinstance(speed, (int, float)) and isinstance(seconds, (int, float)):
            end = os.path.getmtime(done)
            spans.append((end - seconds, end, speed))
    return spans


def draw_ranks_over_time(axis, records, events, folder):
    """The elastic panel: ranks training over time (left axis, a step line), the samples/s of each pass over the
    time it trained (right axis), and a line at each event that changed the job (red: failures)."""
    origin = events[0]["unix_time"]
    minutes = lambda t: (t - origin) / 60.0  # noqa: E731
    steps = ranks_over_time(events)
    spans = _pass_spans(records, folder)
    last = max([events[-1]["unix_time"]] + [end for _, end, _ in spans])
    times = [minutes(t) for t, _ in steps] + [minutes(last)]
    ranks = [r for _, r in steps] + [steps[-1][1]]
    axis.step(times, ranks, where="post", color="tab:blue", linewidth=2, label="ranks training")
    axis.set(title="elastic run: ranks over time, samples/s per pass", xlabel="minutes since the driver started",
             ylabel="ranks")
    axis.set_ylim(0, max(ranks + [1]) + 1)
    axis.yaxis.get_major_locator().set_params(integer=True)
    for event in events:
        if event["event"] in MARKED_EVENTS:
            failed = event["event"] in FAILURE_EVENTS
            axis.axvline(minutes(event["unix_time"]), color="tab:red" if failed else "0.6", linestyle="--",
                         linewidth=1)
            axis.annotate(event["event"], (minutes(event["unix_time"]), axis.get_ylim()[1]), rotation=90,
                          fontsize=7, va="top", ha="right", color="tab:red" if failed else "0.3")
    handles, labels = axis.get_legend_handles_labels()
    if spans:
        speed_axis = axis.twinx()
        for index, (start, end, speed) in enumerate(spans):
            speed_axis.plot([minutes(start), minutes(end)], [speed, speed], color="tab:green", linewidth=3,
                            solid_capstyle="butt", label="samples/s of a pass" if index == 0 else None)
        speed_axis.set_ylabel("samples/s")
        speed_axis.set_ylim(0, max(speed for _, _, speed in spans) * 1.15)
        more_handles, more_labels = speed_axis.get_legend_handles_labels()
        handles, labels = handles + more_handles, labels + more_labels
    axis.legend(handles, labels, fontsize=8, loc="lower left")
    return "ranks over time"


def _save(figure, output):
    """Written under a temporary name and renamed: a reader never sees half a PNG."""
    temporary = output + ".tmp.png"
    try:
        figure.savefig(temporary, dpi=100)
        os.replace(temporary, output)
    except OSError as error:
        raise OSError("cannot write %s: %s" % (output, error.strerror or error)) from None
    finally:
        plt.close(figure)


def draw_run(metrics_path, output, title=None):
    """Draws the panels of one run into output (PNG); returns the names of the panels drawn."""
    records = read_metrics(metrics_path)
    evaluations = read_evaluations(metrics_path)
    folder = os.path.dirname(os.path.abspath(metrics_path))
    events = read_elastic_events(os.path.join(folder, "elastic.jsonl"))
    panels = list(RUN_PANELS)
    if evaluations:  # after the per-pass quality panel
        panels.insert(2, lambda axis, records: _panel_test_per_step(axis, records, evaluations))
    columns = 3
    rows = math.ceil(len(panels) / columns)
    # An elastic run gets one more row, as wide as the figure: a time axis.
    figure = plt.figure(figsize=(6 * columns, 4 * (rows + (events is not None))))
    grid = figure.add_gridspec(rows + (events is not None), columns)
    free = [figure.add_subplot(grid[r, c]) for r in range(rows) for c in range(columns)]
    drawn = []
    for panel in panels:
        axis = free[0]
        name = panel(axis, records)
        if name:
            drawn.append(name)
            axis.grid(alpha=0.3)
            axis.xaxis.get_major_locator().set_params(integer=True)
            free.pop(0)
        else:
            axis.clear()
            axis.set_yscale("linear")
    for axis in free:
        axis.set_visible(False)
    if events is not None:
        drawn.append(draw_ranks_over_time(figure.add_subplot(grid[rows, :]), records, events, folder))
    last = records[-1]
    figure.suptitle(title or "%s: %d pass(es), %s, %s trainer(s), %s server(s)" % (
        os.path.basename(os.path.dirname(os.path.abspath(metrics_path))), len(records), last.get("mode", "?"),
        last.get("trainers", "?"), last.get("pservers", "?")))
    figure.tight_layout(rect=(0, 0, 1, 0.95))
    _save(figure, output)
    return drawn


def _sweep_curves(sweep_dir, name):
    """Per-pass test accuracy and loss of one set; a set without metrics (not run, failed) has none."""
    try:
        records = read_metrics(os.path.join(sweep_dir, "runs", name, "metrics.jsonl"))
    except PlotError:
        return [], [], []
    passes = [r["pass"] for r in records if "test_accuracy" in r and "test_loss" in r]
    chosen = [r for r in records if r["pass"] in passes]
    return passes, [r["test_accuracy"] for r in chosen], [r["test_loss"] for r in chosen]


def draw_sweep(sweep_dir):
    """Draws SWEEP_DIR/report.png from report.json and every set's metrics.jsonl; returns the sets drawn."""
    report_path = os.path.join(sweep_dir, "report.json")
    try:
        with open(report_path, encoding="utf-8") as source:
            report = json.load(source)
        sets = report["sets"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise PlotError("%s: not a pstrain-sweep report (%s); run `pstrain-sweep report` first" %
                        (report_path, error)) from None
    best = report.get("best_set")
    figure, (accuracy_axis, loss_axis) = plt.subplots(1, 2, figsize=(12, 4.5))
    drawn = 0
    for entry in sorted(sets, key=lambda e: e["set"] == best):  # the best one last, on top
        passes, accuracy, loss = _sweep_curves(sweep_dir, entry["name"])
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
    _save(figure, os.path.join(sweep_dir, "report.png"))
    return drawn
