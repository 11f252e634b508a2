"""The SNP analysis's data preparation on a synthetic series matrix in the real layout, split into two parts."""

import hashlib

import numpy as np
import pytest

from dpcost.data import snp
from dpcost.errors import DataError

from geo_synth import expected_selection, make_series, write_series_matrix

SERIES = make_series(n_snps=300, missing_rate=0.003, seed=11)
KW = dict(
    accession="GSE106818",
    label_pattern=r"(low|average)\s*IQ",
    groups={"average": 24, "low": 16},
    n_snps=40,
    max_missing_rate=0.0,
    tie_break="id",
)


def _manifest(tmp_path, style="ab"):
    parts = [
        write_series_matrix(tmp_path / "GSE106818-GPL6801_series_matrix-1.txt.gz", SERIES, style, columns=slice(0, 17)),
        write_series_matrix(
            tmp_path / "GSE106818-GPL6801_series_matrix-2.txt.gz", SERIES, style, columns=slice(17, None)
        ),
    ]
    return {
        "files": [
            {
                "name": p.name,
                "path": str(p),
                "url": f"https://ftp.ncbi.nlm.nih.gov/geo/series/GSE106nnn/GSE106818/matrix/{p.name}",
                "bytes": p.stat().st_size,
                "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
                "retrieved": "2026-01-01T00:00:00+00:00",
            }
            for p in parts
        ]
    }


@pytest.mark.parametrize("style", ["ab", "basepairs"])
def test_table_snps_and_truth(tmp_path, style):
    manifest = _manifest(tmp_path, style)
    table, snps, meta = snp.prepare(manifest, **KW)
    ids, g, maf = expected_selection(SERIES, 40, style, 0.0)
    assert list(table.columns) == ["sample", "group", *ids]
    assert table["sample"].tolist() == SERIES.samples  # the parts joined in order
    assert table["group"].tolist() == [lab.split()[0] for lab in SERIES.labels]
    assert np.array_equal(table[ids].to_numpy().T, g)  # minor-allele counts; no no-calls at max_missing_rate 0
    assert snps["snp"].tolist() == ids.tolist() and np.array_equal(snps["maf"].to_numpy(), maf)
    assert snps["rank"].tolist() == list(range(1, 41)) and (snps["missing_rate"] == 0).all()
    # the estimand of §6.1: mean of the average group minus mean of the low group, over all samples
    average = np.array([lab.startswith("average") for lab in SERIES.labels])
    mu = g[:, average].mean(axis=1) - g[:, ~average].mean(axis=1)
    assert list(meta["truth"]) == ids.tolist()
    assert np.allclose(list(meta["truth"].values()), mu, rtol=0, atol=1e-12)
    from_table = (
        table.loc[table.group == "average", ids].mean() - table.loc[table.group == "low", ids].mean()
    ).to_numpy()
    assert np.allclose(list(meta["truth"].values()), from_table, rtol=0, atol=1e-12)
    assert meta["groups"] == {"average": 24, "low": 16} and meta["difference"] == "average minus low"
    assert meta["n_snps"] == 40 and meta["accession"] == "GSE106818"
    assert meta["files"] == [
        {k: f[k] for k in ("name", "url", "bytes", "sha256", "retrieved")} for f in manifest["files"]
    ]
    assert meta["private"] is False and meta["privacy_note"].startswith("NOT PRIVATE")


def test_wrong_group_counts_are_refused(tmp_path):
    with pytest.raises(DataError, match="differ from the expected"):
        snp.prepare(_manifest(tmp_path), **{**KW, "groups": {"average": 241, "low": 146}})
