#!/usr/bin/env python3
"""Turns one hyperfine `--export-json` file into ratios against a baseline of the same run.

Usage: ratios.py RESULTS.tsv RUN.json N "OURS|BASELINE|TARGET" ...

OURS and BASELINE are hyperfine command names (`-n`); TARGET is free text (e.g. "<= 1.0").
Prints one line per pair and appends a row to RESULTS.tsv:
  ours  n  ours_mean_s  ours_stddev_s  baseline  baseline_mean_s  ratio  target
"""

import json
import sys


def main():
    tsv, run, n = sys.argv[1], sys.argv[2], sys.argv[3]
    results = {r["command"]: r for r in json.load(open(run))["results"]}
    with open(tsv, "a") as out:
        for spec in sys.argv[4:]:
            ours, base, target = spec.split("|")
            o, b = results[ours], results[base]
            ratio = o["mean"] / b["mean"]
            print(f"  N={n:>6}  {ours:<34} {o['mean'] * 1e3:9.2f} ms ± {o['stddev'] or 0:.4f}"
                  f"  vs {base:<30} {b['mean'] * 1e3:9.2f} ms  ratio {ratio:6.2f}  (target {target})")
            out.write(f"{ours}\t{n}\t{o['mean']:.6f}\t{o['stddev'] or 0:.6f}\t{base}\t"
                      f"{b['mean']:.6f}\t{ratio:.3f}\t{target}\n")


if __name__ == "__main__":
    main()
