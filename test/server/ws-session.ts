// A /ws session through the `ws` client: `ask` sends one message and resolves with the next reply
// in order, or with {closed, reason} once the server has closed the connection.
import WebSocket from "ws";

export interface Closed {
  closed: number;
  reason: string;
}

export interface WsSession {
  ws: WebSocket;
  /** Sends `msg` as is when it is a string or bytes, else as JSON. */
  ask(msg: unknown, binary?: boolean): Promise<any>;
  /** Resolves with the close code. */
  closed: Promise<number>;
  isClosed(): boolean;
}

export async function wsSession(url: string, headers: Record<string, string> = {}): Promise<WsSession> {
  const ws = new WebSocket(url.replace("http://", "ws://") + "/ws", { headers });
  const replies: any[] = [];
  const waiting: ((v: any) => void)[] = [];
  let ended: Closed | undefined;
  ws.on("message", (data) => {
    const msg = JSON.parse(data.toString());
    const w = waiting.shift();
    if (w) w(msg);
    else replies.push(msg);
  });
  const closed = new Promise<number>((resolve) =>
    ws.on("close", (code, reason) => {
      ended = { closed: code, reason: reason.toString() };
      for (const w of waiting.splice(0)) w(ended);
      resolve(code);
    }),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  ws.on("error", () => undefined); // a refused frame ends in "close", which answers every waiting ask
  const ask = (msg: unknown, binary = false): Promise<any> => {
    if (ended) return Promise.resolve(ended);
    ws.send(typeof msg === "string" || Buffer.isBuffer(msg) ? msg : JSON.stringify(msg), { binary });
    return new Promise((resolve) => (replies.length ? resolve(replies.shift()) : waiting.push(resolve)));
  };
  return { ws, ask, closed, isClosed: () => ended !== undefined };
}
