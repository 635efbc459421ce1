import { describe, expect, it } from "vitest";
import * as py from "../../env/python/index.ts";

const { jsonLoads, pyEq, repr, pyStr, literalEval, pyIn, getItem, pyLen, pyLower, pyFloat, sub, PyError } = py;

const raises = (f: () => unknown, type?: string) => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(PyError);
    if (type) expect((e as py.PyError).pyType).toBe(type);
    return;
  }
  throw new Error("expected a PyError");
};

describe("json.loads like Python", () => {
  it("accepts NaN, Infinity, -Infinity and surrounding whitespace", () => {
    const v = jsonLoads(" \n[NaN, Infinity, -Infinity]\t") as number[];
    expect(Number.isNaN(v[0])).toBe(true);
    expect(v[1]).toBe(Infinity);
    expect(v[2]).toBe(-Infinity);
  });
  it("distinguishes int and float lexemes, ints are arbitrary precision", () => {
    expect(jsonLoads("1")).toBe(1n);
    expect(jsonLoads("1.0")).toBe(1);
    expect(jsonLoads("1e2")).toBe(100);
    expect(jsonLoads("123456789012345678901234567890")).toBe(123456789012345678901234567890n);
  });
  it("rejects what Python rejects", () => {
    for (const bad of ["", "[1,]", "{'a': 1}", "01", "+1", ".5", "1.", "-NaN", "nan", "[1] x", '"\u0001"', "\ufeff[1]", "{\"a\" 1}", "True", '"\\x41"'])
      raises(() => jsonLoads(bad));
    raises(() => jsonLoads("9".repeat(4301)), "ValueError");
  });
  it("duplicate keys: last value wins, first position kept", () => {
    expect(repr(jsonLoads('{"a":1,"b":2,"a":3}'))).toBe("{'a': 3, 'b': 2}");
  });
  it("decodes escapes and surrogate pairs", () => {
    expect(jsonLoads('"\\ud83d\\ude00\\n\\u00e9"')).toBe("😀\né");
  });
});

describe("Python ==", () => {
  const j = jsonLoads;
  it("numbers: 1 == 1.0, True == 1, False == 0, NaN != NaN, big ints exact", () => {
    expect(pyEq(j("1"), j("1.0"))).toBe(true);
    expect(pyEq(true, 1n)).toBe(true);
    expect(pyEq(false, j("0.0"))).toBe(true);
    expect(pyEq(NaN, NaN)).toBe(false);
    expect(pyEq(j("[NaN]"), j("[NaN]"))).toBe(false);
    expect(pyEq(j("9007199254740993"), j("9007199254740992.0"))).toBe(false);
    expect(pyEq(j("9007199254740992"), j("9007199254740992.0"))).toBe(true);
  });
  it("str never equals a number; lists element-wise; dicts regardless of key order", () => {
    expect(pyEq("1", 1n)).toBe(false);
    expect(pyEq(j("[1, [2, 3.0]]"), j("[1.0, [2, 3]]"))).toBe(true);
    expect(pyEq(j("[1, 2]"), j("[2, 1]"))).toBe(false);
    expect(pyEq(j('{"a": 1, "b": {"c": [true]}}'), j('{"b": {"c": [1]}, "a": 1.0}'))).toBe(true);
    expect(pyEq(j('{"a": 1}'), j('{"a": 1, "b": 2}'))).toBe(false);
    expect(pyEq(null, j("null"))).toBe(true);
    expect(pyEq(j("[]"), j("{}"))).toBe(false);
  });
});

describe("str()/repr() like Python", () => {
  it("floats", () => {
    expect(repr(jsonLoads("[1, 1.0, 1e16, 1e-05, 0.0001, 123456789012345678.0, -0.0, 1.5e300, 2.5, 100.0, 1e22, 0.1]"))).toBe(
      "[1, 1.0, 1e+16, 1e-05, 0.0001, 1.2345678901234568e+17, -0.0, 1.5e+300, 2.5, 100.0, 1e+22, 0.1]",
    );
    expect(repr(jsonLoads("[NaN, Infinity, -Infinity]"))).toBe("[nan, inf, -inf]");
  });
  it("strings: quote choice and escapes; True/False/None", () => {
    const v = jsonLoads(
      '{"a": "it\'s", "b": "say \\"hi\\"", "c": "both \' and \\"", "d": "tab\\tnl\\n\\u0001\\u007f\\u00e9\\u200b\\u00a0", "e": [true, null, false]}',
    );
    expect(pyStr(v)).toBe(`{'a': "it's", 'b': 'say "hi"', 'c': 'both \\' and "', 'd': 'tab\\tnl\\n\\x01\\x7fé\\u200b\\xa0', 'e': [True, None, False]}`);
    expect(pyStr("plain")).toBe("plain");
  });
});

