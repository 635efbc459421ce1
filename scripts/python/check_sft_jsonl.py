#!/usr/bin/env python3
"""Check SFT JSONL files with the standard library only: every line parses as a JSON object with a
non-empty `messages` list, and every message has a role and either content or tool calls.

    python3 scripts/python/check_sft_jsonl.py ds/data/*.jsonl ds/openai/*.jsonl

Exit 0 when every file passes, 1 with one line per problem (the first 20 per file) otherwise."""
import json
import sys

ROLES = {"system", "user", "assistant", "tool"}


def check_file(path):
    problems = []
    rows = 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            rows += 1
            where = f"{path}:{n}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                problems.append(f"{where}: not JSON ({e.msg})")
                continue
            messages = row.get("messages") if isinstance(row, dict) else None
            if not isinstance(messages, list) or not messages:
                problems.append(f"{where}: no messages list")
                continue
            for i, m in enumerate(messages):
                if not isinstance(m, dict) or m.get("role") not in ROLES:
                    problems.append(f"{where}: messages[{i}]: no valid role")
                    continue
                content = m.get("content")
                calls = m.get("tool_calls")
                if not isinstance(content, str) and not (isinstance(calls, list) and calls):
                    problems.append(f"{where}: messages[{i}] ({m['role']}): neither content nor tool_calls")
                for j, c in enumerate(calls or []):
                    try:
                        json.loads(c["function"]["arguments"])
                    except (KeyError, TypeError, json.JSONDecodeError):
                        problems.append(f"{where}: messages[{i}].tool_calls[{j}]: arguments is not a JSON string")
    return rows, problems


def main(paths):
    if not paths:
        print("usage: check_sft_jsonl.py FILE.jsonl...", file=sys.stderr)
        return 2
    failed = False
    for path in paths:
        rows, problems = check_file(path)
        for p in problems[:20]:
            print(p)
        if len(problems) > 20:
            print(f"{path}: {len(problems) - 20} more problems")
        if problems or rows == 0:
            failed = True
            if rows == 0:
                print(f"{path}: no rows")
        else:
            print(f"{path}: {rows} rows ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
