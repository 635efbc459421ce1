// The reward server over the fixture backend as a child process (`node --import tsx`): probes that
// could kill a process run against this one, so a crash shows as its exit, not as the test runner's.
// argv[2]: RewardServerOptions as JSON (backend aside). Prints {"url"} on stdout once listening.
import { createRewardServer } from "../../env/server/index.ts";
import { fixtureBackend } from "./fixture-backend.ts";

const options = JSON.parse(process.argv[2] ?? "{}") as Record<string, unknown>;
const server = createRewardServer({ backend: fixtureBackend(), ...options });
const url = await server.listen(0);
process.stdout.write(`${JSON.stringify({ url })}\n`);
