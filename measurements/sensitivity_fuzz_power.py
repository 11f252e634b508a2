"""The power of the sensitivity fuzzer (issue 51): for each planted bug of tests/sensitivity_fuzz.PLANTED, in how
many of 20 random seeds the search the bug names catches it, at a given number of examples.

    python measurements/sensitivity_fuzz_power.py [--examples 25,100] [--seeds 20] [--bugs "name;name"] [--out power.md]

The suite (tests/unit/dp/test_sensitivity_fuzz.py) runs each planted bug once, derandomized, at its own budget
(``Planted.examples``); here each search runs with random seeds 0 … seeds − 1 (``hypothesis.seed``), no shrinking,
and a seed counts as caught when the search raises the AssertionError the bug names. ``--examples`` 0 means each
bug's own budget. The table goes to docs/methods.md ("Sensitivity fuzzer", "Its power").
"""

import argparse
import re
import sys
import time
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from sensitivity_fuzz import PLANTED, fuzz  # noqa: E402


def caught(bug: str, examples: int, seed: int) -> bool:
    p = PLANTED[bug]
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p.plant(mp)
        try:
            fuzz(**p.target, examples=examples, shrink=False, seed=seed)
        except AssertionError as e:
            if re.search(p.match, str(e)):
                return True
            raise
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", default="0", help="comma-separated budgets; 0: each bug's own")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--bugs", default=";".join(PLANTED), help="names of tests/sensitivity_fuzz.PLANTED, separated by ;")
    ap.add_argument("--out", type=Path, help="also write the table (markdown) here")
    args = ap.parse_args()
    rows = ["| planted bug | examples | caught in | time |", "|---|---|---|---|"]
    for bug in args.bugs.split(";"):
        for e in (int(x) for x in args.examples.split(",")):
            e = e or PLANTED[bug].examples
            t0 = time.perf_counter()
            k = sum(caught(bug, e, s) for s in range(args.seeds))
            rows.append(f"| {bug} | {e} | {k} of {args.seeds} | {time.perf_counter() - t0:.0f} s |")
            print(rows[-1], flush=True)
    table = "\n".join(rows)
    print(table)
    if args.out:
        args.out.write_text(table + "\n")


if __name__ == "__main__":
    main()
