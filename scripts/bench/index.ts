// `npm run bench [-- fhir ehr env server]`: runs every bench section (or the named ones) in order,
// each in a fresh Node process (a section's figures must not depend on the heap and GC state the
// sections before it left behind) with Node's defaults, as the ehrgym CLI runs, unless the section
// names its own V8 settings (the reward server section: its process is the load generator).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const IN_CHILD = "EHRGYM_BENCH_SECTION";

/** A section module; `sectionNodeOptions`: V8 settings of the section's own process. */
type Section = { run: () => Promise<void>; sectionNodeOptions?: string[] };

const sections: Record<string, () => Promise<Section>> = {
  ehr: () => import("./ehr.ts"),
  fhir: () => import("./fhir.ts"),
  "fhir-http": () => import("./fhir-http.ts"),
  env: () => import("./env.ts"),
  calculator: () => import("./calculator.ts"),
  server: () => import("./server.ts"),
  "slow-search": () => import("./slow-search.ts"),
  scale: () => import("./scale.ts"),
  rollout: () => import("./rollout.ts"),
  datasets: () => import("./datasets.ts"),
  cli: () => import("./cli.ts"),
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const names = wanted.length ? wanted : Object.keys(sections);
const unknown = names.filter((n) => !(n in sections));
if (unknown.length) {
  console.error(`unknown bench section "${unknown[0]}"; known: ${Object.keys(sections).join(", ")}`);
  process.exit(2);
}

if (process.env[IN_CHILD] === names[0] && names.length === 1) {
  console.log(`\n== ${names[0]} ==`);
  await (await sections[names[0]!]!()).run();
} else {
  let failed = 0;
  for (const name of names) {
    const flags = (await sections[name]!()).sectionNodeOptions ?? [];
    const child = spawnSync(process.execPath, [...flags, ...process.execArgv, fileURLToPath(import.meta.url), name], {
      stdio: "inherit",
      env: { ...process.env, [IN_CHILD]: name },
    });
    if (child.status !== 0) {
      failed++;
      console.error(`bench section "${name}" failed (exit ${child.status ?? child.signal})`);
    }
  }
  if (failed) process.exit(1);
}
