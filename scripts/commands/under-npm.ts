// A command started by npm stops when npm is told to stop (`npm run ehrgym -- serve & ... kill $!`),
// though npm signals only the shell between them. Called by `ehrgym` and by `npm start`'s pipeline.
import { readFileSync } from "node:fs";

/** The shells npm runs a command through (`sh -c`), by the name /proc gives them. */
const SHELLS = new Set(["sh", "dash", "bash", "ash", "ksh", "mksh", "zsh"]);

/**
 * Times the process `pid` woke up after sleeping, from Linux's /proc, when it sleeps now (a shell
 * that forked its command sleeps from the moment it waits for it); undefined otherwise.
 */
function wakeupsAsleep(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    if (!/^State:\s*S/m.test(status)) return undefined;
    return Number(/^voluntary_ctxt_switches:\s*(\d+)/m.exec(status)?.[1]);
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
 * Under npm (`npm run ehrgym`, `npm start`, `npx ehrgym` where ehrgym is installed) a shell (`sh -c`) stands between npm
 * and this process, and npm passes SIGINT and SIGTERM to that shell only. On SIGTERM the shell
 * dies: a process whose parent went away stops as if sent SIGTERM. On SIGINT a shell waiting for its command (dash, the
 * `sh` of Debian and Ubuntu) stays, waiting for the command to end, as if it had been Ctrl-C'd
 * with it. Waiting, the shell sleeps; it wakes up only for a signal it handles: SIGINT, or the
 * SIGCHLD of this process stopping and continuing (Ctrl-Z, then `fg`: this process gets SIGCONT).
 * So a wake-up of the shell with no SIGCONT here is taken as SIGINT.
 */
export function stopWithParent(): void {
  if (!process.env.npm_command) return;
  const parent = process.ppid;
  const shell = isShellOfOneCommand(parent);
  let continued = false;
  if (shell) {
    process.on("SIGCONT", () => (continued = true));
    // A SIGINT this process got itself (Ctrl-C signals the terminal's whole foreground group, the
    // shell too): the shell's wake-up is that same Ctrl-C, not a second one ("Ctrl-C again to quit").
    const direct = () => {
      clearInterval(timer);
      process.off("SIGINT", direct);
      // Alone, this listener would keep SIGINT from ending the process: end it as Node would.
      if (process.listenerCount("SIGINT") === 0) process.kill(process.pid, "SIGINT");
    };
    process.on("SIGINT", direct);
  }
  let seen = shell ? wakeupsAsleep(parent) : undefined;
  let suspect = false;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      process.kill(process.pid, "SIGTERM");
      return;
    }
    if (!shell) return;
    const now = wakeupsAsleep(parent);
    if (continued) {
      continued = false;
      suspect = false;
      seen = now;
    } else if (suspect) {
      clearInterval(timer);
      process.kill(process.pid, "SIGINT");
    } else if (seen === undefined) {
      seen = now; // the first count taken while the shell waits
    } else if (now !== undefined && now !== seen) {
      suspect = true; // decided one period later: a SIGCONT may be on its way
    }
  }, 250).unref();
}
