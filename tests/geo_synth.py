"""Synthetic GEO series-matrix files in the real layout, in every genotype coding GEO uses for SNP 6.0 arrays.

The true genotypes are kept (B-allele counts and a no-call mask), so tests can compare the parser with a direct
computation.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np

STYLES = ("ab", "ab_space", "nc", "basepairs", "numeric", "empty")
BASES = "ACGT"


@dataclass
class SynthSeries:
    ids: np.ndarray  # SNP ids
    B: np.ndarray  # (snps, samples) B-allele counts 0/1/2
    missing: np.ndarray  # (snps, samples) bool
    samples: list[str]
    labels: list[str]  # "average IQ" / "low IQ"
    alleles: np.ndarray  # (snps, 2) letters of allele "A" and allele "B" as written in the file


def make_series(n_snps=300, n_average=24, n_low=16, *, missing_rate=0.01, seed=0, signal=10, shift=0.25):
    rng = np.random.default_rng(seed)
    n = n_average + n_low
    p = rng.uniform(0.02, 0.98, size=n_snps)  # B-allele frequency
    p_group = np.tile(p[:, None], (1, n))
    p_group[:signal, n_average:] = np.clip(p[:signal, None] + shift, 0.01, 0.99)  # the sparse group difference
    B = rng.binomial(2, p_group).astype(np.int8)
    missing = rng.random((n_snps, n)) < missing_rate
    ids = np.array([f"SNP_A-{1780000 + 7 * k}" for k in range(n_snps)])
    samples = [f"GSM28{k:05d}" for k in range(n)]
    labels = ["average IQ"] * n_average + ["low IQ"] * n_low
    order = rng.permutation(n)  # groups interleaved, as in a real series
    B, missing = B[:, order], missing[:, order]
    labels = [labels[k] for k in order]
    alleles = np.array([rng.choice(list(BASES), size=2, replace=False) for _ in range(n_snps)])
    return SynthSeries(ids, B, missing, samples, labels, alleles)


def tokens(series: SynthSeries, style: str, rng=None) -> np.ndarray:
    rng = rng or np.random.default_rng(1)
    B, miss = series.B, series.missing
    if style in ("ab", "ab_space", "nc"):
        het = np.where(rng.random(B.shape) < 0.1, "BA", "AB")  # BA is rare but legal
        tok = np.where(B == 0, "AA", np.where(B == 1, het, "BB"))
        nocall = {"ab": "NoCall", "ab_space": "No Call", "nc": "NC"}[style]
    elif style == "basepairs":
        a, b = series.alleles[:, :1], series.alleles[:, 1:]
        het = np.where(rng.random(B.shape) < 0.5, np.char.add(a, b), np.char.add(b, a))
        tok = np.where(B == 0, np.char.add(a, a), np.where(B == 1, het, np.char.add(b, b)))
        nocall = np.where(rng.random(B.shape) < 0.5, "NN", "--")
    elif style == "numeric":
        tok = B.astype(str)
        nocall = "-1"
    elif style == "empty":
        tok = np.where(B == 0, "AA", np.where(B == 1, "AB", "BB"))
        nocall = np.array(["", "null", "NA"])[rng.integers(0, 3, size=B.shape)]
    else:
        raise ValueError(style)
    return np.where(miss, nocall, tok).astype(object)


def write_series_matrix(
    path: Path,
    series: SynthSeries,
    style: str = "ab",
    *,
    columns: slice = slice(None),
    label_key: str = "!Sample_characteristics_ch1",
    labels: list[str] | None = None,
    extra_rows: bool = True,
    values: np.ndarray | None = None,
    truncate_table: bool = False,
) -> Path:
    """Write one (part) file. ``columns`` selects the samples of a split part; ``values`` overrides the cells."""
    samples = series.samples[columns]
    labs = (labels or series.labels)[columns]
    vals = (tokens(series, style) if values is None else values)[:, columns]
    q = lambda x: f'"{x}"'  # noqa: E731
    lines = [
        "!Series_title\t" + q("Genome-wide SNP genotyping of adults with schizophrenia (synthetic)"),
        "!Series_geo_accession\t" + q("GSE106818"),
        "!Series_platform_id\t" + q("GPL6801"),
        "",
        "!Sample_title\t" + "\t".join(q(f"patient {s[-4:]}") for s in samples),
        "!Sample_geo_accession\t" + "\t".join(q(s) for s in samples),
        "!Sample_source_name_ch1\t" + "\t".join(q("whole blood") for _ in samples),
        "!Sample_characteristics_ch1\t" + "\t".join(q("gender: female") for _ in samples),
    ]
    if label_key == "!Sample_characteristics_ch1":
        lines.append(label_key + "\t" + "\t".join(q(f"iq group: {lab}") for lab in labs))
    elif label_key == "!Sample_title":
        lines[4] = (
            label_key + "\t" + "\t".join(q(f"{lab} patient {s[-4:]}") for lab, s in zip(labs, samples, strict=True))
        )
    lines += ["!Sample_data_processing\t" + "\t".join(q("Birdseed v2") for _ in samples), "!series_matrix_table_begin"]
    lines.append("\t".join(q(c) for c in ["ID_REF", *samples]))
    body = []
    for k, sid in enumerate(series.ids):
        body.append(q(sid) + "\t" + "\t".join(vals[k].tolist()))
        if extra_rows and k % 50 == 0:  # copy-number probes and controls are interleaved in real files
            body.append(q(f"CN_{473963 + k}") + "\t" + "\t".join(f"{v:.3f}" for v in np.linspace(-1, 1, len(samples))))
            body.append(q(f"AFFX-SNP_{10000 + k}") + "\t" + "\t".join("AB" for _ in samples))
    if truncate_table:
        body = body[: len(body) // 2]
    text = "\n".join(lines + body + ([] if truncate_table else ["!series_matrix_table_end"])) + "\n"
    with gzip.open(path, "wt", compresslevel=1) as fh:
        fh.write(text)
    return path


def expected_selection(series: SynthSeries, n_snps: int, style: str, max_missing_rate=0.0):
    """Direct computation of the SNPs the parser should keep: (ids, minor-allele counts, MAF)."""
    called = ~series.missing
    n_called = called.sum(axis=1)
    b_count = np.where(called, series.B, 0).sum(axis=1)
    freq_b = b_count / (2 * n_called)
    # letters of allele A and B in this file; a 50/50 tie counts the later letter as minor (B for A/B calls)
    if style == "basepairs":
        a_letter, b_letter = series.alleles[:, 0], series.alleles[:, 1]
    else:
        a_letter, b_letter = np.full(len(series.ids), "A"), np.full(len(series.ids), "B")
    minor_is_b = (freq_b < 0.5) | ((freq_b == 0.5) & (b_letter > a_letter))
    maf = np.where(minor_is_b, b_count, 2 * n_called - b_count) / (2 * n_called)  # exact ratio: ties stay ties
    miss_rate = 1 - n_called / series.B.shape[1]
    eligible = np.flatnonzero(miss_rate <= max_missing_rate)
    order = eligible[np.lexsort((series.ids[eligible], -maf[eligible]))][:n_snps]
    g = np.where(minor_is_b[order, None], series.B[order], 2 - series.B[order]).astype(np.int8)
    return series.ids[order], g, maf[order]
