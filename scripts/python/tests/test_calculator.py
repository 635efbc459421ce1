"""The calculator against CPython: every expression is evaluated by CPython's eval() with the original V2
calculator's globals (math, datetime, Decimal, sum) and by ehrgym (one Node batch), and the answers
must agree: str() of the result, or the Python exception's type. A seeded grammar makes the corpus
(valid and invalid expressions); a hand-written table holds the classic cases. Where ehrgym differs
on purpose (its safety bounds, its reach), the generator stays away and test_documented_differences
asserts the difference."""

from __future__ import annotations

import datetime
import decimal
import functools
import json
import math
import os
import random
import subprocess
import warnings
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[3]
BATCH = ROOT / "test" / "protocol" / "python-calculator.ts"
CORPUS_SIZE = 12_000
SEED = 20231113


@functools.lru_cache(maxsize=None)
def cpython(expression: str) -> Tuple[bool, str]:
    """(True, str(result)) or (False, exception type name), as the original calculator sees it."""
    env = {"__builtins__": {"sum": sum}, "math": math, "datetime": datetime, "Decimal": decimal.Decimal}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return True, str(eval(expression, env, {}))
    except BaseException as e:  # noqa: BLE001 - every exception ends the original's run
        return False, type(e).__name__


def ehrgym(expressions: List[str]) -> List[Tuple[bool, str]]:
    """ehrgym's answers for all expressions, from one Node child."""
    node = os.environ.get("EHRGYM_NODE", "node")
    data = "".join(json.dumps(e) + "\n" for e in expressions)
    out = subprocess.run([node, "--import", "tsx", str(BATCH)], cwd=ROOT, input=data, capture_output=True, text=True,
                         env={**os.environ, "TZ": "UTC"})
    assert out.returncode == 0, out.stderr
    answers = [json.loads(line) for line in out.stdout.splitlines() if line]
    assert len(answers) == len(expressions)
    return [(a["ok"], a["value"] if a["ok"] else a["error"]) for a in answers]


# ---- the grammar ----


