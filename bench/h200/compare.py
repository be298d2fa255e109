#!/usr/bin/env python3
"""Compares moegen-bench-h200 runs of several sets of tuned tables.

    compare.py [--threshold PCT] NAME=BENCH_MD[,BENCH_MD...] NAME=...

Each NAME is a set of tables (the first is the reference) and its bench.md
files are the rounds it ran (bench/h200/compare.sh writes them). For every
layer and token count the report gives each set's moegen times over its
rounds (min-max, us per call), and marks a set that is faster than the
reference in every round by at least PCT percent (default 1): its slowest
round against the reference's fastest, the rule the sm_90a tables' rows are
chosen by (data/sm90a/README.md); likewise "(+N%)" where its fastest round
is slower than the reference's slowest by PCT. A row whose check did not
pass in some round shows that round's check instead of a time and is never
marked.
"""
import argparse
import re
import sys

HEADING = re.compile(r"^### (?:.*?: )?(\S+) \(model_dim")


def read_bench(path):
    """{(layer, tokens): (us or None, check)} of one bench.md, in file order."""
    rows = {}
    layer = None
    columns = None
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}")
    with f:
        for lineno, line in enumerate(f, 1):
            m = HEADING.match(line)
            if m:
                layer, columns = m.group(1), None
                continue
            if line.startswith("###"):
                layer = None
                continue
            if layer is None or not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if columns is None:
                columns = cells
                for want in ("M", "moegen us", "check"):
                    if want not in columns:
                        sys.exit(f"{path}:{lineno}: the table of {layer} has no '{want}' column")
                continue
            if cells[0].startswith("-"):
                continue
            if len(cells) != len(columns):
                sys.exit(f"{path}:{lineno}: {len(cells)} cells where the header has {len(columns)}")
            row = dict(zip(columns, cells))
            try:
                tokens = int(row["M"])
            except ValueError:
                sys.exit(f"{path}:{lineno}: M '{row['M']}' is not a token count")
            try:
                us = float(row["moegen us"])
            except ValueError:
                us = None
            rows[(layer, tokens)] = (us, row["check"])
    return rows


def cell(runs):
    """A set's rounds as text, and its times when every round passed."""
    bad = [check for us, check in runs if check != "PASS" or us is None]
    if bad:
        return bad[0], None
    times = sorted(us for us, _ in runs)
    text = f"{times[0]:g}" if times[0] == times[-1] else f"{times[0]:g}-{times[-1]:g}"
    return text, times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threshold", type=float, default=1.0,
                    help="percent a set must beat the reference by in every round (default 1)")
    ap.add_argument("sets", nargs="+", metavar="NAME=BENCH_MD[,BENCH_MD...]")
    args = ap.parse_args()
    if not 0 <= args.threshold < 100:
        sys.exit(f"--threshold {args.threshold}: not a percentage in [0, 100)")
    names, runs = [], {}
    for spec in args.sets:
        name, sep, files = spec.partition("=")
        if not sep or not name or not files:
            sys.exit(f"'{spec}': expected NAME=BENCH_MD[,BENCH_MD...]")
        if name in runs:
            sys.exit(f"'{name}': named twice")
        names.append(name)
        runs[name] = [read_bench(p) for p in files.split(",")]
    keys = []
    for name in names:
        for rounds in runs[name]:
            keys += [k for k in rounds if k not in keys]
    ref = names[0]
    print(f"| layer | M | {' | '.join(names)} |")
    print("|:--|--:|" + "--:|" * len(names))
    marked = slower = 0
    for key in keys:
        texts, ref_times = [], None
        for name in names:
            got = [r[key] for r in runs[name] if key in r]
            if not got:
                texts.append("-")
                continue
            text, times = cell(got)
            if name == ref:
                ref_times = times
            elif times and ref_times:
                gain = 100.0 * (1.0 - times[-1] / ref_times[0])
                loss = 100.0 * (times[0] / ref_times[-1] - 1.0)
                if gain >= args.threshold:
                    text += f" (-{gain:.1f}%)"
                    marked += 1
                elif loss >= args.threshold:
                    text += f" (+{loss:.1f}%)"
                    slower += 1
            texts.append(text)
        print(f"| {key[0]} | {key[1]} | {' | '.join(texts)} |")
    print(f"\n{marked} cell(s) faster than {ref} in every round by at least {args.threshold:g}%"
          f" (its slowest round against {ref}'s fastest), {slower} slower in every round by as"
          f" much (its fastest against {ref}'s slowest).")


if __name__ == "__main__":
    main()
