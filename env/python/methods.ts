// Methods and attributes of the built-in types an expression can hold (int, float, bool, str, list,
// tuple, dict, set, bytes): the common ones, with Python's results and errors. Others raise AttributeError.
import { LIMITS, asIntegerRatio, memoryError } from "./arith.ts";
import { bitLength } from "./decimal.ts";
import { listOf, PyIterView } from "./evaluator.ts";
import { floatHex } from "./format.ts";
import { type Kwargs, type Val, PyBuiltin, PyBytes, PyDict, PyList, PySet, PyTuple, order, pyEquals, typeOf } from "./objects.ts";
import { pyStrip } from "./strings.ts";
import { PyError } from "./values.ts";

type Fn = (args: Val[], kw: Kwargs) => Val;

function noKw(name: string, kw: Kwargs): void {
  if (kw.size) throw new PyError("TypeError", `${name}() takes no keyword arguments`);
}
function arity(name: string, args: Val[], min: number, max: number): void {
  if (args.length < min || args.length > max) {
    throw new PyError("TypeError", min === max ? `${name}() takes exactly ${min === 1 ? "one argument" : `${min} arguments`} (${args.length} given)` : `${name} expected at most ${max} argument${max === 1 ? "" : "s"}, got ${args.length}`);
  }
}
const bound = (self: Val, name: string, fn: Fn) => new PyBuiltin(name, fn, self);
const simple = (self: Val, name: string, min: number, max: number, fn: (args: Val[]) => Val) =>
  bound(self, name, (args, kw) => {
    noKw(name, kw);
    arity(name, args, min, max);
    return fn(args);
  });

function strArg(name: string, v: Val): string {
  if (typeof v !== "string") throw new PyError("TypeError", `${name} arg must be None or str`);
  return v;
}

/** Python index arguments (start/end) of str.find and friends, clamped like slices, in code points. */
function span(len: number, start: Val | undefined, end: Val | undefined): [number, number] {
  const norm = (v: Val | undefined, d: number) => {
    if (v === undefined || v === null) return d;
    if (typeof v !== "bigint" && typeof v !== "boolean") throw new PyError("TypeError", "slice indices must be integers or None or have an __index__ method");
    let x = Number(typeof v === "boolean" ? (v ? 1n : 0n) : v);
    if (x < 0) x += len;
    return Math.max(0, Math.min(len, x));
  };
  return [norm(start, 0), norm(end, len)];
}

