// `npm run bench [-- fhir ehr env server]`: runs every bench section (or the named ones) in order.
// With more than one section, each runs in a fresh Node process: a section's figures must not
// depend on the heap (and GC state) the sections before it left behind.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const sections: Record<string, () => Promise<{ run: () => Promise<void> }>> = {
  ehr: () => import("./ehr.ts"),
  fhir: () => import("./fhir.ts"),
  "fhir-http": () => import("./fhir-http.ts"),
  env: () => import("./env.ts"),
  server: () => import("./server.ts"),
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const names = wanted.length ? wanted : Object.keys(sections);
const unknown = names.filter((n) => !(n in sections));
if (unknown.length) {
  console.error(`unknown bench section "${unknown[0]}"; known: ${Object.keys(sections).join(", ")}`);
  process.exit(2);
}

if (names.length === 1) {
  console.log(`\n== ${names[0]} ==`);
  await (await sections[names[0]!]!()).run();
} else {
  let failed = 0;
  for (const name of names) {
    const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), name], { stdio: "inherit" });
    if (child.status !== 0) {
      failed++;
      console.error(`bench section "${name}" failed (exit ${child.status ?? child.signal})`);
    }
  }
  if (failed) process.exit(1);
}
