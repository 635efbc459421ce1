// The `ehrgym` command. Only the module of the command asked for is loaded (`ehrgym --help` loads
// none), so a command starts in the time Node and its own imports take.
import { createRequire } from "node:module";
import { Command, CommanderError } from "commander";
import { StateError, StorageError, UserError } from "../env/util/index.ts";
import { stopWithParent } from "./commands/under-npm.ts";

type Register = (program: Command) => void;

/** Each top-level command: its one-line description (as its module registers it; a test compares
 *  them) and how to load its module. */
const COMMANDS: Record<string, { description: string; load: () => Promise<Register> }> = {
  fhir: {
    description: "the embedded FHIR R4 server: serve, snapshot a live server, import and export NDJSON",
    load: async () => (await import("./commands/fhir.ts")).registerFhir,
  },
  ehr: {
    description: "the synthetic EHR: generate a population, describe an export",
    load: async () => (await import("./commands/ehr.ts")).registerEhr,
  },
  tasks: {
    description: "task sets: generate branch-balanced tasks, select a curriculum from eval rows, show their balance",
    load: async () => (await import("./commands/tasks.ts")).registerTasks,
  },
  eval: {
    description: "Run a policy over tasks on the embedded EHR; JSONL per episode + success rates (resumable)",
    load: async () => (await import("./commands/eval.ts")).registerEval,
  },
  serve: {
    description: "HTTP reward server for trainers (episodes, steps, score; JSON or MessagePack)",
    load: async () => (await import("./commands/serve.ts")).registerServe,
  },
  rollout: {
    description: "Drive an OpenAI-compatible teacher model through training episodes; JSONL per episode (resumable, shardable)",
    load: async () => (await import("./commands/rollout.ts")).registerRollout,
  },
  teacher: {
    description: "the stand-in teacher: an OpenAI-compatible server that plays the scripted expert (not a model)",
    load: async () => (await import("./commands/teacher.ts")).registerTeacher,
  },
  dataset: {
    description: "SFT datasets from rollout rows: build, inspect, validate, push to the Hugging Face Hub",
    load: async () => (await import("./commands/dataset.ts")).registerDataset,
  },
  report: {
    description:
      "Report on one or more eval/rollout runs: tables with Wilson intervals, charts (SVG + PNG), run-vs-run diff with exact McNemar tests, transcripts",
    load: async () => (await import("./commands/report.ts")).registerReport,
  },
};

const program = new Command()
  .name("ehrgym")
  .description("RL environment, FHIR R4 server and trajectory generator for clinical EHR agents (MedAgentBench-compatible)")
  // The package's own package.json by its published name, the same path from the sources and from dist/.
  .version((createRequire(import.meta.url)("ehrgym/package.json") as { version: string }).version, "-V, --version")
  .showHelpAfterError()
  .exitOverride();

const words = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const asked = words[0] === "help" ? words[1] : words[0];
if (asked !== undefined && Object.hasOwn(COMMANDS, asked)) {
  (await COMMANDS[asked]!.load())(program);
} else {
  // Help or a mistake: the commands by name and description, none of their modules loaded.
  for (const [name, { description }] of Object.entries(COMMANDS)) program.command(name).description(description);
}

stopWithParent();
try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exit(err.exitCode === 0 ? 0 : 2);
  }
  // The user's mistake or a wrong state: one line, exit 2. Anything else is a fault: the stack, exit 1.
  if (err instanceof UserError || err instanceof StateError) {
    process.stderr.write(`ehrgym: ${err.message}\n`);
    process.exit(2);
  }
  // The machine refused a write (full disk, I/O error): one line naming the file, exit 1; no stack, as no code is at fault.
  if (err instanceof StorageError) {
    process.stderr.write(`ehrgym: ${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`ehrgym: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}