describe("ast.literal_eval", () => {
  it("parses Python literals, bare tuples, concatenated strings", () => {
    expect(repr(literalEval("1, 2"))).toBe("(1, 2)");
    expect(repr(literalEval("(1,)"))).toBe("(1,)");
    expect(repr(literalEval("[0x1F, 1_000, .5, 5., 'a' 'b', -3]"))).toBe("[31, 1000, 0.5, 5.0, 'ab', -3]");
    expect(repr(literalEval("  [None, True, {'a': (1, 2)}]  # comment\n"))).toBe("[None, True, {'a': (1, 2)}]");
    expect(repr(literalEval("{1: 2, 1.0: 3, 'k': set()}"))).toBe("{1: 3, 'k': set()}");
    expect(repr(literalEval("[1,\n 'a' '\\x41\\101']\n"))).toBe("[1, 'aAA']");
  });
  it("rejects names, calls, operators and JSON-only spellings", () => {
    for (const bad of ["[NaN, 1]", "[null, 1]", "[true]", "1 + 2", "f(1)", "[1, 2", "01", "", "--1", "f'x'", "1\n2", "set(1)"]) raises(() => literalEval(bad));
  });
});

describe("Python access semantics raise", () => {
  const d = jsonLoads('{"a": [1, {"b": "x"}], "s": "str", "n": 5}');
  it("missing key, out of range, str/number indexed by key", () => {
    raises(() => getItem(d, "zz"), "KeyError");
    raises(() => getItem(getItem(d, "a"), 5n), "IndexError");
    raises(() => getItem(getItem(d, "s"), "k"), "TypeError");
    raises(() => getItem(getItem(d, "n"), "k"), "TypeError");
    raises(() => getItem(getItem(d, "a"), "0"), "TypeError");
    expect(getItem(getItem(d, "s"), 0n)).toBe("s");
    expect(getItem(getItem(d, "a"), -1n)).toBeInstanceOf(py.PyDict);
  });
  it("in on str (substring), list (==), dict (key); len; lower; arithmetic", () => {
    expect(pyIn("tr", "str")).toBe(true);
    expect(pyIn(1n, jsonLoads("[1.0, 2]"))).toBe(true);
    expect(pyIn("a", d)).toBe(true);
    raises(() => pyIn(1n, "abc"), "TypeError");
    raises(() => pyIn("a", 5n), "TypeError");
    raises(() => pyIn(jsonLoads("[1]"), d), "TypeError");
    expect(pyLen("héllo")).toBe(5);
    expect(pyLen(d)).toBe(3);
    raises(() => pyLen(5n), "TypeError");
    raises(() => pyLower(5n), "AttributeError");
    expect(sub(true, 0.5)).toBe(0.5);
    raises(() => sub("5", 1n), "TypeError");
    raises(() => sub(10n ** 400n, 0.5), "OverflowError");
  });
  it("float() of strings", () => {
    expect(pyFloat(" 72.5 ")).toBe(72.5);
    expect(pyFloat("1_000")).toBe(1000);
    expect(pyFloat("-inf")).toBe(-Infinity);
    raises(() => pyFloat("abc"), "ValueError");
    raises(() => pyFloat(jsonLoads("[1]")), "TypeError");
  });
});

describe("datetime.fromisoformat", () => {
  it("compares aware instants across offsets and refuses naive vs aware", () => {
    const a = py.fromIsoformat("2023-11-13T10:15:00+00:00");
    const b = py.fromIsoformat("2023-11-13T05:15:00-05:00");
    expect(py.dtCmp(a, b)).toBe(0);
    raises(() => py.dtCmp(a, py.fromIsoformat("2023-11-13T10:15:00")), "TypeError");
    raises(() => py.fromIsoformat("2023-02-30"), "ValueError");
    expect(py.fromIsoformat("2023-11-13T10:15:00Z").aware).toBe(true);
  });
});
