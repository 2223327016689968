#!/usr/bin/env python3
"""Plots write and show cost against the number of existing checkpoints, for both stores, next
to their git baselines: wall time from the results.tsv of `benches/compare.sh --out DIR`, and
instruction counts from the instructions.tsv of `benches/instructions.sh --out DIR`.

Usage: benches/plot.py RESULTS.tsv INSTRUCTIONS.tsv OUT.png
(installs matplotlib with pip when missing)
"""

import subprocess
import sys
from collections import defaultdict

try:
    import matplotlib
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "matplotlib"], check=True)
    import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# (command name in results.tsv, legend, line style: solid for ours, dashed for git baselines)
WRITE = [
    ("refs-write", "write, git-refs", "-"),
    ("branch-write", "write, git-branch", "-"),
    ("notes-add", "git notes add -F", "--"),
    ("plumbing-write", "git plumbing (5 processes)", "--"),
]
WRITE_IR = [
    ("refs-write-loose", "write, git-refs, loose", "-"),
    ("refs-write-packed", "write, git-refs, packed", "-"),
    ("branch-write-loose", "write, git-branch, loose", "-"),
    ("branch-write-packed", "write, git-branch, packed", "-"),
    ("notes-add", "git notes add -F", "--"),
]
SHOW = [
    ("refs-show-loose", "show --json, git-refs, loose", "-"),
    ("refs-show-packed", "show --json, git-refs, packed", "-"),
    ("branch-show-packed", "show --json, git-branch", "-"),
    ("refs-cat-file-loose", "git cat-file -p ref:metadata.json, loose", "--"),
    ("refs-cat-file-packed", "git cat-file -p ref:metadata.json, packed", "--"),
]


def load(tsv):
    """name -> {n: value}; a command appears as "ours" or "baseline" in several rows."""
    series = defaultdict(dict)
    for line in open(tsv):
        ours, n, ours_value, _, base, base_value, _, _ = line.rstrip("\n").split("\t")
        series[ours][int(n)] = float(ours_value)
        series[base][int(n)] = float(base_value)
    return series


def panel(ax, series, wanted, title, scale, unit):
    for name, label, style in wanted:
        points = sorted(series.get(name, {}).items())
        if points:
            ax.plot([p[0] for p in points], [p[1] * scale for p in points], style, marker="o",
                    label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("existing checkpoints in the store")
    ax.set_ylabel(unit)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def main():
    times, instructions, out = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    panel(axes[0][0], times, WRITE, "write of a 100 KB transcript: wall time (loose refs)", 1e3,
          "ms per process (mean, shared machine)")
    panel(axes[0][1], times, SHOW, "read one checkpoint: wall time", 1e3,
          "ms per process (mean, shared machine)")
    panel(axes[1][0], instructions, WRITE_IR, "write of a 100 KB transcript: instructions", 1e-6,
          "million instructions (callgrind, all processes)")
    panel(axes[1][1], instructions, SHOW, "read one checkpoint: instructions", 1e-6,
          "million instructions (callgrind, all processes)")
    fig.tight_layout()
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    main()
