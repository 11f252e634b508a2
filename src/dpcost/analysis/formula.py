"""Public constants written as formulas of public quantities, e.g. ``"4*sigma*sqrt(log(n))"`` or ``"1/L"``.

Variables n, d, s, sigma, p (the BTL comparison probability) and alpha (the Sobolev smoothness) of the simulation
study; m (public rows) and L (their curvature ‖X̃‖²_op/m) of the knowledge-transfer study; functions log, sqrt,
ceil, floor; numbers, + - * / ^ and parentheses. Parsed, never evaluated as Python; a bad formula is a
:class:`ConfigError` naming it.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Mapping

from ..errors import ConfigError

_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_FUNCS = {"log": math.log, "sqrt": math.sqrt, "ceil": math.ceil, "floor": math.floor}
VARIABLES = ("n", "d", "s", "sigma", "p", "alpha", "m", "L")


def _eval(node: ast.AST, env: Mapping[str, float], text: str) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name) and node.id in VARIABLES:
        if node.id not in env:
            raise ConfigError(f"formula {text!r}: {node.id} is not defined here")
        return env[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, env, text)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left, env, text), _eval(node.right, env, text))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and len(node.args) == 1
    ):
        return _FUNCS[node.func.id](_eval(node.args[0], env, text))
    raise ConfigError(
        f"formula {text!r} may use only numbers, {', '.join(VARIABLES)}, {', '.join(_FUNCS)}, + - * / ^ and parentheses"
    )


def evaluate(value, **env: float) -> float:
    """A number as it is (as float); a formula evaluated at ``env``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(f"expected a number or a formula, got {value!r}")
    if not isinstance(value, str):
        return float(value)
    try:
        tree = ast.parse(value.replace("^", "**"), mode="eval")
    except SyntaxError:
        raise ConfigError(f"formula {value!r} does not parse") from None
    try:
        return float(_eval(tree.body, env, value))
    except (ValueError, ZeroDivisionError, OverflowError) as exc:
        raise ConfigError(f"formula {value!r} cannot be evaluated at {dict(env)}: {exc}") from None


def evaluate_int(value, **env: float) -> int:
    """As :func:`evaluate`, for a count: the value must be a whole number ≥ 1."""
    out = evaluate(value, **env)
    if not (out.is_integer() and out >= 1):
        raise ConfigError(f"{value!r} at {dict(env)} gives {out}; expected a whole number >= 1 (use ceil(...))")
    return int(out)
