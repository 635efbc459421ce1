import type { Command } from "commander";

export function registerEhr(program: Command): void {
  void program;
}
