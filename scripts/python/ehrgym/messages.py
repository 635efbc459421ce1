"""Chat messages as trainers produce them, made into the shape the server parses."""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List

from .results import Message

_ROLES = ("system", "user", "assistant", "tool")


def _text(content: Any) -> Any:
    """Content parts ([{type: "text", text}]) joined into one string; strings and None unchanged."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content


def to_server_messages(messages: Iterable[Dict[str, Any]]) -> List[Message]:
    """TRL/verifiers messages to the server's: tool-call arguments as JSON text, every call an id."""
    out: List[Message] = []
    n = 0
    for m in messages:
        if m.get("role") not in _ROLES:
            continue
        msg: Message = {"role": m["role"], "content": _text(m.get("content"))}
        calls = m.get("tool_calls")
        if calls:
            fixed = []
            for call in calls:
                fn = call.get("function", call)
                args = fn.get("arguments", {})
                fixed.append({"id": call.get("id") or f"call_{n}", "type": "function", "function": {"name": fn["name"], "arguments": args if isinstance(args, str) else json.dumps(args)}})
                n += 1
            msg["tool_calls"] = fixed
        for key in ("tool_call_id", "name"):
            if isinstance(m.get(key), str):
                msg[key] = m[key]
        out.append(msg)
    return out
