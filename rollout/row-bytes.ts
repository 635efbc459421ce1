// A row's transcript as a request body already sent it: the model policy hands over the UTF-8 JSON of
// the messages of an episode's last request, and the row's line is written with those bytes instead of
// encoding the same messages a second time (the two encodings were ~10% of the runner's CPU a turn).

/** The JSON of a conversation's first `count` messages, `m0,m1,...` (JSON.stringify of each, joined by
 *  commas), as a request body sent them; valid until `done()`, which gives their buffer back. */
export interface SentMessages {
  count: number;
  bytes: Uint8Array;
  done(): void;
}

const sent = new WeakMap<object, SentMessages>();

/** Notes that `row.messages` starts with the messages of `bytes` (the caller has checked it). */
export function attachSentMessages(row: object, bytes: SentMessages): void {
  sent.get(row)?.done();
  sent.set(row, bytes);
}

/** The bytes attached to `row`, now the caller's to write and give back (`done()`). */
export function takeSentMessages(row: object): SentMessages | undefined {
  const bytes = sent.get(row);
  sent.delete(row);
  return bytes;
}
