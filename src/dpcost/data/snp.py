"""The SNP analysis's data (GEO series GSE106818, Cai, Wang & Zhang 2021 §6.1): from the downloaded series-matrix
parts to the genotype table, the list of kept SNPs and the record of every choice."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np
import pandas as pd

from . import geo

log = logging.getLogger(__name__)


def prepare(
    manifest: dict,
    *,
    accession: str,
    label_pattern: str,
    groups: Mapping[str, int],
    n_snps: int,
    max_missing_rate: float,
    tie_break: str,
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Parse the series matrix, label the samples, keep the top ``n_snps`` SNPs by MAF as minor-allele counts.

    Returns the genotype table (``sample``, ``group`` and one int8 column per kept SNP), the kept SNPs (rank, id,
    MAF, minor allele, no-call rate) and the preprocessing record, whose ``truth`` is the difference of the
    full-group means (the estimand of §6.1). The selection looks at every sample: it is not private, and says so.
    """
    headers = [geo.read_header(f["path"]) for f in manifest["files"]]
    labels, where = geo.find_labels(headers, label_pattern)
    geo.check_groups(labels, groups)
    sel = geo.select_snps(
        geo.iter_joined(headers, accession=accession),
        n_snps=n_snps,
        max_missing_rate=max_missing_rate,
        tie_break=tie_break,
    )
    samples = [s for h in headers for s in h.columns[1:]]
    table = pd.DataFrame(sel.genotypes.T, columns=sel.ids)
    table.insert(0, "group", labels)
    table.insert(0, "sample", samples)
    snps = pd.DataFrame(
        {
            "rank": np.arange(1, len(sel.ids) + 1),
            "snp": sel.ids,
            "maf": sel.maf,
            "minor_allele": sel.minor,
            "missing_rate": sel.missing_rate,
        }
    )
    names = sorted(groups)  # ["average", "low"]: μ = mean(average) − mean(low), as in §6.1
    a, b = sel.genotypes[:, labels == names[0]], sel.genotypes[:, labels == names[1]]
    mu = a.mean(axis=1) - b.mean(axis=1)
    meta = {
        "accession": accession,
        "files": [{k: f[k] for k in ("name", "url", "bytes", "sha256", "retrieved")} for f in manifest["files"]],
        "labels_from": where,
        "groups": {g: int((labels == g).sum()) for g in names},
        "difference": f"{names[0]} minus {names[1]}",
        "rows": sel.stats,
        "n_snps": len(sel.ids),
        "selection": f"top {len(sel.ids)} by MAF over all samples; no-call rate <= {max_missing_rate}; "
        f"ties by {tie_break}; no-calls in kept SNPs imputed with the SNP's mode",
        "private": False,
        "privacy_note": "NOT PRIVATE: the SNPs are chosen by their MAF in the full sample, as in Cai, Wang & Zhang, "
        "Ann. Statist. 2021, §6.1; the DP guarantees apply to the estimates computed on the chosen SNPs.",
        "truth": dict(zip(sel.ids.tolist(), mu.tolist(), strict=True)),
        # tr Var(μ̂) of the full-sample difference, Σ_j s²_a,j/n_a + s²_b,j/n_b: the yardstick of every cost adds it
        # back (docs/methods.md, "The yardstick"); evaluation only, no estimator reads it
        "truth_sampling_variance": float(
            a.var(axis=1, ddof=1).sum() / a.shape[1] + b.var(axis=1, ddof=1).sum() / b.shape[1]
        ),
    }
    log.info("kept %d SNPs from %d rows; labels from %s", len(sel.ids), sel.stats["rows"], where)
    return table, snps, meta
