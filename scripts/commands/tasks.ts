import type { Command } from "commander";

export function registerTasks(program: Command): void {
  void program;
}
