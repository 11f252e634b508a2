"""The GEO series-matrix parser on synthetic files in the real layout, in every genotype coding."""

import gzip
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcost.data import calls, geo
from dpcost.errors import DataError, DownloadError

from geo_synth import STYLES, expected_selection, make_series, tokens, write_series_matrix

SERIES = make_series(n_snps=300, missing_rate=0.003, seed=11)


def _select(paths, n=60, **kw):
    headers = [geo.read_header(p) for p in paths]
    return geo.select_snps(geo.iter_joined(headers, block_size=1 << 14), n_snps=n, **kw)


def test_listing_finds_every_matrix_file_in_part_order():
    html = "".join(
        f'<a href="{n}">{n}</a> 2017-11-20 12:00 105M\n'
        for n in [
            "GSE106818-GPL6801_series_matrix-10.txt.gz",
            "GSE106818_family.soft.gz",
            "GSE106818-GPL6801_series_matrix-2.txt.gz",
            "GSE106818-GPL6801_series_matrix-1.txt.gz",
            "GSE1068180_series_matrix.txt.gz",
        ]
    )
    assert geo.list_matrix_files(html, "GSE106818") == [
        "GSE106818-GPL6801_series_matrix-1.txt.gz",
        "GSE106818-GPL6801_series_matrix-2.txt.gz",
        "GSE106818-GPL6801_series_matrix-10.txt.gz",
    ]
    assert geo.list_matrix_files('<a href="GSE106818_series_matrix.txt.gz">x</a>', "GSE106818") == [
        "GSE106818_series_matrix.txt.gz"
    ]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("max_missing", [0.0, 0.05])
def test_every_token_style_equals_a_direct_computation(tmp_path, style, max_missing):
    path = write_series_matrix(tmp_path / "m.txt.gz", SERIES, style)
    sel = _select([path], max_missing_rate=max_missing)
    ids, g, maf = expected_selection(SERIES, 60, style, max_missing)
    assert np.array_equal(sel.ids, ids)
    assert np.array_equal(sel.maf, maf)
    rows = np.searchsorted(SERIES.ids, ids)
    called = ~SERIES.missing[rows]
    assert np.array_equal(sel.genotypes[called], g[called])
    assert set(np.unique(sel.genotypes)) <= {0, 1, 2}
    assert sel.stats["rows"] == len(SERIES.ids)  # CN_* and AFFX-* rows dropped


# Every cell the parser may meet in a genotype matrix: calls in each coding (letter pairs of the whole alphabet,
# numeric), each no-call word in its cases, and the same quoted or padded with spaces
WORDS = ([a + b for a in calls.ALLELES for b in calls.ALLELES] + ["0", "1", "2", "-1", "NoCall", "NOCALL", "No Call",
         "NC", "nc", "NN", "--", "---", "", "null", "NA", "nan", "N/A"])  # fmt: skip
CELLS = st.sampled_from(WORDS).flatmap(lambda w: st.sampled_from([w, f'"{w}"', f" {w}", f"{w} "]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 40).flatmap(lambda k: st.lists(st.lists(CELLS, min_size=5, max_size=5), min_size=k,
                                                     max_size=k)))  # fmt: skip
