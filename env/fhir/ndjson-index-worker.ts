// Worker thread of NdjsonIndexStream (ndjson-index-stream.ts): indexes NDJSON text as it is written.
import { parentPort, workerData } from "node:worker_threads";
import { indexWorkerMain } from "./ndjson-index-stream.ts";

indexWorkerMain(parentPort!, (workerData as { shared: Int32Array }).shared);
