#!/usr/bin/env -S npx tsx
import { Command, CommanderError } from "commander";
import { UsageError } from "./commands/common.ts";
import { registerFhir } from "./commands/fhir.ts";
import { registerEhr } from "./commands/ehr.ts";
import { registerTasks } from "./commands/tasks.ts";
import { registerEval } from "./commands/eval.ts";
import { registerServe } from "./commands/serve.ts";
import { registerRollout } from "./commands/rollout.ts";
import { registerTeacher } from "./commands/teacher.ts";
import { registerDataset } from "./commands/dataset.ts";
import { registerReport } from "./commands/report.ts";

const program = new Command()
  .name("ehrgym")
  .description("RL environment, FHIR R4 server and trajectory generator for clinical EHR agents (MedAgentBench-compatible)")
  .showHelpAfterError()
  .exitOverride();

registerFhir(program);
registerEhr(program);
registerTasks(program);
registerEval(program);
registerServe(program);
registerRollout(program);
registerTeacher(program);
registerDataset(program);
registerReport(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exit(err.exitCode === 0 ? 0 : 2);
  }
  if (err instanceof UsageError) {
    process.stderr.write(`ehrgym: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`ehrgym: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}
