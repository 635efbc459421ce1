import type { Command } from "commander";

export function registerFhir(program: Command): void {
  void program;
}
