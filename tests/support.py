"""Shared test helpers: the real housing data from ../shared, archives in the real formats, a loopback HTTP server."""

from __future__ import annotations

import io
import os
import re
import socket
import sys
import tarfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DPCOST_SHARED", REPO.parent / "shared"))
HOUSING_PARQUET = SHARED / "data" / "california_housing" / "california_housing.parquet.brotli"

# Time-outs catch a hang, never a busy machine: CI's two cores are shared with other work, and on them a run of 279 s
# (the small configuration, quiet) passed the 600 s it had under a load of 18. Each is many times the slowest run
# measured (docs/performance.md, "Test suite"); a test that checks speed counts its work, not the clock.
RUN_TIMEOUT = 3600  # a Snakemake run, a Slurm install
QUICK_TIMEOUT = 900  # a dry run, a lint, a formatter: seconds on a quiet machine
CONTENT_SHA256 = "b8d40ce656d5c12e4da5119d5dcb268e2b4219bbed5592a219429e58021b4b69"


class NoFloatNoise:
    """A seeded Generator that refuses numpy's float samplers named in ``refuse``: a release that should come from the
    exact sampler (dpcost.dp.samplers) and goes back to numpy's float samplers fails the test that passes it."""

    def __init__(self, seed, refuse=("normal", "standard_normal", "laplace")):
        self._rng, self._refuse = np.random.default_rng(seed), tuple(refuse)

    def __getattr__(self, name):
        if name in self._refuse:
            raise AssertionError(f"rng.{name} drawn: a release went back to numpy's float samplers")
        return getattr(self._rng, name)


def free_port() -> int:
    """A loopback port nobody listens on (for a refused connection, or a daemon of our own)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def synthetic_regression(n: int = 20000, d: int = 5, seed: int = 0):
    """004 §5's regression design: x uniform on [−1/√d, 1/√d]^d, β uniform on the unit sphere, noise sd 0.1."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1 / np.sqrt(d), 1 / np.sqrt(d), size=(n, d))
    beta = rng.normal(size=d)
    beta /= np.linalg.norm(beta)
    return X, X @ beta + 0.1 * rng.normal(size=n), beta


def real_housing() -> pd.DataFrame:
    """The real 20,640 rows in canonical column order, rebuilt from scikit-learn's derived form (how, and why it is
    exact: docs/proofs.md, "The housing data: column orders and checksums")."""
    if not HOUSING_PARQUET.exists():
        pytest.skip(f"real housing data not found at {HOUSING_PARQUET} (set DPCOST_SHARED to the shared/ folder)")
    d = pd.read_parquet(HOUSING_PARQUET)
    households = np.round(d["Population"] / d["AveOccup"])
    return pd.DataFrame(
        {
            "value": np.round(d["MedHouseVal"] * 1e5).astype(np.int64),
            "income": d["MedInc"],
            "age": d["HouseAge"].round().astype(np.int64),
            "total_rooms": np.round(d["AveRooms"] * households).astype(np.int64),
            "total_bedrooms": np.round(d["AveBedrms"] * households).astype(np.int64),
            "population": d["Population"].round().astype(np.int64),
            "households": households.astype(np.int64),
            "latitude": d["Latitude"],
            "longitude": d["Longitude"],
        }
    )


def housing_block() -> dict:
    """The default configuration's housing block, laid over table_defaults as a run sees it."""
    import yaml

    from dpcost.run.config import with_defaults

    return with_defaults(yaml.safe_load((REPO / "config" / "config.yaml").read_text()))["housing"]


