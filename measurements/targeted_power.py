"""The power of the targeted test against a planted leak: how often the LiRA-style test of dpcost.attacks.targeted
flags an SSP whose noise is its plan's divided by 10 (or 20) while it is labelled (ε = 1, δ = 10⁻⁵)-DP, and how often
it flags the honest SSP (÷ 1: the false-alarm rate), over independent attack seeds.

    python measurements/targeted_power.py [--seeds 20] [--divides 1,10,20] [--sizes 250:1000,100:200]

The population, target and release are the unit test's (tests/unit/attacks/test_targeted.py: n = 10,000, one planted
heavy row, m = 1,000); each seed draws fresh shadow subsamples and noise. "Flagged" is the workflow's verdict negated
(dpcost.analysis.targeted.with_verdict): AUC > ceiling + 2 s.e. or ε_lb > ε. Sizes: shadows:scored releases per
side (250:1,000, the test's; 100:200, the workflow's default `targeted` block).
"""

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "unit" / "attacks"), str(REPO / "tests")]

import test_targeted as T  # noqa: E402

from dpcost.attacks.targeted import lira  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--divides", default="1,10,20")
    ap.add_argument("--sizes", default="250:1000,100:200")
    args = ap.parse_args()
    for size in args.sizes.split(","):
        n_train, n_test = (int(v) for v in size.split(":"))
        for divide in (float(v) for v in args.divides.split(",")):
            t0, auc_hits, lb_hits, either, aucs, lbs = time.perf_counter(), 0, 0, 0, [], []
            for seed in range(args.seeds):
                r = lira(T._planted_ssp(divide), T.N, T.M, 0, identity=("planted", divide),
                         rng_of=T._rng_of(1000 + seed), delta=T.DELTA, epsilon=1.0, n_train=n_train,
                         n_test=n_test)  # fmt: skip
                a, b = r["auc"] > r["auc_ceiling"] + 2 * r["auc_se"], r["epsilon_lb"] > 1.0
                auc_hits, lb_hits, either = auc_hits + a, lb_hits + b, either + (a or b)
                aucs.append(r["auc"])
                lbs.append(r["epsilon_lb"])
            print(f"shadows {n_train}, scored {n_test} per side, noise / {divide:g}: flagged {either}/{args.seeds} "
                  f"(AUC {auc_hits}, eps_lb {lb_hits}); AUC {min(aucs):.3f}-{max(aucs):.3f} (ceiling "
                  f"{r['auc_ceiling']:.3f}), eps_lb {min(lbs):.2f}-{max(lbs):.2f}; {time.perf_counter() - t0:.0f} s",
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
