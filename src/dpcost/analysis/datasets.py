"""One descriptor per analysis: which methods it can run, how its data are loaded and scored, what its figures say,
what about it is not private. A new analysis is a new descriptor here plus its rules — nothing else branches on
the dataset's name."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data import housing
from ..errors import ConfigError
from .designs import RegressionDesign, TwoGroupMeanDesign


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

    def params_from(self, block: Mapping) -> dict:
        return {k: block[k] for k in self.params}


def _read_json(path: str) -> dict:
    with open(path) as fh:
        return json.load(fh)


def _load_housing(inputs: Mapping[str, str], params: Mapping) -> RegressionDesign:
    data = pd.read_parquet(inputs["table"])
    truth = _read_json(inputs["meta"])["truth"]
    beta = np.array([truth[c] for c in housing.COVARIATES])
    return RegressionDesign(data[housing.COVARIATES].to_numpy(), data["y"].to_numpy(), beta)


def _load_snp(inputs: Mapping[str, str], params: Mapping) -> TwoGroupMeanDesign:
    table = pd.read_parquet(inputs["genotypes"])
    meta = _read_json(inputs["meta"])
    snps = list(meta["truth"])
    groups = sorted(meta["groups"])  # ["average", "low"]: μ = mean(average) − mean(low), as in §6.1
    A = table.loc[table.group == groups[0], snps].to_numpy(np.int8)
    B = table.loc[table.group == groups[1], snps].to_numpy(np.int8)
    return TwoGroupMeanDesign(A, B, np.array([meta["truth"][k] for k in snps]), int(params["s"]))


def _regression_probe(block: Mapping) -> tuple:
    rng = np.random.default_rng(0)
    return rng.normal(size=(8, 3)), rng.normal(size=8)


def _mean_probe(block: Mapping) -> tuple:
    return (np.random.default_rng(0).integers(-2, 3, size=(4, block["n_snps"])).astype(float),)


def _check_snp(block: Mapping) -> None:
    if block["s"] > block["n_snps"]:
        raise ConfigError(f"sparsity s={block['s']} exceeds the number of SNPs kept (n_snps={block['n_snps']})")


ANALYSES: dict[str, Analysis] = {
    "housing": Analysis(
        name="housing",
        family="regression",
        title="California housing: DP OLS error vs sample size",
        xlabel="subsample size m",
        ylabel=r"mean $\|\hat\beta - \beta\|_2$ over repetitions",
        reference_label=r"$\hat\beta = 0$ (error $\|\beta\|_2$)",
        load=_load_housing,
        max_m=lambda block: (housing.N_ROWS, "rows of the data"),
        probe=_regression_probe,
        not_private=(
            "tuning constants: the config's tuning block (R, T, C, c_x, eta0, kappa, the JL rows r, the SGD batch and "
            "passes, …), run as written under tuning_mode fixed and the base of the search otherwise, was chosen once "
            "by the maintainers on the full real data, and so were the search grids (docs/results.md, 'Tuning "
            "choices')",
        ),
        comparison=True,
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
    ),
}


def get(name: str) -> Analysis:
    if name not in ANALYSES:
        raise ConfigError(f"unknown analysis {name!r}; available: {sorted(ANALYSES)}")
    return ANALYSES[name]
