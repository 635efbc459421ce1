import type { FhirReader } from "../fhir/index.ts";
import type { Action, EpisodeStatus, Protocol, V2Semantics } from "../protocol/index.ts";
import type { Task } from "../tasks/index.ts";

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** workflows: one requested rule's verdict. */
export interface Checkpoint {
  rule: string;
  /** The rule it restates, e.g. "mab-v2 task2". */
  source: string;
  ok: boolean;
}

export interface GradeResult {
  reward: 0 | 1;
  checks: Check[];
  /** passed checks / total checks (workflows: passed checkpoints / checkpoints); a shaped reward, binary `reward` is the default. */
  partialCredit: number;
  /** workflows: each requested rule's verdict, in the order asked. */
  checkpoints?: Checkpoint[];
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
  /** The chart as the episode left it (base + its executed writes); absent when writes were only recorded. */
  chart?: FhirReader;
  /** FHIR base URL with a trailing slash, e.g. http://localhost:8080/fhir/ */
  apiBase: string;
  /** Tool protocol: `medarc` reproduces the verifiers port's graders (task1 measured from the wall clock). */
  v2Semantics?: V2Semantics;
}

export type Grader = (input: GradeInput) => GradeResult;
