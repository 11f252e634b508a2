"""Parse the series matrix, label the samples, keep the top SNPs by MAF as minor-allele counts; record the choices."""

import json

from dpcost.data import snp
from dpcost.scripting import run, write_json_atomic


def main(manifest_file, options, out_genotypes, out_snps, out_meta):
    manifest = json.loads(open(manifest_file).read())
    table, snps, meta = snp.prepare(manifest, **options)
    table.to_parquet(out_genotypes, index=False)
    snps.to_csv(out_snps, index=False, float_format="%.6g")
    write_json_atomic(out_meta, meta)


p = snakemake.params
options = dict(
    accession=p.accession,
    label_pattern=p.label_pattern,
    groups=dict(p.groups),
    n_snps=p.n_snps,
    max_missing_rate=p.max_missing_rate,
    tie_break=p.tie_break,
)
run(
    lambda: main(
        snakemake.input.manifest, options, snakemake.output.genotypes, snakemake.output.snps, snakemake.output.meta
    ),
    snakemake.log[0],
    "preprocess_snp",
)
