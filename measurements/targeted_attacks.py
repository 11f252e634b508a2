"""What privacy protects, per target row of the real housing data: informed reconstruction and targeted membership
inference (issue 39), for OLS and the proven private regressions of the default configuration.

    python measurements/targeted_attacks.py [--m 2000,20000] [--epsilons 0.5,1,4] [--k 5] [--methods ssp,adassp]
                                          [--n-train 250] [--n-test 1000] [--no-lira] [--no-reconstruction]
                                          [--csv out_prefix]

The data: the real 20,640 rows prepared as the workflow prepares them (tests/support.py, ``housing_design``: five
standardized covariates, the response centred), with an intercept column prepended for every method, so that an
informed adversary's reconstruction is identified (dpcost.attacks.reconstruction). Targets: the k rows of highest
leverage on the full standardized design (row 15,360 first, h = 0.120 against a mean of 0.00024) and k rows drawn
uniformly from the others. Every method runs with the default configuration's fixed tuning constants at ε, δ =
10/m^1.1, tight calibration, exact noise.

1. Reconstruction (informed adversary: every other row of the subsample, the release, the method and its tuning):
   for OLS the closed form; for a private method the release-matching attack against its noiseless counterpart (the
   method at ε = 10⁹ with a fixed seed). The subsample is the target plus m − 1 rows drawn from its own stream.
2. Targeted membership inference, LiRA-style (dpcost.attacks.targeted; the adversary knows the population, not the
   subsample): AUC ± SE, TPR at FPR 0.1 % and 1 %, ε_lb (95 %), beside the (ε, δ) ceilings; "within" says
   AUC ≤ ceiling + 2 SE and ε_lb ≤ ε.

noisy_sgd is left out of the default methods: at ≈ 0.3 s a fit (10 passes in batches of 256), its 2,500 shadow fits
per target cost 12 minutes each.
"""

import argparse
import functools
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from dpcost.analysis.streams import rng_for  # noqa: E402
from dpcost.attacks.reconstruction import reconstruct_by_matching, reconstruct_ols, relative_error  # noqa: E402
from dpcost.attacks.targeted import leverage, lira, ols_releases, one_by_one, pick_targets, shadow_rows  # noqa: E402
from dpcost.dp.privacy import Privacy  # noqa: E402
from dpcost.estimators.registry import get  # noqa: E402

from support import housing_block, housing_design  # noqa: E402

PRIVATE = ("ssp", "adassp", "joint_ssp", "boosted_adassp", "noisy_gd", "noisy_truncated_ols", "precond_gd",
           "subsample_aggregate", "precond_gd_free", "precond_gd_adaptive")  # fmt: skip
DELTA = "10/n^1.1"
# iterations of the matching attack per start (each costs d + 2 = 8 fits with the finite-difference Jacobian)
RECON_NFEV = 40


def private_release(method, tuning, privacy):
    """The method's release on a subsample: f(X, y, rng) → estimate."""

    def fit(X, y, rng):
        return np.asarray(method.estimate(X, y, privacy=privacy, rng=rng, tuning=tuning, params={})[0], dtype=float)

    return fit


def reconstruction_rows(Xi, y, targets, kinds, h, methods, ms, epsilons, seed, tunings):
    rows = []
    for m in ms:
        for t, kind in zip(targets, kinds, strict=True):
            sub = shadow_rows(len(y), m, int(t), True, rng_for(seed, "housing", "targeted", "reconstruction", m, t))
            rest = sub[sub != t]
            X_rest, y_rest = Xi[rest], y[rest]
            beta = np.linalg.lstsq(Xi[sub], y[sub], rcond=None)[0]
            x_hat, y_hat = reconstruct_ols(X_rest, y_rest, beta)
            rows.append(("ols", m, np.nan, t, kind, h[t], relative_error(x_hat, y_hat, Xi[t], y[t]), "closed form"))
            for name in methods:
                method = get(name)
                noiseless = Privacy(1e9, DELTA, calibration="tight", sampler="float-unsafe").at(m)
                model_fit = private_release(method, tunings[name], noiseless)

                def model(X, yy, model_fit=model_fit):
                    return model_fit(X, yy, np.random.default_rng(0))

                for eps in epsilons:
                    fit = private_release(method, tunings[name], Privacy(eps, DELTA, calibration="tight").at(m))
                    release = fit(Xi[sub], y[sub], rng_for(seed, "housing", "targeted", "recon-noise", name, eps, m, t))
                    rec = reconstruct_by_matching(release, X_rest, y_rest, model, max_nfev=RECON_NFEV)
                    rows.append((name, m, eps, t, kind, h[t], relative_error(rec.x, rec.y, Xi[t], y[t]), "matching"))
            print(f"  reconstruction m={m} target {t}: done", flush=True)
    return pd.DataFrame(rows, columns=["method", "m", "epsilon", "target", "kind", "leverage", "rel_error", "attack"])


