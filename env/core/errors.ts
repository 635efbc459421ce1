import { StateError, UserError } from "../util/index.ts";

/** Calling reset/step in the wrong state (no episode, episode already ended). */
export class EpisodeStateError extends StateError {}

/** Bad reset options or agent turn (unknown task id, malformed message). */
export class EnvInputError extends UserError {}
