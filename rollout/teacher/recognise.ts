// Which task a conversation is about: its first user message holds the task's instruction (and
// context), whatever template wrapped them. Looked up once per distinct prompt.
import type { Message } from "../../env/core/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { textDigest } from "./digest.ts";
import { LRUCache } from "lru-cache";
import { groupBy } from "../../env/util/index.ts";

export class TaskIndex {
  private readonly byInstruction: Map<string, Task[]>;
  private readonly all: Task[];
  private readonly seen = new LRUCache<string, Task | false>({ max: 20_000 });

  constructor(tasks: Iterable<Task>) {
    this.all = [...tasks];
    this.byInstruction = groupBy(this.all, (t) => t.instruction);
  }

  get size(): number {
    return this.all.length;
  }

  /** The task of the conversation, or undefined when no task's instruction and context appear in its first user message. */
  recognise(messages: readonly Message[]): Task | undefined {
    const prompt = messages.find((m) => m.role === "user")?.content;
    if (!prompt) return undefined;
    const key = textDigest(prompt);
    const cached = this.seen.get(key);
    if (cached !== undefined) return cached || undefined;
    const task = this.find(prompt);
    this.seen.set(key, task ?? false);
    return task;
  }

  private find(prompt: string): Task | undefined {
    // Both of ehrgym's prompts end with "Question: {instruction}": one map lookup.
    const at = prompt.lastIndexOf("Question: ");
    if (at >= 0) {
      const hit = this.best(this.byInstruction.get(prompt.slice(at + "Question: ".length).trimEnd()) ?? [], prompt);
      if (hit) return hit;
    }
    const direct = this.best(this.byInstruction.get(prompt.trim()) ?? [], prompt);
    if (direct) return direct;
    // Any other template: the task whose instruction and context both appear, the longest match first.
    return this.best(this.all.filter((t) => t.instruction.length > 0 && prompt.includes(t.instruction)), prompt);
  }

  /** The longest task (instruction and context) whose context appears in the prompt; the first of equals. */
  private best(candidates: readonly Task[], prompt: string): Task | undefined {
    const size = (t: Task) => t.instruction.length + t.context.length;
    let best: Task | undefined;
    for (const t of candidates) if ((!t.context || prompt.includes(t.context)) && (!best || size(t) > size(best))) best = t;
    return best;
  }
}
