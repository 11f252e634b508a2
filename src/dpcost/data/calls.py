"""Genotype calls of a GEO series matrix: a cell's text to its two allele codes, one cell (:func:`decode_token`) or a
batch of them (:func:`decode_cells`). Every coding GEO uses for SNP 6.0 calls is accepted: AA/AB/BA/BB, NoCall /
No Call / NC, base pairs with NN or -- for no call, numeric -1/0/1/2, empty / null / NA."""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ALLELES = "ABCGT"  # allele codes 0..4: Affymetrix A/B calls and nucleotide calls share one alphabet
MISSING_TOKENS = {"", "null", "na", "nan", "nocall", "no call", "nc", "nn", "--", "-1", "n/a", "---"}


def decode_token(token: str) -> tuple[int, int] | None:
    """(allele1, allele2) codes of one genotype call, (−1, −1) for no call, None if it is not a genotype call."""
    t = token.strip().strip('"')
    low = t.lower()
    if low in MISSING_TOKENS:
        return (-1, -1)
    if t in ("0", "1", "2"):  # numeric calls count the B allele: 0 = AA, 1 = AB, 2 = BB
        return {"0": (0, 0), "1": (0, 1), "2": (1, 1)}[t]
    if len(t) == 2 and t[0] in ALLELES and t[1] in ALLELES:
        return (ALLELES.index(t[0]), ALLELES.index(t[1]))
    return None


@functools.cache
def two_byte_calls() -> np.ndarray:
    """(65536,) int16: the allele codes (:func:`decode_token`) of every two-byte cell as an (a1, a2) pair of int8
    (:func:`_pairs`), indexed by its bytes read as a little-endian uint16; −2 where the cell is not a call (or not
    UTF-8). Most cells of a SNP 6.0 matrix are two bytes (AA, AB, BB): these are decoded by one lookup each."""
    lut = np.full((1 << 16, 2), -2, dtype=np.int8)
    for key in range(1 << 16):
        try:
            call = decode_token(bytes((key & 0xFF, key >> 8)).decode("utf-8"))
        except UnicodeDecodeError:
            continue
        if call is not None:
            lut[key] = call
    return _pairs(lut)


def _pairs(codes: np.ndarray) -> np.ndarray:
    """(k, 2) int8 (a1, a2) codes as k int16, one lookup for both."""
    return np.ascontiguousarray(codes, dtype=np.int8).view(np.int16).ravel()


def decode_cells(cells: pa.Array, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(a1, a2), each (samples, n_rows) int8 (a row per sample), −2 for a cell that is not a call, of ``cells``: a
    batch's sample columns concatenated (a string array of n_rows · samples cells). Two-byte cells by
    :func:`two_byte_calls`; the others (no-call words, quoted or numeric calls) by :func:`decode_token` on each
    distinct one: decode_token's codes for every cell, without the CSV reader's dictionary encoding of every column
    (the parse of a full-size matrix, 906,600 rows × 387 samples: 15.2 → 11.9 s)."""
    offsets = np.frombuffer(cells.buffers()[1], dtype=np.int32)[cells.offset : cells.offset + len(cells) + 1]
    buf = cells.buffers()[2]
    # two spare bytes: a cell shorter than two bytes at the end reads them (its code is replaced below)
    data = np.zeros((0 if buf is None else buf.size) + 2, dtype=np.uint8)
    if buf is not None:
        data[:-2] = np.frombuffer(buf, dtype=np.uint8)
    # the two bytes at every position, as one little-endian uint16 (a view, not a copy)
    pairs_at = np.ndarray((data.size - 1,), dtype="<u2", buffer=data, strides=(1,))
    codes = two_byte_calls()[pairs_at[offsets[:-1]]]
    other = np.flatnonzero(np.diff(offsets) != 2)
    if other.size:
        enc = pc.dictionary_encode(cells.take(pa.array(other)))
        words = [decode_token(tok) or (-2, -2) for tok in enc.dictionary.to_pylist()]
        codes[other] = _pairs(np.array(words).reshape(-1, 2))[enc.indices.to_numpy()]
    both = codes.view(np.int8).reshape(len(cells) // n_rows, n_rows, 2)
    return both[..., 0], both[..., 1]
