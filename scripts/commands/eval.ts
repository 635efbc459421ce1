import type { Command } from "commander";

export function registerEval(program: Command): void {
  void program;
}
