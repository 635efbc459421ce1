import type { FhirReader } from "../fhir/index.ts";
import type { Action, EpisodeStatus, Protocol, V2Semantics } from "../protocol/index.ts";
import type { Task } from "../tasks/index.ts";

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface GradeResult {
  reward: 0 | 1;
  checks: Check[];
  /** passed checks / total checks (a shaped reward; binary `reward` is the default). */
  partialCredit: number;
}

export interface GradeInput {
  task: Task;
  protocol: Protocol;
  status: EpisodeStatus;
  /** Every agent item in order: the text protocol's turns, or the tool protocol's history items
   *  (`historyActions`), each with the item after it as `reply`. */
  actions: Action[];
  /** The FINISH string (`r[7:-1]` in the text protocol; json.dumps of the finish value, or "[]", in the tool protocol). */
  result?: string;
  /** The base data as it was before the episode (never the overlay). */
  base: FhirReader;
  /** FHIR base URL with a trailing slash, e.g. http://localhost:8080/fhir/ */
  apiBase: string;
  /** Tool protocol: `medarc` reproduces the verifiers port's graders (task1 measured from the wall clock). */
  v2Semantics?: V2Semantics;
}

export type Grader = (input: GradeInput) => GradeResult;
