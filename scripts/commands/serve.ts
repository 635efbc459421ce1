import type { Command } from "commander";

export function registerServe(program: Command): void {
  void program;
}
