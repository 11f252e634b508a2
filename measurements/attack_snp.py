"""The score attack of the SNP analysis on genotypes with independent SNPs, at the real group sizes and the default
configuration (m grid, s, ε, δ, tuning, 20 repetitions attacked, tight calibration).

    python measurements/attack_snp.py [--reps 20] [--seed 20261121]

GEO is out of reach here, and the full-size synthetic matrix of full_run.py reuses 4,096 row bodies (for the
parser's sake), so its top-MAF SNPs are copies of a few rows and trace far less than 2,000 independent SNPs would.
This draws 241 + 146 people × 2,000 SNPs with allele frequencies U(0.4, 0.5) (the range of the top-MAF SNPs of a
SNP 6.0 array) and no group difference, and prints attack.csv's columns per (method, m).
"""

import argparse
import time

import numpy as np
import pandas as pd
import yaml

from dpcost.analysis.attack import run_attack, summarise_attack
from dpcost.analysis.designs import TwoGroupMeanDesign
from dpcost.analysis.plotting import attack_figure
from dpcost.dp.privacy import Privacy
from dpcost.estimators.registry import get

REPO_CONFIG = __file__.rsplit("/measurements/", 1)[0] + "/config/config.yaml"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--figure", help="also draw the attack figure of every method to this PNG")
    args = ap.parse_args()
    cfg = yaml.safe_load(open(REPO_CONFIG))["snp"]
    rng = np.random.default_rng(args.seed)
    p = rng.uniform(0.4, 0.5, cfg["n_snps"])
    A = rng.binomial(2, p, (cfg["groups"]["average"], p.size)).astype(np.int8)
    B = rng.binomial(2, p, (cfg["groups"]["low"], p.size)).astype(np.int8)
    design = TwoGroupMeanDesign(A, B, A.mean(0) - B.mean(0), cfg["s"])
    privacy = Privacy(cfg["privacy"]["epsilon"], cfg["privacy"]["delta"], "tight")
    frames, t0 = [], time.perf_counter()
    for name in cfg["methods"]:
        method = get(name, "mean")
        tuning = method.resolve_tuning(cfg["tuning"].get(name, {}))
        frames.append(run_attack(design, method, tuning=tuning, params={"s": cfg["s"]}, m_grid=cfg["m"],
                                 reps=args.reps, seed=args.seed, privacy=privacy, dataset="snp",
                                 cap=cfg["attack"]["max_candidates"]))  # fmt: skip
    private = {k: get(k, "mean").private for k in cfg["methods"]}
    out = summarise_attack(pd.concat(frames), privacy=privacy, private=private, alpha=cfg["attack"]["alpha"])
    pd.set_option("display.width", 200)
    cols = ["method", "m", "n_candidates", "auc", "auc_se", "tpr_fpr01", "tpr_fpr05", "epsilon_lb", "auc_ceiling"]
    print(out[cols].round(3).to_string(index=False))
    print(f"{time.perf_counter() - t0:.1f} s")
    if args.figure:
        attack_figure(out, [args.figure], title="Independent SNPs, GSE106818's group sizes: score attack",
                      xlabel="pairs per group m", epsilon=privacy.epsilon, delta=privacy.delta,
                      calibration=privacy.calibration, tuning="fixed")  # fmt: skip


if __name__ == "__main__":
    main()
