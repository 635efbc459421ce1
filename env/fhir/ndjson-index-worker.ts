// Worker thread of NdjsonIndexStream (ndjson.ts): indexes NDJSON text as it is written.
import { parentPort, workerData } from "node:worker_threads";
import { indexWorkerMain } from "./ndjson.ts";

indexWorkerMain(parentPort!, (workerData as { shared: Int32Array }).shared);
