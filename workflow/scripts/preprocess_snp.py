"""Parse the series matrix, label the samples, keep the top SNPs by MAF as minor-allele counts; record the choices."""

import json
import logging

import numpy as np
import pandas as pd

from dpcost import geo
from dpcost.scripting import run


def main():
    p = snakemake.params
    manifest = json.loads(open(snakemake.input.manifest).read())
    headers = [geo.read_header(f["path"]) for f in manifest["files"]]
    labels, where = geo.find_labels(headers, p.label_pattern)
    geo.check_groups(labels, p.groups)
    sel = geo.select_snps(
        geo.iter_joined(headers, accession=p.accession),
        n_snps=p.n_snps,
        max_missing_rate=p.max_missing_rate,
        tie_break=p.tie_break,
    )
    samples = [s for h in headers for s in h.columns[1:]]
    table = pd.DataFrame(sel.genotypes.T, columns=sel.ids)
    table.insert(0, "group", labels)
    table.insert(0, "sample", samples)
    table.to_parquet(snakemake.output.genotypes, index=False)
    pd.DataFrame(
        {
            "rank": np.arange(1, len(sel.ids) + 1),
            "snp": sel.ids,
            "maf": sel.maf,
            "minor_allele": sel.minor,
            "missing_rate": sel.missing_rate,
        }
    ).to_csv(snakemake.output.snps, index=False, float_format="%.6g")
    groups = sorted(p.groups)  # ["average", "low"]: μ = mean(average) − mean(low), as in 004 §6.1
    mu = sel.genotypes[:, labels == groups[0]].mean(axis=1) - sel.genotypes[:, labels == groups[1]].mean(axis=1)
    meta = {
        "accession": p.accession,
        "files": [{k: f[k] for k in ("name", "url", "bytes", "sha256", "retrieved")} for f in manifest["files"]],
        "labels_from": where,
        "groups": {g: int((labels == g).sum()) for g in groups},
        "difference": f"{groups[0]} minus {groups[1]}",
        "rows": sel.stats,
        "n_snps": len(sel.ids),
        "selection": f"top {len(sel.ids)} by MAF over all samples; no-call rate <= {p.max_missing_rate}; "
        f"ties by {p.tie_break}; no-calls in kept SNPs imputed with the SNP's mode",
        "private": False,
        "privacy_note": "NOT PRIVATE: the SNPs are chosen by their MAF in the full sample, as in Cai, Wang & Zhang, "
        "Ann. Statist. 2021, §6.1; the DP guarantees apply to the estimates computed on the chosen SNPs.",
        "truth": dict(zip(sel.ids.tolist(), mu.tolist(), strict=True)),
    }
    with open(snakemake.output.meta, "w") as fh:
        json.dump(meta, fh, indent=1)
    logging.getLogger("preprocess_snp").info(
        "kept %d SNPs from %d rows; labels from %s", len(sel.ids), sel.stats["rows"], where
    )


run(main, snakemake.log[0], "preprocess_snp")
