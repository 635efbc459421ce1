// `npm run bench [-- fhir ehr env server]`: runs every bench section (or the named ones) in order.
const sections: Record<string, () => Promise<{ run: () => Promise<void> }>> = {
  ehr: () => import("./ehr.ts"),
  fhir: () => import("./fhir.ts"),
  "fhir-http": () => import("./fhir-http.ts"),
  env: () => import("./env.ts"),
  server: () => import("./server.ts"),
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const names = wanted.length ? wanted : Object.keys(sections);
for (const name of names) {
  const load = sections[name];
  if (!load) {
    console.error(`unknown bench section "${name}"; known: ${Object.keys(sections).join(", ")}`);
    process.exit(2);
  }
  console.log(`\n== ${name} ==`);
  await (await load()).run();
}