class Gen:
    """Random expressions by type; `bad` mixes in the ill-typed and ill-formed ones."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)

    def pick(self, *options: Callable[[], str]) -> str:
        return self.r.choice(options)()

    # numbers

    def int_lit(self) -> str:
        r = self.r
        k = r.random()
        if k < 0.45:
            return str(r.randint(0, 100))
        if k < 0.6:
            return str(r.randint(0, 10 ** r.randint(3, 40)))
        if k < 0.7:
            n = r.randint(1000, 10 ** 9)
            return f"{n:_}"
        if k < 0.78:
            return r.choice([hex, oct, bin])(r.randint(0, 5000))
        if k < 0.85:
            return r.choice(["True", "False"])
        return str(r.randint(0, 9))

    def float_lit(self) -> str:
        r = self.r
        k = r.random()
        if k < 0.3:
            return f"{r.randint(0, 999)}.{r.randint(0, 99)}"
        if k < 0.45:
            return repr(round(r.uniform(-1000, 1000), r.randint(0, 6)))
        if k < 0.55:
            return f"{r.randint(1, 9)}e{r.randint(-320, 310)}"
        if k < 0.65:
            return r.choice([".5", "1.", "0.1", "0.2", "0.3", "1e-7", "1_000.5", "2.5e-3", "1e16", "9007199254740993.0", "0.0", "1e308", "5e-324"])
        if k < 0.75:
            return repr(r.uniform(0, 1))
        if k < 0.85:
            return r.choice(["math.pi", "math.e", "math.tau", "math.inf", "math.nan", "-math.inf"])
        return repr(r.uniform(-1e6, 1e6))

    def num(self, depth: int) -> str:
        r = self.r
        if depth <= 0 or r.random() < 0.3:
            return self.int_lit() if r.random() < 0.55 else self.float_lit()
        k = r.random()
        if k < 0.5:
            op = r.choice(["+", "-", "*", "/", "//", "%", "+", "-", "*", "/"])
            return f"({self.num(depth - 1)} {op} {self.num(depth - 1)})"
        if k < 0.6:
            return f"{r.choice(['-', '+', '-', 'not ', '~'])}{self.num(depth - 1)}"
        if k < 0.7:
            base = r.choice([self.int_lit(), self.float_lit(), str(r.randint(-20, 20)), f"({self.num(depth - 1)})"])
            exp = r.choice([str(r.randint(-4, 60)), str(r.randint(0, 3)), f"{r.randint(0, 4)}.5", f"-{r.randint(1, 3)}", "0.5"])
            ok, value = cpython(base)
            if "." in exp and (not ok or value.startswith("-") or "j" in value):
                base = str(r.randint(0, 99))  # a negative base to a fractional power is complex (not supported)
            return f"({base} ** {exp})"
        if k < 0.85:
            return self.math_call(depth - 1)
        if k < 0.9:
            return f"({self.num(depth - 1)} {r.choice(['<', '<=', '==', '!=', '>', '>='])} {self.num(depth - 1)})"
        if k < 0.95:
            return f"({self.num(depth - 1)} if {self.num(depth - 1)} else {self.num(depth - 1)})"
        return f"({self.int_lit()} {r.choice(['&', '|', '^', '<<', '>>'])} {r.randint(0, 70)})"

    def math_call(self, depth: int) -> str:
        r = self.r
        # Not here: cbrt, expm1, log1p and the hyperbolic functions, where glibc is not correctly rounded
        # and ehrgym is (they may differ in the last digit; see test_documented_differences).
        one = ["sqrt", "floor", "ceil", "trunc", "fabs", "isfinite", "isinf", "isnan", "degrees", "radians", "log2", "log10",
               "exp", "log", "sin", "cos", "tan", "atan", "asin", "acos", "exp2"]
        k = r.random()
        if k < 0.6:
            f = r.choice(one)
            return f"math.{f}({self.num(depth)})"
        if k < 0.7:
            f = r.choice(["pow", "atan2", "copysign", "fmod", "hypot", "log", "remainder", "isclose", "ldexp"])
            if f == "ldexp":
                return f"math.ldexp({self.num(depth)}, {r.randint(-1100, 1100)})"
            return f"math.{f}({self.num(depth)}, {self.num(depth)})"
        if k < 0.8:
            f = r.choice(["factorial", "isqrt", "gcd", "lcm", "comb", "perm"])
            a = r.randint(-3, 60)
            if f in ("gcd", "lcm", "comb", "perm"):
                return f"math.{f}({a}, {r.randint(-2, 40)})"
            return f"math.{f}({r.choice([str(a), str(r.randint(0, 10 ** 30)), '5.0'])})"
        if k < 0.9:
            xs = ", ".join(self.num(0) for _ in range(r.randint(0, 5)))
            return f"math.{r.choice(['fsum', 'prod', 'fsum'])}([{xs}])"
        return f"math.{r.choice(['modf', 'frexp', 'ulp', 'nextafter'])}({self.num(depth)}{', 0.0' if r.random() < 0.3 else ''})"

    # Decimal

    def dec_lit(self) -> str:
        r = self.r
        k = r.random()
        if k < 0.5:
            digits = str(r.randint(0, 10 ** r.randint(1, 35)))
            point = r.randint(0, len(digits))
            s = digits[:point] + ("." + digits[point:] if point < len(digits) else "")
            if r.random() < 0.2:
                s += f"E{r.randint(-30, 30)}"
            if r.random() < 0.3:
                s = "-" + s
            return f"Decimal('{s}')"
        if k < 0.65:
            return f"Decimal({r.randint(-10 ** 6, 10 ** 6)})"
        if k < 0.75:
            return f"Decimal({self.float_lit()})"
        if k < 0.8:
            return f"Decimal('{r.choice(['NaN', 'Infinity', '-Infinity', '-0', '0.00', '1e-7', '1_000', ' 2.50 ', 'abc', '1e999999', '1.', '.5'])}')"
        return f"Decimal('{r.randint(0, 999)}.{r.randint(0, 99):02d}')"

    def dec(self, depth: int) -> str:
        r = self.r
        if depth <= 0 or r.random() < 0.35:
            return self.dec_lit()
        k = r.random()
        if k < 0.55:
            op = r.choice(["+", "-", "*", "/", "//", "%", "/", "*"])
            other = self.dec(depth - 1) if r.random() < 0.7 else r.choice([self.int_lit(), self.float_lit()])
            a, b = (self.dec(depth - 1), other) if r.random() < 0.7 else (other, self.dec(depth - 1))
            return f"({a} {op} {b})"
        if k < 0.65:
            exp = r.choice([str(r.randint(-5, 12)), "Decimal('0.5')", "Decimal('1.5')", "2"])
            return f"({self.dec(depth - 1)} ** {exp})"
        if k < 0.8:
            q = r.choice(["Decimal('0.01')", "Decimal('1')", "Decimal('0.1')", "Decimal('1E+1')", "Decimal('0.001')"])
            rnd = r.choice(["", ", rounding='ROUND_HALF_UP'", ", rounding='ROUND_DOWN'", ", rounding='ROUND_CEILING'", ", rounding='ROUND_FLOOR'", ", rounding='ROUND_HALF_DOWN'", ", rounding='ROUND_UP'"])
            return f"{self.dec(depth - 1)}.quantize({q}{rnd})"
        if k < 0.9:
            m = r.choice(["sqrt()", "normalize()", "to_integral_value()", "adjusted()", "is_zero()", "is_signed()", "copy_abs()", "copy_negate()", "as_tuple()", "exp()", "ln()", "log10()", "as_integer_ratio()"])
            return f"{self.dec(depth - 1)}.{m}"
        if k < 0.95:
            return f"({self.dec(depth - 1)} {r.choice(['<', '==', '>=', '!='])} {r.choice([self.dec(0), self.int_lit(), self.float_lit()])})"
        inner = self.dec(depth - 1)
        if "999999" in inner:
            inner = self.dec_lit().replace("999999", "99")  # int(Decimal('1e999999')) is ehrgym's MemoryError, CPython's 20 s
        return f"math.{r.choice(['sqrt', 'floor', 'ceil', 'trunc', 'isfinite'])}({inner})"

    # datetime

    def date_lit(self) -> str:
        r = self.r
        y = r.choice([r.randint(1900, 2100), 2000, 1900, 2024, 2023, 1, 9999, 0, 10000])
        m = r.choice([r.randint(1, 12), 2, 13, 0])
        d = r.choice([r.randint(1, 28), 29, 30, 31, 32, 0])
        return f"datetime.date({y}, {m}, {d})"

    def datetime_lit(self) -> str:
        r = self.r
        parts = [str(r.randint(1950, 2050)), str(r.randint(1, 12)), str(r.randint(1, 28))]
        for hi in (23, 59, 59, 999999):
            if r.random() < 0.6:
                parts.append(str(r.randint(0, hi) if r.random() < 0.95 else hi + 1))
            else:
                break
        if r.random() < 0.15:
            parts.append(r.choice(["tzinfo=datetime.timezone.utc", "tzinfo=datetime.timezone(datetime.timedelta(hours=-5))", "tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30))"]))
        return f"datetime.datetime({', '.join(parts)})"

    def td_lit(self) -> str:
        r = self.r
        keys = ["days", "seconds", "microseconds", "milliseconds", "minutes", "hours", "weeks"]
        args = []
        for k in r.sample(keys, r.randint(0, 3)):
            v = r.choice([str(r.randint(-400, 400)), f"{r.uniform(-50, 50):.{r.randint(0, 7)}f}", "0.5", "1.5", "-0.5", "2.5e-6", "1e-6"])
            args.append(f"{k}={v}")
        if r.random() < 0.1:
            return f"datetime.timedelta({r.randint(-5, 5)}, {r.randint(0, 100000)})"
        return f"datetime.timedelta({', '.join(args)})"

    def dt(self, depth: int) -> str:
        r = self.r
        k = r.random()
        a = self.date_lit() if r.random() < 0.5 else self.datetime_lit()
        if k < 0.2:
            return a
        if k < 0.35:
            return f"({a} {r.choice(['+', '-'])} {self.td_lit()})"
        if k < 0.5:
            b = self.date_lit() if "date(" in a and r.random() < 0.8 else self.datetime_lit()
            attr = r.choice([".days", ".total_seconds()", ".seconds", ".microseconds", ""])
            return f"({a} - {b}){attr}"
        if k < 0.6:
            t1, t2 = self.td_lit(), self.td_lit()
            op = r.choice(["+", "-", "*", "/", "//", "%", "<", "=="])
            other = r.choice([t2, str(r.randint(-5, 5)), f"{r.uniform(-3, 3):.3f}"])
            return f"({t1} {op} {other})"
        if k < 0.72:
            attr = r.choice(["year", "month", "day", "weekday()", "isoweekday()", "isoformat()", "toordinal()", "isocalendar()", "replace(day=1)", "replace(year=2024)", "ctime()"])
            return f"{a}.{attr}"
        if k < 0.8:
            fmt = "".join(r.choice(["%Y", "%m", "%d", "%H", "%M", "%S", "%j", "%a", "%A", "%b", "%B", "%y", "%p", "%I", "%U", "%W", "%f", "-", " ", "/", ":", "%%"]) for _ in range(r.randint(1, 6)))
            return f"{a}.strftime('{fmt}')"
        if k < 0.88:
            s = r.choice(["2023-11-13", "2024-02-29", "2023-02-29", "20231113", "2023-11-13T10:15:00", "2023-11-13 10:15:00.123", "2023-11-13T10:15:00+00:00", "2023-11-13T10:15:00Z", "2023-11-13T25:00", "bad"])
            cls = r.choice(["date", "datetime"])
            return f"datetime.{cls}.fromisoformat('{s}')"
        if k < 0.94:
            return f"({a} {r.choice(['<', '==', '>', '!='])} {self.date_lit() if 'date(' in a else self.datetime_lit()})"
        return self.td_lit()

    # containers, strings, sum

    def container(self, depth: int) -> str:
        r = self.r
        items = [self.num(depth - 1) for _ in range(r.randint(0, 4))]
        k = r.random()
        if k < 0.25:
            return f"sum([{', '.join(items)}])"
        if k < 0.35:
            return f"sum(({', '.join(items)}{',' if len(items) == 1 else ''}), {r.choice(['0.0', '10', 'Decimal(1)'])})"
        if k < 0.45:
            return f"[{', '.join(items)}][{r.randint(-5, 5)}]"
        if k < 0.55:
            lo, hi = r.choice(["", str(r.randint(-4, 4))]), r.choice(["", str(r.randint(-4, 4))])
            st = r.choice(["", ":-1", ":2", ":0"])
            return f"[{', '.join(items)}][{lo}:{hi}{st}]"
        if k < 0.6:
            return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
        if k < 0.65:
            key = r.choice(["'a'", "3", "'b'", "'c'", "3.0", "True"])
            return f"{{'a': {self.num(0)}, 'b': [1, 2], 3: {self.num(0)}}}[{key}]"
        if k < 0.7:
            k = r.choice([str(r.randint(0, 9)), f"{r.uniform(0, 3):.2f}"])  # a big one would repeat a tuple into gigabytes
            return f"sum(x * {k} for x in [{', '.join(items)}])"
        if k < 0.75:
            return f"[x for x in [{', '.join(items)}] if x]"
        if k < 0.8:
            return f"{self.num(depth - 1)} {r.choice(['in', 'not in'])} [{', '.join(items)}]"
        if k < 0.85:
            text = r.choice(["abc", "Hello World", "", "a,b,c"])
            tail = r.choice([".upper()", '.split(",")', "[1]", "[::-1]", " * 3", ' + "x"', '.replace("a", "z")', '.find("b")', '.startswith("a")', ".strip()"])
            return f"'{text}'{tail}"
        if k < 0.9:
            fmt = r.choice(["%.2f", "%d", "%s", "%5.1f", "%e", "%g", "%.3g", "%r", "%x", "%+.1f%%", "%010.4f"])
            return f"'{fmt}' % {self.num(depth - 1)}"
        if k < 0.95:
            return f"(lambda x: x * 2 + 1)({self.num(depth - 1)})"
        return f"{self.num(depth - 1)} {r.choice(['and', 'or'])} {self.num(depth - 1)}"

    def bad(self) -> str:
        r = self.r
        return r.choice([
            lambda: f"0{r.randint(1, 9)}{r.randint(0, 9)} + 1",
            lambda: f"{r.randint(1, 9)}\n+ {r.randint(1, 9)}",
            lambda: f"({r.randint(1, 9)}\n+ {r.randint(1, 9)})",
            lambda: r.choice(["abs(-1)", "round(1.5)", "int('3')", "float(2)", "len([1])", "min(1, 2)", "max([1])", "print(1)", "__import__('os')", "open('x')", "x"]),
            lambda: r.choice(["import math", "x = 5", "1; 2", "def f(): pass", "1 +", "(1", "1)", "[1, 2", "1 if 2", "a := 1", "f(x for x in y, 1)", "1 = 2", "del x", "1__0", "1_", "0x", "1e", "1.2.3", "'abc", "\"\"\"x", "1 <> 2", "!1", "$", "print 1"]),
            lambda: r.choice(["1 + 'a'", "'a' - 'b'", "[1] + (1,)", "None + 1", "Decimal(1) + 1.5", "datetime.date(2023, 1, 1) + 1", "'a' * 1.5", "[1][1.0]", "{}[[]]", "1 < 'a'", "None < None", "datetime.date(2023,1,1) < datetime.datetime(2023,1,1)", "math.sqrt('4')", "math.factorial(-1)", "math.factorial(2.5)", "sum(1)", "sum(['a'], '')", "(1)(2)", "math.foo", "datetime.foo", "Decimal('x')", "1 .real.imag.foo"]),
            lambda: r.choice(["1/0", "1//0", "1%0", "1.0/0", "0.0**-1", "Decimal(1)/0", "Decimal(0)/0", "Decimal(1)%0", "math.log(0)", "math.sqrt(-1)", "10.0**400", "math.exp(1000)", "[][0]", "{}['a']", "'abc'[5]", "datetime.date(2023, 2, 29)", "datetime.timedelta(days=10**9)", "datetime.date.max + datetime.timedelta(1)", "math.acos(2)", "2 ** -1 ** 0.5"]),
        ])()

    SOUP = ["1", "0", "2.5", "08", "1_0", "0x1F", "1e3", "'a'", "b'x'", "True", "None", "math", "datetime", "Decimal", "sum", ".", "sqrt",
            "date", "(", ")", "[", "]", "{", "}", ",", ":", "+", "-", "*", "/", "//", "%", "**", "<", "==", "not", "and", "or", "if", "else",
            "in", "is", "lambda", "x", "for", ":=", "=", "\n", " ", "\\\n", "#c", "...", "~", "<<", "&", "@", "!", "$", "`", ";", "'", '"',
            "e", "_", "\t", "\n  "]

    def soup(self) -> str:
        """Token soup: what the tokenizer and the parser refuse, and in which order (SyntaxError, IndentationError)."""
        r = self.r
        sep = r.choice([" ", ""])
        return sep.join(r.choice(self.SOUP) for _ in range(r.randint(1, 7)))

    def expression(self) -> str:
        r = self.r
        k = r.random()
        if k < 0.27:
            return self.num(r.randint(0, 4))
        if k < 0.42:
            return self.dec(r.randint(0, 3))
        if k < 0.6:
            return self.dt(2)
        if k < 0.76:
            return self.container(r.randint(1, 3))
        if k < 0.88:
            return self.soup()
        return self.bad()


# Outside the generator's grammar on purpose: the wall clock, ehrgym's bounds, the reach it refuses,
# set and generator reprs (CPython's hash order, memory addresses), complex results.
DIFFERS = ("now(", "today(", "utcnow(", "__")


@functools.lru_cache(maxsize=1)
def corpus() -> Tuple[str, ...]:
    g = Gen(SEED)
    out: List[str] = []
    seen = set()
    while len(out) < CORPUS_SIZE:
        e = g.expression()
        if e in seen or any(d in e for d in DIFFERS):
            continue
        if "<module" in cpython(e)[1] or " at 0x" in cpython(e)[1]:  # where CPython is installed, memory addresses
            continue
        seen.add(e)
        out.append(e)
    return tuple(out)


CLASSIC = [
    # the probes
    "math.sqrt(16)", "sum([1, 2, 3]) / 3", "Decimal('1.2') ** 3", "(datetime.date(2023, 11, 13) - datetime.date(1965, 3, 2)).days",
    "True + 1", "5 > 3", "[1, 2][0]", "'a' * 3", "1_000", "0x10", "3 ** 40", "08 + 1", "1\n+ 2", "(1\n+ 2)", "1 + 2\n", "1 + 2  # note",
    "abs(-3)", "2 + 2 * 3", "math.pi * (10 ** 2)", "(3.5 - 3.1) / 0.1 * 10",
    # floats
    "0.1 + 0.2", "1e16", "1e-5", "123456789012345678.0", "1/3", "2/3", "-0.0", "0.0 * -1", "1e308 * 10", "-1e308 * 10", "1e308 * 10 - 1e308 * 10",
    "5e-324 / 2", "1.5 // 0.5", "-7.5 // 2", "-7.5 % 2", "7.5 % -2", "2 ** 0.5", "(-8) ** 2", "2 ** -1074", "2.0 ** 1024", "0.1 * 3", "1e22", "1e21 + 1",
    "9007199254740993", "9007199254740993 / 1", "2 ** 64 / 3", "10 ** 30 / 7", "-(10 ** 400) // 3", "10 ** 400 / 10 ** 399", "7 // -2", "-7 % 3",
    "float_ := 2.5", "(x := 5) * 2", "math.inf - math.inf", "math.nan == math.nan", "math.floor(-0.5)", "math.ceil(1e20)", "math.trunc(-2.7)",
    # big integers
    "2 ** 100", "3 ** 200 % 1000007", "-2 ** 63", "(2 ** 64 - 1) & 0xFFFF", "1 << 100", "-1 >> 5", "~(2 ** 70)", "math.factorial(50)", "math.comb(100, 50)",
    "math.isqrt(10 ** 40 + 1)", "math.gcd(2 ** 80, 6 ** 30)", "10 ** 4299", "10 ** 4300",
    # Decimal
    "Decimal('1.20')", "Decimal('1.20') + Decimal('1.30')", "Decimal('1E+3')", "Decimal('1e3') + 0", "Decimal(1) / Decimal(3)", "Decimal(2) / Decimal(3)",
    "Decimal('2.675').quantize(Decimal('0.01'))", "Decimal('2.665').quantize(Decimal('0.01'))", "Decimal('2.675').quantize(Decimal('0.01'), rounding='ROUND_HALF_UP')",
    "Decimal('0.5').to_integral_value()", "Decimal('1.5').to_integral_value()", "Decimal('2.5').to_integral_value()", "Decimal('-0')", "-Decimal('0')",
    "Decimal('1.1') * 3", "Decimal(0.1)", "Decimal('0.1') == 0.1", "Decimal('0.5') == 0.5", "Decimal('123.4567890123456789012345678901')", "+Decimal('123.4567890123456789012345678901')",
    "Decimal('1e-7')", "Decimal('0.000001')", "Decimal('100').sqrt()", "Decimal('2').sqrt()", "Decimal('0.0100').sqrt()", "Decimal(10) ** -2", "Decimal('1.000') * Decimal('2.0')",
    "Decimal('7') // Decimal('-2')", "Decimal('-7') % Decimal('2')", "Decimal('70') / Decimal('1.5') * Decimal('1.5')", "sum([Decimal('1.10'), Decimal('2.20')])",
    "Decimal('9' * 28) + 1", "Decimal('1e999999') * 10", "Decimal(2) ** Decimal('0.5')", "Decimal(1).exp()", "Decimal(10).ln()", "Decimal(2).log10()",
    "Decimal('70.5') * Decimal('0.5')", "Decimal('1.005').quantize(Decimal('0.01'))", "Decimal('NaN') == Decimal('NaN')", "Decimal('NaN') < 1",
    # dates: leap years, month ends, negative timedeltas
    "datetime.date(2024, 2, 29)", "datetime.date(2023, 2, 29)", "datetime.date(1900, 2, 29)", "datetime.date(2000, 2, 29)",
    "datetime.date(2024, 2, 28) + datetime.timedelta(days=1)", "datetime.date(2023, 2, 28) + datetime.timedelta(days=1)", "datetime.date(2023, 12, 31) + datetime.timedelta(1)",
    "datetime.date(2024, 3, 1) - datetime.timedelta(days=1)", "datetime.date(2023, 1, 31).replace(month=2)", "(datetime.date(2024, 1, 1) - datetime.date(2023, 1, 1)).days",
    "(datetime.date(2023, 1, 1) - datetime.date(2024, 1, 1))", "datetime.timedelta(days=-1)", "datetime.timedelta(seconds=-1)", "datetime.timedelta(microseconds=-1)",
    "-datetime.timedelta(hours=5)", "datetime.timedelta(hours=-25).days", "datetime.timedelta(hours=-25).seconds", "datetime.timedelta(days=1.5)",
    "datetime.timedelta(seconds=0.5e-6)", "datetime.timedelta(seconds=1.5e-6)", "datetime.timedelta(minutes=0.1)", "datetime.timedelta(weeks=-1, days=3.3)",
    "(datetime.datetime(2023, 11, 13, 10, 15) - datetime.datetime(1965, 3, 2)).total_seconds()", "(datetime.date(2023, 11, 13) - datetime.date(1965, 3, 2)).days / 365.25",
    "(datetime.date(2023, 11, 13) - datetime.date(1965, 3, 2)).days // 365", "datetime.datetime(2023, 11, 13, 10, 15).timestamp()", "datetime.datetime(2023, 3, 31) + datetime.timedelta(days=30)",
    "datetime.datetime(2023, 11, 13, 10, 15, tzinfo=datetime.timezone.utc)", "datetime.datetime(2023, 11, 13, 23, 59, 59, 999999) + datetime.timedelta(microseconds=1)",
    "datetime.datetime.fromisoformat('2023-11-13T10:15:00+00:00')", "datetime.datetime(2023, 11, 13).strftime('%Y-%m-%d %A %j')", "datetime.date(2023, 11, 13).isocalendar()",
    "datetime.timedelta(days=7) / datetime.timedelta(days=2)", "datetime.timedelta(days=7) // 2", "datetime.timedelta(days=7) * 1.5", "datetime.timedelta(days=7) / 3",
    "[datetime.date(2023, 1, 1), datetime.timedelta(0), Decimal('1.0'), 1.0, 'a', None, True, (1,)]",
    "{'age': 58, 'bsa': math.sqrt(170 * 70 / 3600)}", "math.sqrt(170 * 70 / 3600)", "round(2.5)",
    "datetime.datetime.strptime('2023-11-13', '%Y-%m-%d')", "datetime.date(2023, 1, 1).timetuple()", "datetime.date(2023, 1, 1).strftime('%Y')",
    # grammar corners: chains, truthiness, comprehensions, lambdas, :=, methods, % formatting, tokens
    '[1, 2, 3] == [1, 2, 3]', '(1, 2) < (1, 3)', "(1, 2) < (1, 'a')", '[1, [2, 3]][1][0]', "'abc'[1:]", "'abc'[::-2]", "'abcdef'[-3:-1]",
    '[1,2,3,4,5][1:4:2]', '[1,2,3][5:]', '1 < 2 < 3', '1 < 3 < 2', '3 > 2 == 2', "'a' in 'abc'", "'x' not in 'abc'", '1 in {1: 2}', '2 in {1: 2}',
    '(1, 2) in [(1, 2)]', "0 or 'x'", '1 and []', '[] or {}', 'not []', "{'a': 1, 'b': 2}.get('c', 5)", "list({'a': 1}.keys())", "{'a': 1}.keys()",
    "{'a': 1}.items()", "{'a': 1, 'a': 2}", "{1: 'a', 1.0: 'b', True: 'c'}", "{**{'a': 1}, 'b': 2}", '[x * 2 for x in [1, 2, 3]]',
    "[(x, y) for x in [1, 2] for y in 'ab']", '{x: x ** 2 for x in [1, 2, 3]}', '[a + b for a, b in [(1, 2), (3, 4)]]',
    'sum(a * b for a, b in zip([1], [2]))', "[x for x in 'hello' if x != 'l']", 'sum([[1], [2]], [])', 'sum([0.1] * 10)', 'sum([1, 2], start=10)',
    'sum((x for x in [1.5, 2.5]), Decimal(0))', "'Hello, World'.lower().split(', ')", "' x '.strip()", "'-'.join(['a', 'b'])", "'-'.join([1, 2])",
    "'a,b,,c'.split(',')", "'a b  c'.split()", "'abc'.replace('b', '')", "'abc'.upper().isupper()", "'%s is %d years' % ('Ann', 70)",
    "'%5.2f|%-6d|%+d' % (3.14159, 42, 5)", "'%(a)s-%(b)s' % {'a': 1, 'b': 2}", "'%d%%' % 50", "'%c' % 65", "'%x %o %X' % (255, 8, 255)",
    "'%.3e' % 12345.678", "'%g' % 1e-5", "'%g' % 123456789", "'%s' % [1, 2]", "'%s %s' % (1,)", "'%d' % 'a'", '(lambda x, y=2: x * y)(3)',
    '(lambda *a: sum(a))(1, 2, 3)', '(lambda **k: k)(a=1)', '(lambda x: x)(1, 2)', '(lambda: 1)()', '(lambda x: (lambda y: x + y))(1)(2)',
    '(x := 3) + x', '[y := 5, y * 2]', '1 if True else 1/0', 'True and 1/0', 'False and 1/0', 'None is None', '1 is not None', '[] is []',
    'math.isclose(0.1 + 0.2, 0.3)', 'math.isclose(1, 1.1, rel_tol=0.2)', 'math.isclose(1, 2, abs_tol=1)', 'math.fsum([0.1] * 10)',
    'math.prod([1, 2, 3.5])', 'math.prod([])', 'math.gcd()', 'math.lcm(4, 6)', 'math.hypot(3, 4)', 'math.hypot(1, 2, 3)', 'math.dist((0, 0), (3, 4))',
    'math.copysign(1, -0.0)', 'math.fmod(-7, 3)', 'math.remainder(7, 2)', 'math.modf(-3.5)', 'math.frexp(8.0)', 'math.ldexp(0.5, 4)',
    'math.log(8, 2)', 'math.log(100, 10)', 'math.log(10 ** 400)', 'math.log2(2 ** 2000)', 'math.log10(10 ** 500)', 'math.log(0.0)', 'math.log(-1)',
    'math.log(1, 1)', 'math.pow(2, 0.5)', 'math.pow(-8, 1/3)', 'math.pow(0, -1)', 'math.pow(-2, 3)', 'math.pow(2, 1024)', 'math.sqrt(2) ** 2',
    'math.exp(1)', 'math.e ** 2', 'math.degrees(math.pi)', 'math.radians(180)', 'math.floor(2.5) + math.ceil(2.5)', "math.trunc(Decimal('-2.7'))",
    "math.floor(Decimal('-2.5'))", "math.ceil(Decimal('2.1'))", 'math.factorial(20)', 'math.comb(10, 3)', 'math.perm(5)', 'math.perm(5, 2)',
    'math.isqrt(99)', 'math.nextafter(1.0, 2.0)', 'math.ulp(1.0)', 'math.inf > 10 ** 400', '10 ** 400 > 1e308', '10 ** 400 == math.inf', 'float_ = 1',
    '(1).bit_length()', '(255).bit_length()', '(1.5).is_integer()', '(0.1).as_integer_ratio()', '(1.0).hex()', 'True.real', '(3).denominator',
    '(-2.5).conjugate()', "Decimal('1.5').as_integer_ratio()", "Decimal('1.5').as_tuple()", "Decimal('-0.00').as_tuple()",
    "Decimal('1e3').normalize()", "Decimal('100.00').normalize()", "Decimal('2.5').to_integral_value(rounding='ROUND_HALF_UP')",
    "Decimal('7.25').quantize(Decimal('0.1'), rounding='ROUND_05UP')", "Decimal('1').compare(Decimal('2'))", "Decimal('1').max(Decimal('2'))",
    "Decimal('1.0').min(Decimal('1.00'))", "Decimal('3').fma(2, 1)", "Decimal('2').copy_sign(Decimal('-1'))",
    "Decimal('0.1') + Decimal('0.2') == Decimal('0.3')", 'Decimal(5) ** 100', "Decimal('1.1') ** 50", 'Decimal(2) ** -3',
    "Decimal('0.5') ** Decimal('2')", 'Decimal((0, (1, 2, 3), -2))', 'Decimal([1, (1,), 0])', 'Decimal.from_float(0.25)', "Decimal(' 3.14 ')",
    "Decimal('Inf') - Decimal('Inf')", "Decimal('NaN') + 1", "Decimal('sNaN') + 1", 'Decimal(10).sqrt()', "Decimal('1e-10').sqrt()",
    'Decimal(100).log10()', "Decimal('0.001').log10()", 'Decimal(2).ln()', "Decimal('0.5').exp()", 'Decimal(1) < 2 < Decimal(3)',
    "Decimal('1.0') == 1", "Decimal('1.5') > 1.4", "[Decimal('1.0'), Decimal('1.00')]", "{Decimal('1.0'): 'a'}[1]", 'Decimal(7) % -3',
    'Decimal(-7) // 3', "Decimal(10) / Decimal('0.3')", "Decimal('1e30') + 1", "Decimal('1e-30') + 1", 'datetime.date(2023, 11, 13).weekday()',
    'datetime.date(2023, 11, 13).isoformat()', 'datetime.date(2023, 11, 13).ctime()', 'datetime.date.fromordinal(738000)',
    'datetime.date(2023, 1, 1).toordinal()', 'datetime.date.fromisocalendar(2023, 1, 1)', 'datetime.date.min',
    'datetime.date.max - datetime.date.min', 'datetime.timedelta.max', 'datetime.timedelta.min', 'datetime.timedelta.resolution',
    'datetime.datetime(2023, 1, 1, 12).date()', 'datetime.datetime(2023, 1, 1, 12, 30).time()',
    'datetime.datetime(2023, 1, 1).replace(hour=5, minute=7)', "datetime.datetime(2023, 1, 1).isoformat(' ')",
    "datetime.datetime(2023, 1, 1, 1, 2, 3, 4).isoformat(timespec='milliseconds')", "datetime.datetime(2023, 1, 1).isoformat(timespec='hours')",
    'datetime.datetime.combine(datetime.date(2023, 1, 1), datetime.time(5, 6))', 'datetime.time(5, 6, 7, 8)', 'datetime.time(25)',
    'datetime.time(1) < datetime.time(2)', 'datetime.datetime(2023, 1, 1, tzinfo=datetime.timezone.utc) - datetime.datetime(2023, 1, 1)',
    'datetime.datetime(2023, 1, 1, tzinfo=datetime.timezone.utc) == datetime.datetime(2023, 1, 1)',
    'datetime.datetime(2023, 1, 1, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=5))) == datetime.datetime(2023, 1, 1, tzinfo=datetime.timezone.utc)',
    'datetime.datetime(2023, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=-3))).utcoffset()',
    'datetime.datetime(2023, 1, 1, tzinfo=datetime.timezone.utc).dst()', 'datetime.datetime(2023, 1, 1).dst()',
    'datetime.time(1, tzinfo=datetime.timezone(datetime.timedelta(hours=2))).dst()', 'datetime.time(1, 2).tzname()',
    'datetime.time(1, 2, 3, 4, fold=1).fold', 'datetime.time(1, tzinfo=datetime.timezone.utc).utcoffset()',
    'datetime.datetime(2023, 1, 1, 1, 2, 3, 4).microsecond', 'datetime.datetime(2023, 1, 1).astimezone(datetime.timezone.utc).tzname()',
    "datetime.timezone(datetime.timedelta(hours=2), 'X')", 'str(1)', 'datetime.timezone.utc', 'datetime.UTC', 'datetime.MAXYEAR',
    'datetime.datetime(2023, 1, 1, tzinfo=datetime.timezone.utc).timestamp()', 'datetime.datetime.fromtimestamp(0, datetime.timezone.utc)',
    'datetime.datetime.utcfromtimestamp(1700000000)', 'datetime.datetime(2023, 3, 1) - datetime.timedelta(days=1)',
    "datetime.datetime.fromisoformat('2023-11-13T10:15:00.5+05:30')", "datetime.date.fromisoformat('2023-W46-1')",
    'datetime.timedelta(days=1, hours=2).total_seconds()', 'datetime.timedelta(weeks=1) // datetime.timedelta(days=3)',
    'datetime.timedelta(weeks=1) % datetime.timedelta(days=3)', '-datetime.timedelta(days=1, microseconds=1)', 'datetime.timedelta(days=1) * 0.1',
    'datetime.timedelta(days=1) / 7', 'abs_ := 1', 'datetime.timedelta(1) == datetime.timedelta(hours=24)', 'datetime.timedelta(1) < 1',
    'datetime.timedelta(seconds=86399.9999995)', 'datetime.timedelta(microseconds=0.5)', 'datetime.timedelta(microseconds=1.5)',
    'datetime.timedelta(microseconds=-0.5)', 'datetime.timedelta(days=-0.5)',
    'datetime.timedelta(hours=1.1, minutes=2.2, seconds=3.3, milliseconds=4.4, microseconds=5.5)',
    'datetime.date(2023, 1, 31) + datetime.timedelta(days=30)', 'datetime.date(2023, 1, 1) - datetime.timedelta(days=0.9)',
    'datetime.date(2023, 1, 1) + datetime.timedelta(days=0.9)', 'datetime.date(2023, 1, 1) + datetime.timedelta(hours=-1)',
    'datetime.date(2023, 1, 1) - datetime.timedelta(hours=-1)', '[1, 2, 3].index(2)', '[1, 2, 2].count(2)', '(1, 2).count(1)', '[3, 1, 2].sort()',
    '[1, 2].append(3)', "{'a': 1}.copy()", "'abc'.find('c')", "'abc'.index('d')", "'ab'.zfill(5)", "'ab'.center(6, '*')", "'a'.isdigit()",
    "'12'.isdigit()", "'Hello world'.title()", "'hello'.capitalize()", "'aXb'.swapcase()", "b'abc'", "b'a' + b'b'", "b'abc'[0]", "'%s' % b'x'", '...',
    '[...]', 'type_ = 1', '(1, 2, 3)[::-1]', '[1, 2, 3][-1]', "'abc'[True]", '[1][False]', '[1, 2][0.0]', "[1, 2]['a']", '(1)[0]', 'sum', 'math.sqrt',
    'Decimal', 'datetime.date', '1e309', '-1e309', '1e-400', '0.1 + 0.7', '1 / 3 * 3', '2 ** 0.5 * 2 ** 0.5', '10 / 3', '-10 // 3', '-10 % 3',
    '10 % -3', '-10.5 // 3', '2 ** 62 + 0.5', '(2 ** 53 + 1) + 0.0', '2 ** 1023 * 2.0', '2 ** 1024 * 1.0', '(2 ** 1024) / 2', '1 / 2 ** 1100',
    '7 // 0.0', '0 ** 0', '0.0 ** 0', '(-1.0) ** 2.0', '(-2) ** -1', '1_0.0_1', '0b1_01', '0o17', '0_0', '00', '0e5', '1e1_0', '1__2', '1if 1else 2',
    '[1for x in [1]]', '1.real', '1 .real', '1..real', "'a' 'b'", "'a' b'b'", "r'\\n'", "'\\x41'", "'\\u00e9'", "'''a\nb'''", "'a\\\nb'", '(1,\n2)',
    '[\n1,\n2\n]', '1 + \\\n2', '   1 + 2', '\t1', '1 # c\n', '\n1', '1\n\n',
]


@pytest.fixture(scope="module")
def answers() -> Dict[str, Tuple[bool, str]]:
    exprs = list(corpus()) + CLASSIC
    return dict(zip(exprs, ehrgym(exprs)))


def mismatches(exprs: List[str], answers: Dict[str, Tuple[bool, str]]) -> List[str]:
    bad = []
    for e in exprs:
        want = cpython(e)
        got = answers[e]
        if want != got:
            bad.append(f"{e!r}: CPython {want!r}, ehrgym {got!r}")
    return bad


def test_corpus_size_and_mix() -> None:
    exprs = corpus()
    assert len(exprs) >= 10_000
    outcomes = [cpython(e)[0] for e in exprs]
    assert sum(outcomes) > len(exprs) // 2, "mostly valid expressions"
    assert len(exprs) - sum(outcomes) > 1000, "and many that raise"


def test_generated_corpus_agrees_with_cpython(answers: Dict[str, Tuple[bool, str]]) -> None:
    bad = mismatches(list(corpus()), answers)
    assert not bad, f"{len(bad)} of {CORPUS_SIZE} differ:\n" + "\n".join(bad[:60])


def test_classic_cases_agree_with_cpython(answers: Dict[str, Tuple[bool, str]]) -> None:
    bad = mismatches(CLASSIC, answers)
    assert not bad, "\n".join(bad)


def test_documented_differences() -> None:
    """Where ehrgym departs from the original on purpose (README, tool protocol): each answer here."""
    cases = {
        "10 ** 10 ** 10": (False, "MemoryError"),
        "'a' * 10 ** 9": (False, "MemoryError"),
        "math.factorial(10 ** 6)": (False, "MemoryError"),
        "().__class__": (False, "AttributeError"),
        "__builtins__": (False, "NameError"),
        "[0] * 10 ** 8": (False, "MemoryError"),
        "(-8) ** (1 / 3)": (False, "ValueError"),
        "math.floor(Decimal('1e999999'))": (False, "MemoryError"),
        "1j": (False, "ValueError"),
        "f'{1}'": (False, "SyntaxError"),
        "'\\N{BULLET}'": (False, "SyntaxError"),
        "{x % 3 for x in [1, 2, 3, 4]}": (True, "{1, 2, 0}"),  # insertion order; CPython's is its hash order
    }
    got = ehrgym(list(cases) + ["math.cbrt(-27)", "math.sinh(11.946096687345076)", "15 ** 3.5"])
    assert dict(zip(cases, got)) == cases
    # Correctly rounded where glibc is not (cbrt, expm1, log1p, the hyperbolic functions; pow in rare
    # cases): the last digit may differ.
    assert got[-3:] == [(True, "-3.0"), (True, "77107.01234734888"), (True, "13071.318793450031")]
    assert cpython("math.cbrt(-27)") == (True, "-3.0000000000000004")
    decimal.getcontext().prec = 60
    try:
        assert repr(float(decimal.Decimal(15) ** decimal.Decimal("3.5"))) == "13071.318793450031" != cpython("15 ** 3.5")[1]
    finally:
        decimal.getcontext().prec = 28
    # The same expressions in CPython: answers or reach ehrgym refuses (only the cheap ones are run here).
    assert cpython("().__class__") == (True, "<class 'tuple'>")
    assert cpython("__builtins__")[0] is True
    assert cpython("(-8) ** (1 / 3)")[0] is True
    assert cpython("f'{1}'") == (True, "1")
