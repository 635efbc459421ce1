// Request bodies nested too deep: both servers refuse them with a 400 naming the limit (parsers and
// validators that recurse would otherwise overflow the stack and answer 500).
/** The deepest JSON nesting a server accepts in a request body (objects and arrays). */
export const MAX_NESTING = 100;

/** Is `value` nested deeper than `limit` objects/arrays? Iterative: safe on any depth. */
export function nestedDeeperThan(value: unknown, limit: number = MAX_NESTING): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object" || ArrayBuffer.isView(v)) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

/** The 400 message for a body nested too deep. */
export const nestingMessage = (limit: number = MAX_NESTING) => `nested deeper than ${limit} levels of objects and arrays (the limit)`;