function strAttr(s: string, name: string): Val | undefined {
  const cps = () => [...s];
  switch (name) {
    case "upper":
      return simple(s, name, 0, 0, () => s.toUpperCase());
    case "lower":
      return simple(s, name, 0, 0, () => s.toLowerCase());
    case "casefold":
      return simple(s, name, 0, 0, () => s.toLowerCase());
    case "swapcase":
      return simple(s, name, 0, 0, () => cps().map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join(""));
    case "title":
      return simple(s, name, 0, 0, () => s.toLowerCase().replace(/(^|[^\p{L}\p{N}'])(\p{L})|(')(\p{L})/gu, (m, p, c) => (c ? p + c.toUpperCase() : m)));
    case "capitalize":
      return simple(s, name, 0, 0, () => (s ? cps()[0]!.toUpperCase() + cps().slice(1).join("").toLowerCase() : s));
    case "strip":
    case "lstrip":
    case "rstrip":
      return simple(s, name, 0, 1, ([chars]) => {
        if (chars === undefined || chars === null) {
          if (name === "strip") return pyStrip(s);
          const t = pyStrip(s);
          if (!t) return "";
          return name === "lstrip" ? s.slice(s.indexOf(t)) : s.slice(0, s.lastIndexOf(t) + t.length);
        }
        const set = new Set(strArg(name, chars));
        const a = cps();
        let i = 0;
        let j = a.length;
        if (name !== "rstrip") while (i < j && set.has(a[i]!)) i++;
        if (name !== "lstrip") while (j > i && set.has(a[j - 1]!)) j--;
        return a.slice(i, j).join("");
      });
    case "split":
    case "rsplit":
      return bound(s, name, (args, kw) => {
        const sepV = args[0] ?? kw.get("sep") ?? null;
        const maxV = args[1] ?? kw.get("maxsplit") ?? -1n;
        const max = Number(maxV);
        if (sepV === null) {
          const words = s.split(/[\s\u001c-\u001f]+/u).filter((w) => w);
          if (max < 0 || words.length <= max + 1) return new PyList(words);
          if (name === "split") {
            const re = /[\s\u001c-\u001f]+/gu;
            const t = s.replace(/^[\s\u001c-\u001f]+/u, "");
            const out: string[] = [];
            let last = 0;
            let m: RegExpExecArray | null;
            while (out.length < max && (m = re.exec(t))) {
              out.push(t.slice(last, m.index));
              last = m.index + m[0].length;
            }
            out.push(t.slice(last));
            return new PyList(out);
          }
          const t = s.replace(/[\s\u001c-\u001f]+$/u, "");
          const runs = [...t.matchAll(/[\s\u001c-\u001f]+/gu)].filter((r) => r.index! > 0).slice(-max);
          const out: string[] = [];
          let end = t.length;
          for (let i = runs.length - 1; i >= 0; i--) {
            out.unshift(t.slice(runs[i]!.index! + runs[i]![0].length, end));
            end = runs[i]!.index!;
          }
          out.unshift(t.slice(0, end));
          return new PyList(out);
        }
        const sep = strArg(name, sepV);
        if (!sep) throw new PyError("ValueError", "empty separator");
        const parts = s.split(sep);
        if (max < 0 || parts.length <= max + 1) return new PyList(parts);
        if (name === "split") return new PyList([...parts.slice(0, max), parts.slice(max).join(sep)]);
        return new PyList([parts.slice(0, parts.length - max).join(sep), ...parts.slice(parts.length - max)]);
      });
    case "join":
      return simple(s, name, 1, 1, ([it]) => {
        const items = listOf(it!);
        items.forEach((x, i) => {
          if (typeof x !== "string") throw new PyError("TypeError", `sequence item ${i}: expected str instance, ${typeOf(x)} found`);
        });
        const total = (items as string[]).reduce((n: number, x) => n + x.length, 0) + s.length * Math.max(0, items.length - 1);
        if (total > LIMITS.items) throw memoryError("str");
        return (items as string[]).join(s);
      });
    case "replace":
      return simple(s, name, 2, 3, ([a, b, c]) => {
        const old = strArg(name, a!);
        const neu = strArg(name, b!);
        let count = c === undefined ? -1 : Number(c as bigint);
        if (old === "") {
          const parts = cps();
          const out: string[] = [];
          for (let i = 0; i <= parts.length; i++) {
            if (count !== 0) {
              out.push(neu);
              count--;
            }
            if (i < parts.length) out.push(parts[i]!);
          }
          return out.join("");
        }
        const parts = s.split(old);
        if (count < 0 || count >= parts.length - 1) {
          if ((parts.length - 1) * neu.length + s.length > LIMITS.items) throw memoryError("str");
          return parts.join(neu);
        }
        return parts.slice(0, count + 1).join(neu) + old + parts.slice(count + 1).join(old);
      });
    case "startswith":
    case "endswith":
      return simple(s, name, 1, 3, ([p, st, en]) => {
        const [a, b] = span([...s].length, st, en);
        const sub = cps().slice(a, b).join("");
        const test = (x: Val) => {
          if (typeof x !== "string") throw new PyError("TypeError", `${name} first arg must be str or a tuple of str, not ${typeOf(x)}`);
          return name === "startswith" ? sub.startsWith(x) : sub.endsWith(x);
        };
        if (p instanceof PyTuple) return p.items.some(test);
        return test(p!);
      });
    case "find":
    case "rfind":
    case "index":
    case "rindex":
    case "count":
      return simple(s, name, 1, 3, ([p, st, en]) => {
        const sub = strArg(name, p!);
        const a0 = cps();
        const [a, b] = span(a0.length, st, en);
        const hay = a0.slice(a, b).join("");
        if (name === "count") {
          if (a > a0.length) return 0n;
          if (sub === "") return BigInt([...hay].length + 1);
          return BigInt(hay.split(sub).length - 1);
        }
        const at = name.startsWith("r") ? hay.lastIndexOf(sub) : hay.indexOf(sub);
        if (at < 0) {
          if (name.endsWith("index")) throw new PyError("ValueError", "substring not found");
          return -1n;
        }
        return BigInt(a + [...hay.slice(0, at)].length);
      });
    case "isdigit":
    case "isdecimal":
    case "isnumeric":
      return simple(s, name, 0, 0, () => s.length > 0 && /^\p{Nd}+$/u.test(s));
    case "isalpha":
      return simple(s, name, 0, 0, () => s.length > 0 && /^\p{L}+$/u.test(s));
    case "isalnum":
      return simple(s, name, 0, 0, () => s.length > 0 && /^[\p{L}\p{Nd}]+$/u.test(s));
    case "isspace":
      return simple(s, name, 0, 0, () => s.length > 0 && pyStrip(s) === "");
    case "isupper":
      return simple(s, name, 0, 0, () => /\p{Lu}/u.test(s) && s === s.toUpperCase() && !/\p{Ll}/u.test(s));
    case "islower":
      return simple(s, name, 0, 0, () => /\p{Ll}/u.test(s) && !/\p{Lu}/u.test(s));
    case "zfill":
      return simple(s, name, 1, 1, ([w]) => {
        const width = Number(w as bigint);
        const n = [...s].length;
        if (n >= width) return s;
        const sign = s[0] === "+" || s[0] === "-" ? s[0] : "";
        return sign + "0".repeat(width - n) + s.slice(sign.length);
      });
    case "center":
    case "ljust":
    case "rjust":
      return simple(s, name, 1, 2, ([w, f]) => {
        const width = Number(w as bigint);
        const fill = f === undefined ? " " : (f as string);
        if ([...fill].length !== 1) throw new PyError("TypeError", "The fill character must be exactly one character long");
        const n = [...s].length;
        if (width <= n) return s;
        if (width > LIMITS.items) throw memoryError("str");
        const total = width - n;
        if (name === "ljust") return s + fill.repeat(total);
        if (name === "rjust") return fill.repeat(total) + s;
        const left = Math.floor(total / 2) + (total & width & 1);
        return fill.repeat(left) + s + fill.repeat(total - left);
      });
  }
  return undefined;
}

function seqMethods(self: PyList | PyTuple, name: string): Val | undefined {
  switch (name) {
    case "count":
      return simple(self, name, 1, 1, ([x]) => BigInt(self.items.filter((y) => y === x || pyEquals(y, x!)).length));
    case "index":
      return simple(self, name, 1, 3, ([x]) => {
        const i = self.items.findIndex((y) => y === x || pyEquals(y, x!));
        if (i < 0) throw new PyError("ValueError", `${self instanceof PyList ? "list.index(x): x not in list" : "tuple.index(x): x not in tuple"}`);
        return BigInt(i);
      });
  }
  if (!(self instanceof PyList)) return undefined;
  const l = self;
  switch (name) {
    case "copy":
      return simple(l, name, 0, 0, () => new PyList([...l.items]));
    case "append":
      return simple(l, name, 1, 1, ([x]) => {
        if (l.items.length >= LIMITS.items) throw memoryError("list");
        l.items.push(x!);
        return null;
      });
    case "extend":
      return simple(l, name, 1, 1, ([x]) => {
        const add = listOf(x!);
        if (l.items.length + add.length > LIMITS.items) throw memoryError("list");
        l.items.push(...add);
        return null;
      });
    case "insert":
      return simple(l, name, 2, 2, ([i, x]) => {
        let k = Number(i as bigint);
        if (k < 0) k = Math.max(0, k + l.items.length);
        l.items.splice(Math.min(k, l.items.length), 0, x!);
        return null;
      });
    case "pop":
      return simple(l, name, 0, 1, ([i]) => {
        if (!l.items.length) throw new PyError("IndexError", "pop from empty list");
        let k = i === undefined ? l.items.length - 1 : Number(i as bigint);
        if (k < 0) k += l.items.length;
        if (k < 0 || k >= l.items.length) throw new PyError("IndexError", "pop index out of range");
        return l.items.splice(k, 1)[0]!;
      });
    case "remove":
      return simple(l, name, 1, 1, ([x]) => {
        const i = l.items.findIndex((y) => y === x || pyEquals(y, x!));
        if (i < 0) throw new PyError("ValueError", "list.remove(x): x not in list");
        l.items.splice(i, 1);
        return null;
      });
    case "reverse":
      return simple(l, name, 0, 0, () => {
        l.items.reverse();
        return null;
      });
    case "clear":
      return simple(l, name, 0, 0, () => {
        l.items.length = 0;
        return null;
      });
    case "sort":
      return bound(l, name, (args, kw) => {
        if (args.length) throw new PyError("TypeError", "sort() takes no positional arguments");
        const rev = kw.has("reverse") && kw.get("reverse") !== false && kw.get("reverse") !== 0n;
        if (kw.has("key") && kw.get("key") !== null) throw new PyError("TypeError", "ehrgym: sort(key=...) is not supported");
        const sorted = stableSort(l.items, rev);
        l.items.splice(0, l.items.length, ...sorted);
        return null;
      });
  }
  return undefined;
}

function stableSort(items: Val[], reverse: boolean): Val[] {
  const idx = items.map((v, i) => [v, i] as const);
  idx.sort((a, b) => {
    const lt = reverse ? order(b[0], a[0], "<") : order(a[0], b[0], "<");
    if (lt) return -1;
    const gt = reverse ? order(a[0], b[0], "<") : order(b[0], a[0], "<");
    return gt ? 1 : a[1] - b[1];
  });
  return idx.map((x) => x[0]);
}

function dictAttr(d: PyDict, name: string): Val | undefined {
  switch (name) {
    case "get":
      return simple(d, name, 1, 2, ([k, dflt]) => d.get(k!) ?? dflt ?? null);
    case "keys":
      return simple(d, name, 0, 0, () => new PyIterView("dict_keys", d));
    case "values":
      return simple(d, name, 0, 0, () => new PyIterView("dict_values", d));
    case "items":
      return simple(d, name, 0, 0, () => new PyIterView("dict_items", d));
    case "copy":
      return simple(d, name, 0, 0, () => {
        const c = new PyDict();
        for (const [k, v] of d.entries.values()) c.set(k, v);
        return c;
      });
  }
  return undefined;
}

function intAttr(i: bigint, self: Val, name: string): Val | undefined {
  switch (name) {
    case "real":
    case "numerator":
      return i;
    case "imag":
      return 0n;
    case "denominator":
      return 1n;
    case "conjugate":
      return simple(self, name, 0, 0, () => i);
    case "bit_length":
      return simple(self, name, 0, 0, () => BigInt(bitLength(i < 0n ? -i : i)));
    case "bit_count":
      return simple(self, name, 0, 0, () => BigInt([...(i < 0n ? -i : i).toString(2)].filter((c) => c === "1").length));
    case "as_integer_ratio":
      return simple(self, name, 0, 0, () => new PyTuple([i, 1n]));
  }
  return undefined;
}

function floatAttr(f: number, name: string): Val | undefined {
  switch (name) {
    case "real":
      return f;
    case "imag":
      return 0;
    case "conjugate":
      return simple(f, name, 0, 0, () => f);
    case "is_integer":
      return simple(f, name, 0, 0, () => Number.isInteger(f));
    case "as_integer_ratio":
      return simple(f, name, 0, 0, () => new PyTuple(asIntegerRatio(f)));
    case "hex":
      return simple(f, name, 0, 0, () => floatHex(f));
  }
  return undefined;
}

/** Attributes of int, float, bool, str, None and the containers; undefined when Python has none (or ehrgym lacks it). */
export function valueAttr(v: Val, name: string): Val | undefined {
  if (typeof v === "string") return strAttr(v, name);
  if (typeof v === "bigint") return intAttr(v, v, name);
  if (typeof v === "boolean") return intAttr(v ? 1n : 0n, v, name);
  if (typeof v === "number") return floatAttr(v, name);
  if (v instanceof PyList || v instanceof PyTuple) return seqMethods(v, name);
  if (v instanceof PyDict) return dictAttr(v, name);
  if (v instanceof PySet && name === "copy") return simple(v, name, 0, 0, () => new PySet([...v.entries.values()], v.frozen));
  if (v instanceof PyBytes && name === "decode") return simple(v, name, 0, 0, () => new TextDecoder("utf-8", { fatal: true }).decode(v.bytes));
  return undefined;
}
