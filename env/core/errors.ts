/** Calling reset/step in the wrong state (no episode, episode already ended): HTTP 409 territory. */
export class EpisodeStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EpisodeStateError";
  }
}

/** Bad reset options or agent turn (unknown task id, malformed message): HTTP 400 territory. */
export class EnvInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EnvInputError";
  }
}
