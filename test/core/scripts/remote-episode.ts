// Child process for the kill-and-restart test: opens a RemoteBackend episode, creates resources on the
// server, reports their ids on stdout, then waits to be killed.
import { MedAgentEnv, RemoteBackend } from "../../../env/core/index.ts";

const [url, journal, mrn, count] = process.argv.slice(2) as [string, string, string, string];
const backend = await RemoteBackend.create({ url, journal });
const env = new MedAgentEnv({ backend });
await env.reset({ task: { id: "crash", suite: "mab-v1", type: "task1", instruction: "q", context: "", eval_MRN: mrn }, maxRounds: 100 });
const ids: string[] = [];
for (let i = 0; i < Number(count); i++) {
  const body = { resourceType: "Observation", status: "final", code: { text: "BP" }, subject: { reference: `Patient/${mrn}` }, valueString: `${i}`, effectiveDateTime: "2023-11-13T10:15:00+00:00", category: [{ coding: [{ code: "vital-signs" }] }] };
  await env.step(`POST ${url}Observation\n${JSON.stringify(body)}`);
  const res = env.record().actions.at(-1)!.response!;
  ids.push((JSON.parse(res.text) as { id: string }).id);
}
process.stdout.write(`CREATED ${ids.join(",")}\n`);
setInterval(() => {}, 1000);
