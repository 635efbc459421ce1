"""ehrgym's reading of pydantic's lax mode (env/python/pydantic.ts) against pydantic itself: the original
V2 tools validate `json.loads(arguments)` with pydantic models, so a float field and a str field must
accept, refuse and coerce exactly what pydantic does, on hand-picked and generated JSON values."""

from __future__ import annotations

import math
import random
from typing import Any, Dict, List

from conftest import ROOT, ts_batch

BATCH = ROOT / "test" / "protocol" / "python-pydantic.ts"

CLASSIC: List[Any] = [
    2, 1.5, True, False, None, "2", " 12 ", "1_0", "1_0.5_0", "+1.5", "-0", "1e3", "1E-2", ".5", "5.", "inf", "-Infinity", "NaN", "nan",
    "", " ", "_1", "1_", "1__0", " 1_0", "1_0 ", "0x10", "1,5", "1.5.2", "one", "١٢", "1e", "e3", "--1", "+-1", [], [1], {}, {"a": 1},
    "1_000_000", "\t3\n", "1 2", "Infinity", "infinity ", "+inf", "-nan", "1e400", "1e-400", 0, -0.0, 10**20,
]


def generated(n: int, seed: int = 20231113) -> List[Any]:
    r = random.Random(seed)
    pieces = ["1", "0", "9", "_", ".", "e", "E", "+", "-", " ", "\t", "inf", "nan", "x", "5"]
    return ["".join(r.choice(pieces) for _ in range(r.randint(1, 6))) for _ in range(n)]


def ehrgym(values: List[Any]) -> List[Dict[str, Any]]:
    return ts_batch(BATCH, values)


def pydantic_answer(value: Any) -> Dict[str, Any]:
    from pydantic import TypeAdapter, ValidationError

    try:
        f = TypeAdapter(float).validate_python(value)
        as_float: Any = f if math.isfinite(f) else {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}[str(f)]
    except ValidationError:
        as_float = None
    try:
        TypeAdapter(str).validate_python(value)
        as_str = True
    except ValidationError:
        as_str = False
    return {"float": as_float, "str": as_str}


def test_lax_float_and_str_agree_with_pydantic() -> None:
    values = CLASSIC + generated(3000)
    mismatches = [(v, pydantic_answer(v), mine) for v, mine in zip(values, ehrgym(values)) if pydantic_answer(v) != mine]
    assert not mismatches, mismatches[:10]
