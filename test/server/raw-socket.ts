// A WebSocket client that writes any bytes after the handshake (the `ws` client only sends valid
// frames) and reads the server's frames until it closes the connection.
import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

export interface FrameSpec {
  opcode: number;
  payload: Buffer;
  fin?: boolean;
  /** Client frames must be masked; false sends one without the mask bit. */
  masked?: boolean;
  rsv?: number;
  /** The length the header declares (default: the payload's). */
  declared?: number;
}

/** One frame's bytes (RFC 6455 section 5.2). */
export function frame(spec: FrameSpec): Buffer {
  const { opcode, payload, fin = true, masked = true, rsv = 0 } = spec;
  const length = spec.declared ?? payload.length;
  const head: number[] = [(fin ? 0x80 : 0) | ((rsv & 7) << 4) | (opcode & 0x0f)];
  const maskBit = masked ? 0x80 : 0;
  if (length < 126) head.push(maskBit | length);
  else if (length < 65536) head.push(maskBit | 126, length >> 8, length & 0xff);
  else {
    head.push(maskBit | 127);
    const big = Buffer.alloc(8);
    big.writeBigUInt64BE(BigInt(length));
    head.push(...big);
  }
  if (!masked) return Buffer.concat([Buffer.from(head), payload]);
  const mask = randomBytes(4);
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i]! ^= mask[i % 4]!;
  return Buffer.concat([Buffer.from(head), mask, body]);
}

export const textFrame = (text: string) => frame({ opcode: 1, payload: Buffer.from(text) });

export interface ServerFrame {
  opcode: number;
  payload: Buffer;
}

export interface RawExchange {
  /** Status line of the handshake reply. */
  status: string;
  /** The reply's body when the handshake was refused. */
  refusal?: string;
  frames: ServerFrame[];
  /** The close frame's code and reason, when the server sent one. */
  close?: { code: number; reason: string };
}

function parseFrames(data: Buffer): ServerFrame[] {
  const frames: ServerFrame[] = [];
  let at = 0;
  while (at + 2 <= data.length) {
    const opcode = data[at]! & 0x0f;
    let length = data[at + 1]! & 0x7f;
    let start = at + 2;
    if (length === 126) {
      length = data.readUInt16BE(start);
      start += 2;
    } else if (length === 127) {
      length = Number(data.readBigUInt64BE(start));
      start += 8;
    }
    if (start + length > data.length) break;
    frames.push({ opcode, payload: data.subarray(start, start + length) });
    at = start + length;
  }
  return frames;
}

/**
 * Opens /ws on `url`, writes `bytes` after the handshake and collects what the server sends until
 * it closes the connection, or until `enough(frames)` (then the client hangs up).
 * `abrupt`: destroy the socket right after writing (a client that vanishes).
 */
export function rawExchange(url: string, bytes: Buffer, options: { headers?: Record<string, string>; enough?: (frames: ServerFrame[]) => boolean; abrupt?: boolean } = {}): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(port), hostname);
    let buffer = Buffer.alloc(0);
    let status: string | undefined;
    let body = Buffer.alloc(0);
    const finish = () => {
      const frames = parseFrames(body);
      const closeFrame = frames.find((f) => f.opcode === 8);
      const line = status ?? buffer.toString("latin1").split("\r\n")[0]!;
      resolve({
        status: line,
        ...(line.includes(" 101 ") ? {} : { refusal: body.toString("utf8") }),
        frames,
        ...(closeFrame ? { close: { code: closeFrame.payload.length >= 2 ? closeFrame.payload.readUInt16BE(0) : 1005, reason: closeFrame.payload.subarray(2).toString("utf8") } } : {}),
      });
    };
    socket.on("error", (err: NodeJS.ErrnoException) => (err.code === "ECONNRESET" || err.code === "EPIPE" ? undefined : reject(err)));
    socket.on("close", finish);
    socket.on("data", (chunk: Buffer) => {
      if (status === undefined) {
        buffer = Buffer.concat([buffer, chunk]);
        const end = buffer.indexOf("\r\n\r\n");
        if (end === -1) return;
        status = buffer.subarray(0, buffer.indexOf("\r\n")).toString("latin1");
        body = buffer.subarray(end + 4);
        if (!status.includes(" 101 ")) return;
        socket.write(bytes);
        if (options.abrupt) socket.destroy();
      } else body = Buffer.concat([body, chunk]);
      const frames = parseFrames(body);
      if (frames.some((f) => f.opcode === 8)) socket.end();
      else if (options.enough?.(frames)) socket.end(frame({ opcode: 8, payload: Buffer.from([0x03, 0xe8]) }));
    });
    const headers = {
      Host: `${hostname}:${port}`,
      Upgrade: "websocket",
      Connection: "Upgrade",
      "Sec-WebSocket-Key": randomBytes(16).toString("base64"),
      "Sec-WebSocket-Version": "13",
      ...options.headers,
    };
    socket.write(`GET /ws HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`);
  });
}