def lira_rows(Xi, y, targets, kinds, h, methods, ms, epsilons, seed, tunings, n_train, n_test):
    rng_of = functools.partial(rng_for, seed)
    n, out = len(y), []
    for m in ms:
        jobs = [("ols", None, ols_releases(Xi, y))]
        for name in methods:
            for eps in epsilons:
                fit = private_release(get(name), tunings[name], Privacy(eps, DELTA, calibration="tight").at(m))
                jobs.append((name, eps, one_by_one(lambda r, g, fit=fit: fit(Xi[r], y[r], g))))
        delta = Privacy(1.0, DELTA).at(m).delta
        for name, eps, releases in jobs:
            t0 = time.perf_counter()
            for t, kind in zip(targets, kinds, strict=True):
                r = lira(releases, n, m, int(t), identity=("housing", name, eps), rng_of=rng_of, delta=delta,
                         epsilon=eps, n_train=n_train, n_test=n_test)  # fmt: skip
                out.append({"method": name, "m": m, "epsilon": eps if eps else np.nan, "target": t, "kind": kind,
                            "leverage": h[t], **r})  # fmt: skip
            print(f"  lira {name} m={m} eps={eps}: {time.perf_counter() - t0:.1f} s", flush=True)
    df = pd.DataFrame(out)
    within = (df.auc <= df.auc_ceiling + 2 * df.auc_se) & (df.epsilon_lb <= df.epsilon)
    df["within"] = np.where(df.epsilon.notna(), within, pd.NA)
    return df


def run_lira(args, Xi, y, targets, kinds, h, methods, ms, epsilons, tunings) -> None:
    t0 = time.perf_counter()
    df = lira_rows(Xi, y, targets, kinds, h, methods, ms, epsilons, args.seed, tunings, args.n_train, args.n_test)
    print(f"\nTargeted membership inference ({time.perf_counter() - t0:.0f} s)")
    cols = ["method", "m", "epsilon", "target", "kind", "leverage", "auc", "auc_se", "tpr_fpr0001", "tpr_fpr001",
            "epsilon_lb", "auc_ceiling", "tpr_ceiling0001", "within"]  # fmt: skip
    print(df[cols].to_string(index=False, float_format="%.3g"))
    summary = df.assign(epsilon=df.epsilon.map(lambda e: "-" if np.isnan(e) else f"{e:g}"))
    summary = summary.groupby(["method", "m", "epsilon", "kind"]).agg(
        auc_max=("auc", "max"), auc_mean=("auc", "mean"), epsilon_lb_max=("epsilon_lb", "max"),
        auc_ceiling=("auc_ceiling", "first"), all_within=("within", lambda w: bool(w.dropna().all())))  # fmt: skip
    print("\nPer method, m, ε and kind of target:")
    print(summary.to_string(float_format="%.3g"))
    if args.csv:
        df.to_csv(f"{args.csv}_lira.csv", index=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", default="2000,20000")
    ap.add_argument("--epsilons", default="0.5,1,4")
    ap.add_argument("--methods", default=",".join(PRIVATE))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--n-train", type=int, default=250)
    ap.add_argument("--n-test", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--no-lira", action="store_true")
    ap.add_argument("--no-reconstruction", action="store_true")
    ap.add_argument("--csv", help="write <prefix>_reconstruction.csv and <prefix>_lira.csv")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", message="PRIVACY WARNING")
    ms = [int(v) for v in args.m.split(",")]
    epsilons = [float(v) for v in args.epsilons.split(",")]
    methods = [v for v in args.methods.split(",") if v]
    X, y, names, _ = housing_design()
    Xi = np.c_[np.ones(len(y)), X]
    h = leverage(X)
    targets, kinds = pick_targets(X, args.k, args.k, rng_for(args.seed, "housing", "targeted", "targets"))
    print(f"housing: n = {len(y)}, covariates {names}; mean leverage {h.mean():.5f}")
    print("targets:", ", ".join(f"{t} ({k}, h = {h[t]:.4f})" for t, k in zip(targets, kinds, strict=True)))
    block = housing_block()
    tunings = {name: get(name).resolve_tuning(block["tuning"].get(name, {})) for name in methods}
    pd.set_option("display.width", 200, "display.max_rows", 500, "display.max_columns", 30)
    if not args.no_lira:
        run_lira(args, Xi, y, targets, kinds, h, methods, ms, epsilons, tunings)
    if not args.no_reconstruction:
        t0 = time.perf_counter()
        rec = reconstruction_rows(Xi, y, targets, kinds, h, methods, ms, epsilons, args.seed, tunings)
        print(f"\nReconstruction ({time.perf_counter() - t0:.0f} s): relative error of (x, y)")
        table = rec.assign(epsilon=rec.epsilon.map(lambda e: "-" if np.isnan(e) else f"{e:g}"))
        print(table.pivot_table(index=["method", "epsilon"], columns=["m", "kind"], values="rel_error",
                                aggfunc=["min", "median"]).to_string(float_format="%.3g"))  # fmt: skip
        print(rec[rec.method == "ols"].to_string(index=False, float_format="%.3g"))
        if args.csv:
            rec.to_csv(f"{args.csv}_reconstruction.csv", index=False)


if __name__ == "__main__":
    main()
