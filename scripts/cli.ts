// The `ehrgym` command. Only the module of the command asked for is loaded (`ehrgym --help` loads
// none), so a command starts in the time Node and its own imports take.
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { StateError, UserError } from "../env/util/index.ts";

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
    description: "task sets: generate branch-balanced tasks, show their balance",
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

/** The shells npm runs a command through (`sh -c`), by the name /proc gives them. */
const SHELLS = new Set(["sh", "dash", "bash", "ash", "ksh", "mksh", "zsh"]);

/** Times the process `pid` woke up after sleeping, from Linux's /proc; undefined elsewhere. */
function wakeups(pid: number): number | undefined {
  try {
    return Number(/^voluntary_ctxt_switches:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a shell running one simple command (`sh -c 'ehrgym' serve ...`, as npm starts
 *  it): such a shell has no other child to wake it up. */
function isShellOfOneCommand(pid: number): boolean {
  try {
    if (!SHELLS.has(readFileSync(`/proc/${pid}/comm`, "utf8").trim())) return false;
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    const script = argv[argv.indexOf("-c") + 1];
    return script !== undefined && !/[;&|\n`$()]/.test(script.replace(/'[^']*'/g, ""));
  } catch {
    return false;
  }
}

/**
 * Under npm (`npx ehrgym`, `npm run ehrgym`) a shell (`sh -c`) stands between npm and this process,
 * and npm passes SIGINT and SIGTERM to that shell only. On SIGTERM the shell dies: a process whose
 * parent went away stops as if sent SIGTERM. On SIGINT a shell waiting for its command (dash, the
 * `sh` of Debian and Ubuntu) stays, waiting for the command to end, as if it had been Ctrl-C'd
 * with it. Waiting, the shell sleeps; it wakes up only for a signal it handles: SIGINT, or the
 * SIGCHLD of this process stopping and continuing (Ctrl-Z, then `fg`: this process gets SIGCONT).
 * So a wake-up of the shell with no SIGCONT here is taken as SIGINT.
 */
function stopWithParent(): void {
  if (!process.env.npm_command) return;
  const parent = process.ppid;
  const shell = isShellOfOneCommand(parent);
  let continued = false;
  if (shell) process.on("SIGCONT", () => (continued = true));
  let seen: number | undefined;
  let suspect = false;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      process.kill(process.pid, "SIGTERM");
      return;
    }
    if (!shell) return;
    const now = wakeups(parent);
    if (continued) {
      continued = false;
      suspect = false;
      seen = now;
    } else if (suspect) {
      clearInterval(timer);
      process.kill(process.pid, "SIGINT");
    } else if (seen !== undefined && now !== seen) {
      suspect = true; // decided one period later: a SIGCONT may be on its way
    } else seen = now;
  }, 250).unref();
}

const program = new Command()
  .name("ehrgym")
  .description("RL environment, FHIR R4 server and trajectory generator for clinical EHR agents (MedAgentBench-compatible)")
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
  process.stderr.write(`ehrgym: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}
