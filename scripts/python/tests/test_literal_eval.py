"""ehrgym's ast.literal_eval (the v2 graders read FINISH answers with it, the expert reads tool replies)
against CPython's: the same repr() of the value, or a refusal. CPython parses the whole text before it
judges the nodes, so where the text is both ill-formed and not a literal the exception type may differ
(ehrgym stops at the first problem): a refusal must be a refusal, and the type is compared where the
text is a well-formed literal or plain Python syntax error alone. One documented difference: `...`
(Ellipsis) is a literal to CPython and a refusal to ehrgym, which has no Ellipsis value among its
literals (no grader or tool reply holds one)."""

from __future__ import annotations

import ast
import random
from typing import List, Tuple

from conftest import ROOT, ts_batch

BATCH = ROOT / "test" / "protocol" / "python-literal.ts"

CLASSIC = [
    "[1, 2]", "(1,)", "1, 2", "[0x1F, 1_000, .5, 5., 'a' 'b', -3]", "  [None, True, {'a': (1, 2)}]  # comment\n", "[NaN, 1]",
    "1 + 2", "1+2j", "-1-2j", "f'x'", "'\\x41\\101\\u00e9'", "b'\\xff'", "[1,\n2]", "1\n2", "[1]\n", "'a' b'b'", "{1: 2, 1.0: 3}",
    "{1, 2}", "set()", "set(1)", "a.b", "--1", "01", "[ -1, 81.2 ]", '["a"]', "r'\\n'", "'''x\ny'''", "\\\n1", "(1, 2,)", "{}", "[[]]",
    "[83.5, 79.0]", "['S6534835']", "[-1, -1]", "[None, 5.2]", "['2023-11-13T10:15:00+00:00', 5.9]", "[1e3, 1E-2, 0b101, 0o17]",
    "{'a': [1, {'b': None}]}", "[True, False, None]", "[1,]", "[,]", "[1 2]", "", "   ", "[", "]", "'unterminated", "[1] [2]",
    "-(1)", "-((2.5))", "-(1,)", "+1", "b'\\\\'", "b\"'\"", "b'\\t\\n\\r'", "-1.5e-3", "[1_0, 1__0]", "1j", "[float('nan')]", "{'k': 1, 'k': 2}", "((1, 2), [3])", "u'x'", "rb'\\x00'",
]


def cpython(text: str) -> Tuple[bool, str]:
    try:
        return True, repr(ast.literal_eval(text))
    except Exception as e:  # noqa: BLE001 - every exception is a refusal
        return False, type(e).__name__


def ehrgym(texts: List[str]) -> List[Tuple[bool, str]]:
    return [(a["ok"], a["value"] if a["ok"] else a["error"]) for a in ts_batch(BATCH, texts)]


def generated(n: int, seed: int = 20231113) -> List[str]:
    """Finish answers as models write them: lists of numbers, strings and None, some of them broken."""
    r = random.Random(seed)
    atoms = ["-1", "5.9", "83.5", "None", "'S6534835'", '"Patient not found"', "True", "0", "1e-3", "2023", "'2023-11-13T10:15:00+00:00'", "[]", "{}"]
    breakers = ["", "", "", "", ",", "x", "null", "NaN", "(", "]", "1 +", "..."]
    out = []
    for _ in range(n):
        items = ", ".join(r.choice(atoms) for _ in range(r.randint(0, 3)))
        text = r.choice(["[{}]", "({})", "{}", "[[{}]]"]).format(items)
        pos = r.randint(0, len(text))
        out.append(text[:pos] + r.choice(breakers) + text[pos:])
    return out


def test_literal_eval_agrees_with_cpython() -> None:
    texts = CLASSIC + generated(2000)
    mismatches = []
    for text, mine in zip(texts, ehrgym(texts)):
        theirs = cpython(text)
        if theirs[0] and "Ellipsis" in theirs[1]:
            assert not mine[0], (text, mine)
            continue
        if mine[0] != theirs[0] or (mine[0] and mine[1] != theirs[1]):
            mismatches.append((text, theirs, mine))
    assert not mismatches, mismatches[:10]
