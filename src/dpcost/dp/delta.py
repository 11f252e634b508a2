"""Privacy parameters as users write them in the config: ε a number, δ a number or a formula in n."""

from __future__ import annotations

import ast
import functools
import math
import operator
from collections.abc import Callable

from ..errors import ConfigError, PrivacyError

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


def _compile(node: ast.AST, text: str) -> Callable[[float], float]:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        v = float(node.value)
        return lambda n: v
    if isinstance(node, ast.Name) and node.id == "n":
        return lambda n: float(n)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _compile(node.operand, text)
        return (lambda n: -inner(n)) if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        op, left, right = _BINOPS[type(node.op)], _compile(node.left, text), _compile(node.right, text)
        return lambda n: op(left(n), right(n))
    raise ConfigError(f"delta formula {text!r} may use only numbers, n, + - * / ^ and parentheses")


def parse_delta(delta: float | int | str) -> Callable[[int], float]:
    """Turn δ as configured into a function of the sample size n.

    ``delta`` is a number in (0, 1) or a formula in ``n`` such as ``"10/n^1.1"`` (the Cost of Privacy choice;
    ``^`` means power). The formula is parsed, never evaluated as Python.
    """
    if isinstance(delta, bool):
        raise ConfigError(f"delta must be a number or a formula in n, got {delta!r}")
    if isinstance(delta, (int, float)):
        value = float(delta)
        return lambda n: value
    if not isinstance(delta, str):
        raise ConfigError(f"delta must be a number or a formula in n, got {delta!r}")
    return _parse_formula(delta)


@functools.lru_cache(maxsize=256)  # a tuning job resolves the same formula for every fit (parsing is ~30 µs)
def _parse_formula(delta: str) -> Callable[[int], float]:
    try:
        tree = ast.parse(delta.strip().replace("^", "**"), mode="eval")
    except SyntaxError:
        raise ConfigError(f"delta formula {delta!r} does not parse (example: '10/n^1.1')") from None
    return _compile(tree.body, delta)


def resolve_delta(delta: float | int | str, n: int) -> float:
    """δ for sample size n, refused unless 0 < δ < 1."""
    try:
        value = parse_delta(delta)(n)
    except (ZeroDivisionError, OverflowError):
        raise PrivacyError(f"delta formula {delta!r} cannot be evaluated at n={n}") from None
    if not (math.isfinite(value) and 0 < value < 1):
        raise PrivacyError(f"delta={delta!r} gives {value!r} at n={n}; delta must lie strictly between 0 and 1")
    return value
