"""One descriptor per analysis: which methods it can run, how its data are loaded and scored, what its figures say,
what about it is not private. A new analysis is a new descriptor here plus its rules — nothing else branches on
the dataset's name."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data import housing
from ..errors import ConfigError, DataError
from ..estimators.glm import sparse_glm_iht
from .designs import HeldOutRegressionDesign, RegressionDesign, SparseLogisticDesign, TwoGroupMeanDesign

TABLE_FILES = {"table": "results/{name}/data.parquet", "meta": "results/{name}/preprocessing.json"}
SNP_FILES = {"genotypes": "results/snp/genotypes.parquet", "meta": "results/{name}/preprocessing.json"}


@dataclass(frozen=True)
class Analysis:
    """An analysis of the workflow.

    family          registry family of its methods (``dpcost.estimators.registry``)
    title, xlabel, ylabel, reference_label   figure text; the reference line is the error of the estimate 0
    params          keys of its config block given to every method that takes them (e.g. the sparsity ``s``)
    not_private     choices outside any guarantee besides the preprocessing note (which preprocessing.json holds)
    comparison      write comparison.csv (every method against the best of ours and against diffprivlib)
    load            (input paths, params) → design (:mod:`dpcost.analysis.designs`)
    max_m           config block → (largest m allowed, what it counts)
    probe           config block → a tiny input for the start-up dry run of every private method
    check           config block → raises :class:`ConfigError` on values no run should start with
    base            (analysis, keys): the analysis whose data it reuses, and the keys of that analysis's config block
                    it reads (the data's facts, e.g. the group sizes)
    files           where its data are, by the names ``load`` reads ({name}: the analysis's): :meth:`inputs`
    downloads       what its download job writes ({name}: the analysis's): when these are there, no network is needed
    wanted          (name, config block, manual folder) → what to ask the network for its data, None when a copy is
                    on this machine (:mod:`dpcost.data.availability`; the start-up check of the data)
    """

    name: str
    family: str
    title: str
    xlabel: str
    ylabel: str
    reference_label: str
    load: Callable[[Mapping[str, str], Mapping], object]
    max_m: Callable[[Mapping], tuple[int, str]]
    probe: Callable[[Mapping], tuple]
    params: tuple[str, ...] = ()
    not_private: tuple[str, ...] = ()
    comparison: bool = False
    check: Callable[[Mapping], None] | None = None
    base: tuple[str, tuple[str, ...]] | None = None
    files: Mapping[str, str] = dataclasses.field(default_factory=lambda: dict(TABLE_FILES))
    downloads: tuple[str, ...] = ("resources/{name}/raw.parquet", "resources/{name}/download.json")
    wanted: Callable[[str, Mapping, str], object] = lambda name, block, manual: _table_wanted(name, block, manual)

    def inputs(self) -> dict[str, str]:
        """The preprocessed data the analysis's jobs read, under the names its loader takes."""
        return {k: v.format(name=self.name) for k, v in self.files.items()}

    def params_from(self, block: Mapping) -> dict:
        return {k: block[k] for k in self.params}

    def block(self, config: Mapping) -> dict:
        """Its config block, with the ``base`` keys of the analysis whose data it reuses."""
        if self.base is None:
            return dict(config[self.name])
        name, keys = self.base
        return {**{k: config[name][k] for k in keys}, **config[self.name]}


def _table_wanted(name: str, block: Mapping, manual: str):
    from ..data.availability import table_wanted  # asks the network: not imported by the jobs that load data

    return table_wanted(name, block["sources"], manual, block.get("reader"))


def _snp_wanted(name: str, block: Mapping, manual: str):
    from ..data.availability import snp_wanted

    return snp_wanted(block["matrix_url"], block["accession"], manual)


def _read_json(path: str) -> dict:
    with open(path) as fh:
        return json.load(fh)


def _load_snp(inputs: Mapping[str, str], params: Mapping) -> TwoGroupMeanDesign:
    table = pd.read_parquet(inputs["genotypes"])
    meta = _read_json(inputs["meta"])
    snps = list(meta["truth"])
    groups = sorted(meta["groups"])  # ["average", "low"]: μ = mean(average) − mean(low), as in §6.1
    A = table.loc[table.group == groups[0], snps].to_numpy(np.int8)
    B = table.loc[table.group == groups[1], snps].to_numpy(np.int8)
    return TwoGroupMeanDesign(A, B, np.array([meta["truth"][k] for k in snps]), int(params["s"]))


def snp_logistic_design(table: pd.DataFrame, groups: Mapping[str, int], center: Mapping[str, float]):
    """(X, y, names) of the logistic analysis: y = 1 for the second group in name order ("low"), x = (1, genotype
    counts minus the full-sample means ``center``), so every coordinate lies in [−2, 2]."""
    names = sorted(groups)
    snps = list(center)
    missing = sorted(set(snps) - set(table.columns))[:3]
    if missing:
        raise DataError(f"the genotype table lacks the SNPs {missing} of the logistic analysis's record")
    G = table[snps].to_numpy(float) - np.array([center[k] for k in snps])
    X = np.hstack([np.ones((len(G), 1)), G])
    return X, (table["group"].to_numpy() == names[1]).astype(float), ["intercept", *snps]


def snp_logistic_record(table: pd.DataFrame, snp_meta: Mapping, *, s: int, fit: Mapping) -> dict:
    """The logistic analysis's preprocessing record: its centring, response, and truth — the non-private sparse
    logistic fit (IHT with the constants ``fit``: T, eta0) on every sample. Neither step is private."""
    snps = list(snp_meta["truth"])
    center = table[snps].mean().to_dict()
    X, y, names = snp_logistic_design(table, snp_meta["groups"], center)
    beta, _ = sparse_glm_iht(X, y, s=s, family="logistic", T=int(fit["T"]), eta0=float(fit["eta0"]))
    low = sorted(snp_meta["groups"])[1]
    return {
        **{k: snp_meta[k] for k in ("accession", "files", "groups", "n_snps", "selection")},
        "response": f"1 for the {low!r} group, 0 for the other",
        "design": "an intercept, then each SNP's minor-allele count minus its full-sample mean (so |x| <= 2)",
        "center": center,
        "truth_fit": {"method": "sparse_glm_iht (non-private), every sample", "s": s, **dict(fit)},
        "private": False,
        "privacy_note": "NOT PRIVATE: the SNPs are chosen by their MAF in the full sample (as for the mean analysis), "
        "the genotypes centred at their full-sample means, and the truth is the full-sample fit; the DP guarantees "
        "apply to the estimates computed on the centred, chosen SNPs.",
        "truth": dict(zip(names, beta.tolist(), strict=True)),
        "truth_sampling_variance": logistic_sampling_variance(X, y, beta),
    }


def logistic_sampling_variance(X: np.ndarray, y: np.ndarray, beta: np.ndarray) -> float:
    """tr Var(β̂) of a logistic fit β̂ = ``beta`` on its support S (the nonzero coefficients, taken as known), by the
    sandwich H⁻¹GH⁻¹: H = Σ p_i(1 − p_i) x_iS x_iS', G = Σ (y_i − p_i)² x_iS x_iS', p = sigmoid(Xβ̂). The yardstick
    of every cost adds it back (docs/methods.md, "The yardstick"); evaluation only, no estimator reads it. Where
    support columns are collinear (identical SNPs: H singular) H⁻¹ is its pseudo-inverse."""
    S = np.flatnonzero(beta)
    from scipy import special  # here: slow to import

    Xs, p = X[:, S], special.expit(X @ beta)
    H = (Xs * (p * (1 - p))[:, None]).T @ Xs
    Xr = Xs * (y - p)[:, None]
    try:
        bread = np.linalg.inv(H)
    except np.linalg.LinAlgError:  # collinear support columns (SNPs in perfect LD): the minimum-norm fit's variance
        bread = np.linalg.pinv(H, hermitian=True)
    return float(np.trace(bread @ (Xr.T @ Xr) @ bread))


def _load_snp_logistic(inputs: Mapping[str, str], params: Mapping) -> SparseLogisticDesign:
    meta = _read_json(inputs["meta"])
    X, y, names = snp_logistic_design(pd.read_parquet(inputs["genotypes"]), meta["groups"], meta["center"])
    return SparseLogisticDesign(X, y, np.array([meta["truth"][k] for k in names]), s=int(params["s"]))


def _logistic_probe(block: Mapping) -> tuple:
    rng = np.random.default_rng(0)
    X = np.hstack([np.ones((8, 1)), rng.integers(0, 3, size=(8, block.get("n_snps", 4))) - 1.0])
    return X, np.arange(8) % 2.0


def _regression_probe(block: Mapping) -> tuple:
    rng = np.random.default_rng(0)
    return rng.normal(size=(8, 3)), rng.normal(size=8)


def _mean_probe(block: Mapping) -> tuple:
    return (np.random.default_rng(0).integers(-2, 3, size=(4, block["n_snps"])).astype(float),)


def _check_snp(block: Mapping) -> None:
    if block["s"] > block["n_snps"]:
        raise ConfigError(f"sparsity s={block['s']} exceeds the number of SNPs kept (n_snps={block['n_snps']})")


def _load_table(inputs: Mapping[str, str], params: Mapping) -> RegressionDesign:
    """A ``kind: table`` analysis (:func:`dpcost.data.prepare.prepare`): the training rows are subsampled; the held-out
    rows, when there are any, score R²."""
    meta = _read_json(inputs["meta"])
    names = meta["covariates"]
    beta = np.array([meta["truth"][c] for c in names])
    X, y, X_test, y_test = read_split_design(inputs["table"], names)
    if len(y_test) == 0:
        return RegressionDesign(X, y, beta)
    return HeldOutRegressionDesign(X, y, beta, X_test=X_test, y_test=y_test)


def read_split_design(path: str, names: Sequence[str]) -> tuple[np.ndarray, ...]:
    """(X, y, X_test, y_test) of a prepared table (columns ``y``, ``names``, ``split``), read one column at a time
    into row-major arrays: the peak memory is the design and one column, not the table twice over as a DataFrame and
    its copy (a 5,000,000 x 21 table is 0.8 GB), and a repetition's rows are contiguous to gather."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    test = np.asarray(file.read(columns=["split"]).column(0).to_pandas() == "test")
    train = ~test
    X, X_test = np.empty((int(train.sum()), len(names))), np.empty((int(test.sum()), len(names)))
    for j, name in enumerate(names):
        column = file.read(columns=[name]).column(0).to_numpy().astype(float, copy=False)
        X[:, j], X_test[:, j] = column[train], column[test]
    y = file.read(columns=["y"]).column(0).to_numpy().astype(float, copy=False)
    return X, y[train], X_test, y[test]


def table_analysis(name: str) -> Analysis:
    """The analysis of a ``kind: table`` config block named ``name``: a regression on the preprocessed table, run with
    the regression methods exactly as housing is. Its rows are counted when the table is prepared, which refuses an m
    the table cannot serve; the start-up check knows no bound."""
    return Analysis(
        name=name,
        family="regression",
        title=f"{name}: DP OLS error vs sample size",
        xlabel="subsample size m",
        ylabel=r"mean $\|\hat\beta - \beta\|_2$ over repetitions",
        reference_label=r"$\hat\beta = 0$ (error $\|\beta\|_2$)",
        load=_load_table,
        max_m=lambda block: (2**62, "rows (the table's rows are checked when it is prepared)"),
        probe=_regression_probe,
        not_private=(
            f"tuning constants: {name}'s tuning block (from table_defaults unless the block sets it), run as written "
            "under tuning_mode fixed and the base of the search otherwise. The defaults were chosen by the "
            "maintainers on California housing, not on this table; a value set after looking at this table is not "
            "private with respect to it",
        ),
        comparison=True,
    )


ANALYSES: dict[str, Analysis] = {
    # California housing: a built-in table (config/config.yaml, reader: housing) with the paper's figure text, its
    # rows known in advance (m is checked at start-up) and the note on the constants chosen on it
    "housing": dataclasses.replace(
        table_analysis("housing"),
        title="California housing: DP OLS error vs sample size",
        max_m=lambda block: (housing.N_ROWS, "rows of the data"),
        not_private=(
            "tuning constants: the config's tuning block (table_defaults': R, T, C, c_x, eta0, kappa, the JL rows r, "
            "the SGD batch and passes, …), run as written under tuning_mode fixed and the base of the search "
            "otherwise, was chosen once by the maintainers on the full real data, and so were the search grids "
            "(docs/results.md, 'Tuning choices')",
        ),
    ),
    "snp": Analysis(
        name="snp",
        family="mean",
        title="GSE106818: DP sparse mean of minor-allele count differences",
        xlabel="pairs per group m",
        ylabel=r"mean $\|\hat\mu - \mu\|_2$ over repetitions",
        reference_label=r"$\hat\mu = 0$ (error $\|\mu\|_2$)",
        load=_load_snp,
        max_m=lambda block: (min(block["groups"].values()), "samples of the smaller group"),
        probe=_mean_probe,
        params=("s",),
        check=_check_snp,
        files=SNP_FILES,
        downloads=("resources/snp/manifest.json",),  # the GEO series matrix's parts (its own rule: download_snp)
        wanted=_snp_wanted,
    ),
    "snp_logistic": Analysis(
        name="snp_logistic",
        family="glm",
        title="GSE106818: DP sparse logistic regression of the IQ group on the SNPs",
        xlabel="people per subsample m",
        ylabel=r"mean $\|\hat\beta - \beta\|_2$ over repetitions",
        reference_label=r"$\hat\beta = 0$ (error $\|\beta\|_2$)",
        load=_load_snp_logistic,
        max_m=lambda block: (sum(block["groups"].values()) - 4, "samples less the attack's 4 outside records"),
        probe=_logistic_probe,
        params=("s",),
        check=_check_snp,
        base=("snp", ("groups", "n_snps")),
        files=SNP_FILES,
    ),
}


def get(name: str) -> Analysis:
    """The analysis named ``name``: a built-in one, or else the ``kind: table`` analysis of that name (the workflow
    checks at start-up that the config has such a block)."""
    if name in ANALYSES:
        return ANALYSES[name]
    if not name.isidentifier():
        raise ConfigError(f"unknown analysis {name!r}; built in: {sorted(ANALYSES)}, or a kind: table block")
    return table_analysis(name)