def housing_design() -> tuple[np.ndarray, np.ndarray, list[str], dict]:
    """(X, y, covariates, record) of the real housing data prepared as the workflow prepares it
    (:func:`dpcost.data.prepare.prepare` with the default block's preparation keys): the design every housing
    analysis reads."""
    from dpcost.data.prepare import prepare
    from dpcost.run.args import PREPARATION_KEYS

    block = housing_block()
    preparation = {k: block[k] for k in PREPARATION_KEYS if k in block}
    table, meta = prepare(
        real_housing(), preparation, name="housing", max_m=max(block["m"]), rng=np.random.default_rng(0)
    )
    names = meta["covariates"]
    return table[names].to_numpy(), table["y"].to_numpy(), names, meta


CADATA_PROSE = "\n".join(
    ["The file cadata.txt contains all the variables. Specifically, it contains median house value, median income,"]
    + [f"prose line {k} of the StatLib header (Pace and Barry, 1997)" for k in range(2, 28)]
)


def statlib_zip_bytes(df: pd.DataFrame) -> bytes:
    """houses.zip as StatLib lays it out: member cadata.txt, 27 lines of prose, whitespace-separated e-notation.

    The column orders here are written out from docs/proofs.md ("The housing data: column orders and checksums") on
    purpose, not imported from dpcost.housing: a wrong order in the package must make the parser tests fail, not
    build a matching wrong archive."""
    cols = [
        "value",
        "income",
        "age",
        "total_rooms",
        "total_bedrooms",
        "population",
        "households",
        "latitude",
        "longitude",
    ]
    lines = ["".join(f"{v:24.16e}" for v in row) for row in df[cols].to_numpy(dtype=float)]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("cadata.txt", CADATA_PROSE + "\n" + "\n".join(lines) + "\n")
    return buf.getvalue()


def figshare_tgz_bytes(df: pd.DataFrame) -> bytes:
    """cal_housing.tgz as scikit-learn's figshare mirror lays it out: CaliforniaHousing/cal_housing.data, CSV."""
    cols = [
        "longitude",
        "latitude",
        "age",
        "total_rooms",
        "total_bedrooms",
        "population",
        "households",
        "income",
        "value",
    ]
    text = "\n".join(",".join(f"{v:.6f}" for v in row) for row in df[cols].to_numpy(dtype=float)) + "\n"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = text.encode()
        info = tarfile.TarInfo("CaliforniaHousing/cal_housing.data")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Route:
    """What the server does for one path: a script of actions, the last one repeated.

    Actions: "ok"; "status:<code>" (e.g. status:500, status:429, status:404); "truncate" (announce the full
    length, send half, drop the connection); "html" (an HTML error page with status 200); "redirect:<path>" (302 to
    another route of the server, as figshare sends its files on to their storage).
    """

    def __init__(self, body: bytes, actions=("ok",), ranges: bool = True):
        self.body, self.actions, self.ranges = body, list(actions), ranges
        self.requests: list[str | None] = []  # Range header of each request

    def next_action(self) -> str:
        return self.actions.pop(0) if len(self.actions) > 1 else self.actions[0]


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # a client that hangs up mid-answer (a start-up check reads the headers of its 1-byte answer and closes) is
        # no error of the server's; anything else is printed as usual
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class LoopbackServer:
    """A real HTTP/1.1 server on 127.0.0.1 with Range support, for testing download code without the internet."""

    def __init__(self):
        self.routes: dict[str, Route] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                route = server.routes.get(self.path)
                if route is None:
                    return self._send(404, b"not found", "text/plain")
                rng = self.headers.get("Range")
                route.requests.append(rng)
                action = route.next_action()
                if action.startswith("status:"):
                    return self._send(int(action.split(":")[1]), b"error", "text/plain")
                if action.startswith("redirect:"):
                    return self._send(302, b"", "text/plain", {"Location": action.split(":", 1)[1]})
                if action == "html":
                    return self._send(200, b"<html><body>Service unavailable</body></html>", "text/html")
                body, status, extra = route.body, 200, {}
                span = re.fullmatch(r"bytes=(\d+)-(\d*)", rng or "")
                if span and route.ranges:  # "bytes=N-" (a resumed download) or "bytes=N-M" (a probe's first byte)
                    start = int(span.group(1))
                    end = min(int(span.group(2) or len(body) - 1), len(body) - 1)
                    if start >= len(body):
                        return self._send(416, b"", "text/plain")
                    extra["Content-Range"] = f"bytes {start}-{end}/{len(body)}"
                    body, status = body[start : end + 1], 206
                if action == "truncate":
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(body)))
                    for k, v in extra.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                return self._send(status, body, "application/octet-stream", extra)

            def _send(self, status, body, ctype, extra=None):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                if server.routes.get(self.path) and server.routes[self.path].ranges:
                    self.send_header("Accept-Ranges", "bytes")
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def add(self, path: str, body: bytes, actions=("ok",), ranges: bool = True) -> Route:
        self.routes[path] = Route(body, actions, ranges)
        return self.routes[path]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def recovery_errors(estimator, epsilons=(0.5, 8.0), n=20000, reps=20):
    """Mean ‖β̂ − β_OLS‖ of a private regression at each ε (δ = 10/n^1.1, tight) on one Gaussian design with
    noise sd 0.5, d = 3 — whose OLS sampling error 0.5·sqrt(d/n) ≈ 0.006 a good estimate at large ε stays inside."""
    from dpcost.dp.privacy import Privacy

    rng = np.random.default_rng(7)
    X = rng.normal(size=(n, 3))
    y = X @ np.array([0.5, -0.3, 0.2]) + 0.5 * rng.normal(size=n)
    b_ols = np.linalg.lstsq(X, y, rcond=None)[0]
    return {eps: np.mean([np.linalg.norm(estimator(X, y, privacy=Privacy(eps, 10 / n**1.1, "tight"),
                                                   rng=np.random.default_rng(r)) - b_ols) for r in range(reps)])
            for eps in epsilons}  # fmt: skip


