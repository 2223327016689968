#!/usr/bin/env python3
"""Paired wall-time runs: the commands in turn, round after round, so that a comparison holds
while the machine's speed drifts (a shared machine's does, by tens of percent within a minute).

Usage: paired.py [--runs N] [--warmup N] [--prepare NAME=SHELL]... [--tsv FILE] [--n N]
                 BASELINE=COMMAND NAME=COMMAND...

Each COMMAND is split as a shell splits words and run without a shell, its output thrown away;
`--prepare NAME=SHELL` runs SHELL (with a shell) before each run of NAME, untimed. Prints, per
command, the median wall time and, against BASELINE, the median of the per-round ratios with
their min and max, and the median of the per-round differences (an overhead); with `--tsv`, appends `name  n  median_s  baseline  baseline_median_s  ratio
ratio_min  ratio_max` rows.
"""

import argparse
import shlex
import statistics
import subprocess
import sys
import time


def timed(argv):
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"paired.py: {shlex.join(argv)} exited with {done.returncode}")
    return took


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--prepare", action="append", default=[])
    p.add_argument("--tsv")
    p.add_argument("--n", default="-")
    p.add_argument("commands", nargs="+")
    a = p.parse_args()
    named = [c.split("=", 1) for c in a.commands]
    prepare = dict(x.split("=", 1) for x in a.prepare)
    times = {name: [] for name, _ in named}
    for round_ in range(a.warmup + a.runs):
        for name, command in named:
            if name in prepare:
                subprocess.run(prepare[name], shell=True, check=True)
            took = timed(shlex.split(command))
            if round_ >= a.warmup:
                times[name].append(took)
    base = named[0][0]
    base_median = statistics.median(times[base])
    print(f"  {base:<34} {base_median * 1e3:8.2f} ms  (baseline, {a.runs} paired rounds)")
    rows = []
    for name, _ in named[1:]:
        ratios = [t / b for t, b in zip(times[name], times[base])]
        median = statistics.median(times[name])
        r = statistics.median(ratios)
        extra = statistics.median(t - b for t, b in zip(times[name], times[base]))
        print(f"  {name:<34} {median * 1e3:8.2f} ms  ratio {r:5.2f}"
              f"  (per round: min {min(ratios):.2f}, max {max(ratios):.2f})"
              f"  {extra * 1e3:+.2f} ms")
        rows.append(f"{name}\t{a.n}\t{median:.6f}\t{base}\t{base_median:.6f}\t{r:.3f}\t"
                    f"{min(ratios):.3f}\t{max(ratios):.3f}\n")
    if a.tsv:
        with open(a.tsv, "a") as out:
            out.writelines(rows)


if __name__ == "__main__":
    main()