def test_every_cell_is_decoded_as_decode_token_decodes_it(rows):
    """The parser decodes a batch's cells by a lookup of their bytes (two-byte cells) and by decode_token on each
    distinct other one; whatever the mix, batch boundaries included, every cell gets decode_token's codes."""
    cells = np.array(rows, dtype=object)
    series = make_series(n_snps=len(rows), n_average=3, n_low=2, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_series_matrix(Path(tmp) / "m.txt.gz", series, values=cells)
        blocks = list(geo.iter_blocks(geo.read_header(path), block_size=1 << 10))
    expected = np.array([[calls.decode_token(c) for c in row] for row in rows], dtype=np.int8)
    assert np.array_equal(np.concatenate([b.ids for b in blocks]), series.ids)
    assert np.array_equal(np.vstack([b.a1 for b in blocks]), expected[..., 0])
    assert np.array_equal(np.vstack([b.a2 for b in blocks]), expected[..., 1])


def test_no_calls_in_kept_snps_take_the_mode(tmp_path):
    path = write_series_matrix(tmp_path / "m.txt.gz", SERIES, "ab")
    sel = _select([path], max_missing_rate=0.05)
    rows = np.searchsorted(SERIES.ids, sel.ids)
    miss = SERIES.missing[rows]
    assert miss.any()
    for r, c in zip(*np.nonzero(miss), strict=True):
        values, counts = np.unique(sel.genotypes[r, ~miss[r]], return_counts=True)
        assert sel.genotypes[r, c] == values[np.argmax(counts)]


def test_split_parts_join_to_the_single_file_result(tmp_path):
    whole = _select([write_series_matrix(tmp_path / "all.txt.gz", SERIES, "numeric")])
    parts = [
        write_series_matrix(tmp_path / "p1.txt.gz", SERIES, "numeric", columns=slice(0, 17)),
        write_series_matrix(tmp_path / "p2.txt.gz", SERIES, "numeric", columns=slice(17, None)),
    ]
    joined = _select(parts)
    assert np.array_equal(joined.ids, whole.ids) and np.array_equal(joined.genotypes, whole.genotypes)


def test_parts_sharing_samples_or_disagreeing_rows_are_refused(tmp_path):
    a = write_series_matrix(tmp_path / "a.txt.gz", SERIES, "ab", columns=slice(0, 20))
    b = write_series_matrix(tmp_path / "b.txt.gz", SERIES, "ab", columns=slice(10, None))
    with pytest.raises(DataError, match="share samples"):
        _select([a, b])
    shuffled = make_series(n_snps=300, missing_rate=0.003, seed=11)
    shuffled.ids = shuffled.ids[::-1].copy()
    c = write_series_matrix(tmp_path / "c.txt.gz", shuffled, "ab", columns=slice(20, None))
    with pytest.raises(DataError, match="same probes in the same order"):
        _select([a, c])


def test_copy_number_file_is_refused_with_examples(tmp_path):
    values = np.round(np.random.default_rng(0).normal(size=SERIES.B.shape), 3).astype(str).astype(object)
    path = write_series_matrix(tmp_path / "cn.txt.gz", SERIES, values=values)
    with pytest.raises(DataError, match=r"GSE106818 matrix holds no genotype calls: values such as \['-"):
        geo.select_snps(geo.iter_blocks(geo.read_header(path), accession="GSE106818"), n_snps=10)


def test_a_third_allele_makes_a_snp_ineligible(tmp_path):
    tok = tokens(SERIES, "basepairs")
    other = sorted(set("ACGT") - set(SERIES.alleles[0]))[0]
    tok[0, 0] = other + other
    path = write_series_matrix(tmp_path / "m.txt.gz", SERIES, values=tok)
    sel = _select([path], max_missing_rate=1.0)
    assert sel.stats["more_than_two_alleles"] == 1 and SERIES.ids[0] not in sel.ids


def test_tie_break_options(tmp_path):
    path = write_series_matrix(tmp_path / "m.txt.gz", SERIES, "ab")
    by_id, by_order = _select([path]), _select([path], tie_break="file_order")
    assert np.array_equal(by_id.maf, by_order.maf)  # same MAFs kept …
    ties = by_id.maf[:-1] == by_id.maf[1:]
    assert ties.any() and (by_id.ids[:-1][ties] < by_id.ids[1:][ties]).all()  # … ordered by id within a tie
    with pytest.raises(DataError, match="tie_break"):
        _select([path], tie_break="random")


def test_labels_and_their_counts(tmp_path):
    h = geo.read_header(write_series_matrix(tmp_path / "m.txt.gz", SERIES, "ab"))
    labels, where = geo.find_labels([h])
    assert where.startswith("!Sample_characteristics_ch1") and list(labels) == [x.split()[0] for x in SERIES.labels]
    geo.check_groups(labels, {"average": 24, "low": 16})
    with pytest.raises(DataError, match=r"label counts \{'average': 24, 'low': 16\} differ from the expected"):
        geo.check_groups(labels, {"average": 241, "low": 146})
    h2 = geo.read_header(write_series_matrix(tmp_path / "t.txt.gz", SERIES, "ab", label_key="!Sample_title"))
    assert geo.find_labels([h2])[1].startswith("!Sample_title")
    h3 = geo.read_header(write_series_matrix(tmp_path / "n.txt.gz", SERIES, "ab", label_key="none"))
    with pytest.raises(DataError, match="no sample line has a label"):
        geo.find_labels([h3])


def test_damaged_files_fail_clearly(tmp_path):
    good = write_series_matrix(tmp_path / "m.txt.gz", SERIES, "ab")
    assert geo.check_gzip(good) > 0
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(DataError, match="truncated"):
        geo.check_gzip(cut)
    html = tmp_path / "page.txt.gz"
    html.write_bytes(b"<html>404 Not Found</html>")
    with pytest.raises(DataError, match="not a valid gzip"):
        geo.check_gzip(html)
    with pytest.raises(DataError, match="cannot read gzip text"):
        geo.read_header(html)
    no_end = write_series_matrix(tmp_path / "noend.txt.gz", SERIES, "ab", truncate_table=True)
    with pytest.raises(DataError, match="no !series_matrix_table_end line: the file is truncated"):
        _select([no_end], n=5)
    plain = tmp_path / "plain.txt.gz"
    with gzip.open(plain, "wt") as fh:
        fh.write('!Series_title\t"x"\n')
    with pytest.raises(DataError, match="not a series-matrix file"):
        geo.read_header(plain)


def test_too_few_eligible_snps_is_said(tmp_path):
    path = write_series_matrix(tmp_path / "m.txt.gz", SERIES, "ab")
    with pytest.raises(DataError, match="SNPs are eligible"):
        _select([path], n=10_000)


def test_parts_placed_by_hand_are_used_without_the_network(tmp_path):
    manual = tmp_path / "manual"
    manual.mkdir()
    for k, cols in ((1, slice(0, 20)), (2, slice(20, None))):
        write_series_matrix(manual / f"GSE106818-GPL6801_series_matrix-{k}.txt.gz", SERIES, "ab", columns=cols)
    (manual / "notes.txt").write_text("from a colleague's disk")
    # the URL cannot resolve: a manifest here proves nothing was fetched
    url = "http://no-such-host.invalid/geo/series/GSE106nnn/GSE106818/matrix/"
    manifest = geo.fetch_series_matrices(url, "GSE106818", tmp_path / "dl", manual, max_tries=1)
    assert [f["name"] for f in manifest["files"]] == [f"GSE106818-GPL6801_series_matrix-{k}.txt.gz" for k in (1, 2)]
    assert all(f["retrieved"] == "placed by hand" and f["text_bytes"] > 0 for f in manifest["files"])
    assert not (tmp_path / "dl").exists()
    cut = manual / "GSE106818-GPL6801_series_matrix-2.txt.gz"
    cut.write_bytes(cut.read_bytes()[:200])
    with pytest.raises(DataError, match="truncated"):
        geo.fetch_series_matrices(url, "GSE106818", tmp_path / "dl", manual, max_tries=1)
    assert cut.exists()  # a user's file is never deleted


def test_no_network_says_where_to_place_the_parts_and_how_to_run_without_them(tmp_path):
    url = "http://no-such-host.invalid/geo/series/GSE106nnn/GSE106818/matrix/"
    with pytest.raises(DownloadError) as info:
        geo.fetch_series_matrices(url, "GSE106818", tmp_path / "dl", tmp_path / "manual", max_tries=5, backoff=30.0)
    msg = str(info.value)  # and fast: an unresolvable name is not retried with 30 s back-off
    assert "does not resolve" in msg and f"in {tmp_path / 'manual'}/" in msg
    assert "leave the SNP analyses (snp, snp_logistic) out of `datasets`" in msg
    assert "housing" not in msg  # its advice stays with the SNP data: it no longer sends the user to housing and back
    assert "\n" not in msg
