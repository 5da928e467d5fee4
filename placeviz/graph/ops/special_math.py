"""The error function and its complement for any array module (NumPy has neither; placeviz
needs no SciPy), as Cephes computes them (``ndtr.c``): rational approximations accurate to
float64's precision, evaluated in float64 and rounded to the op's dtype.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# erf(x) = x T(x²) / U(x²) for |x| < 1 (U's leading coefficient, 1, is left out).
_T = (
    9.60497373987051638749e0,
    9.00260197203842689217e1,
    2.23200534594684319226e3,
    7.00332514112805075473e3,
    5.55923013010394962768e4,
)
_U = (
    3.35617141647503099647e1,
    5.21357949780152679795e2,
    4.59432382970980127987e3,
    2.26290000613890934246e4,
    4.92673942608635921086e4,
)
# erfc(x) = exp(-x²) P(x) / Q(x) for 1 <= x < 8, and exp(-x²) R(x) / S(x) from 8 on.
_P = (
    2.46196981473530512524e-10,
    5.64189564831068821977e-1,
    7.46321056442269912687e0,
    4.86371970985681366614e1,
    1.96520832956077098242e2,
    5.26445194995477358631e2,
    9.34528527171957607540e2,
    1.02755188689515710272e3,
    5.57535335369399327526e2,
)
_Q = (
    1.32281951154744992508e1,
    8.67072140885989742329e1,
    3.54937778887819891062e2,
    9.75708501743205489753e2,
    1.82390916687909736289e3,
    2.24633760818710981792e3,
    1.65666309194161350182e3,
    5.57535340817727675546e2,
)
_R = (
    5.64189583547755073984e-1,
    1.27536670759978104416e0,
    5.01905042251180477414e0,
    6.16021097993053585195e0,
    7.40974269950448939160e0,
    2.97886665372100240670e0,
)
_S = (
    2.26052863220117276590e0,
    9.39603524938001434673e0,
    1.20489539808096656605e1,
    1.70814450747565897222e1,
    9.60896809063285878198e0,
    3.36907645100081516050e0,
)


def _polynomial(x: Any, coefficients: Sequence[float], monic: bool = False) -> Any:
    """Horner's rule, highest power first; ``monic`` puts a leading coefficient of 1 before."""
    total: Any = x + coefficients[0] if monic else coefficients[0]
    for c in coefficients[1:]:
        total = total * x + c
    return total


def _erf_small(xp: Any, x: Any) -> Any:
    """erf of |x| < 1 (any x, clipped there so that large ones overflow nothing)."""
    x = xp.clip(x, -1.0, 1.0)
    z = x * x
    return x * _polynomial(z, _T) / _polynomial(z, _U, monic=True)


def _erfc_large(xp: Any, x: Any) -> Any:
    """erfc of |x| >= 1 (any |x|, evaluated where it is accurate), mirrored for negative x."""
    a = xp.minimum(xp.abs(x), 30.0)  # erfc(30) is 0 in float64; larger would make inf / inf
    near = _polynomial(a, _P) / _polynomial(a, _Q, monic=True)
    far = _polynomial(a, _R) / _polynomial(a, _S, monic=True)
    y = xp.exp(-a * a) * xp.where(a < 8.0, near, far)
    return xp.where(x < 0, 2.0 - y, y)


def erf(xp: Any, x: Any) -> Any:
    """The error function of ``x`` in float64."""
    x = xp.asarray(x, dtype="float64")
    small = xp.abs(x) < 1.0
    return xp.where(small, _erf_small(xp, x), 1.0 - _erfc_large(xp, x))


def erfc(xp: Any, x: Any) -> Any:
    """1 - erf(x) in float64, without the cancellation of subtracting for large x."""
    x = xp.asarray(x, dtype="float64")
    small = xp.abs(x) < 1.0
    return xp.where(small, 1.0 - _erf_small(xp, x), _erfc_large(xp, x))