def chi2_lumped(observed, probabilities) -> float:
    """Chi-square p-value of counts against probabilities (cells expecting fewer than 5 lumped into one)."""
    from scipy import stats

    observed = np.asarray(observed, dtype=float)
    expected = np.asarray(probabilities, dtype=float) / np.sum(probabilities) * observed.sum()
    keep = expected > 5
    obs, exp = observed[keep], expected[keep]
    if expected[~keep].sum() > 0:
        obs, exp = np.append(obs, observed[~keep].sum()), np.append(exp, expected[~keep].sum())
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


def alternating_pair(n: int, big: float = 1e6):
    """The audits' worst pair for clipped gradient or residual sums on one feature: n rows x = 1 and y = ±big
    alternating (n odd: their clipped terms cancel but for the first), and the neighbour with y₀ flipped to −big.
    Returns (X, y, y2)."""
    X = np.ones((n, 1))
    y = big * (-1.0) ** np.arange(n)
    y2 = y.copy()
    y2[0] = -big
    return X, y, y2


def pair_audit(fit, X, y, y2, *, n: int, seed: int, delta: float) -> float:
    """Clopper–Pearson lower bound on ε from the first coordinate of ``fit(X, y, rng)`` against ``fit(X, y2, rng)``,
    n draws a side, from the generators seed … seed + 2n − 1 (disjoint between the sides)."""
    from dpcost.dp.audit import epsilon_lower_bound

    a = np.array([fit(X, y, np.random.default_rng(seed + r))[0] for r in range(n)])
    b = np.array([fit(X, y2, np.random.default_rng(seed + n + r))[0] for r in range(n)])
    return epsilon_lower_bound(a, b, delta)


def legend_entries(fig) -> list[tuple[str, object]]:
    """(text, drawn handle) of every legend entry of a matplotlib figure, the figure's own legend and the panels',
    the text's wrapping undone."""
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    return [(" ".join(t.get_text().split()), h) for lg in legends
            for h, t in zip(lg.legend_handles, lg.get_texts(), strict=True)]  # fmt: skip
