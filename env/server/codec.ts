// Body encodings: JSON (default) and MessagePack, chosen by Content-Type (requests) and Accept (replies).
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import msgpack from "msgpack-lite";
import { contentPieces, jsonPiecesWithMessages, utf8Length, utf8Of, writeUtf8, type Message } from "../core/index.ts";
import { HttpError } from "./errors.ts";

// msgpack-lite's default codec revives JS-specific ext types (Error, Date, typed arrays); clients
// only send plain data, so use a codec without them. DecodeBuffer exposes the offset, which lets
// us reject trailing bytes that msgpack.decode silently ignores.
const codec = msgpack.createCodec({ preset: false });
type DecodeBufferT = { write(chunk: Buffer): void; read(): unknown; offset: number };
const { DecodeBuffer } = createRequire(import.meta.url)("msgpack-lite/lib/decode-buffer.js") as {
  DecodeBuffer: new (options: { codec: unknown }) => DecodeBufferT;
};

export type Encoding = "json" | "msgpack";

const MSGPACK_TYPES = ["application/msgpack", "application/x-msgpack", "application/vnd.msgpack"];
const CONTENT_TYPE: Record<Encoding, string> = { json: "application/json", msgpack: "application/msgpack" };

function mediaType(header: string | undefined): string {
  return (header ?? "").split(";")[0]!.trim().toLowerCase();
}

/** The request body's encoding; 415 for anything but JSON or MessagePack. */
export function requestEncoding(contentType: string | undefined): Encoding {
  const type = mediaType(contentType);
  // curl -d and fetch(string) label JSON text as form data / text/plain: read those as JSON too.
  if (type === "" || type === "application/json" || type.endsWith("+json") || type === "text/plain" || type === "application/x-www-form-urlencoded") return "json";
  if (MSGPACK_TYPES.includes(type)) return "msgpack";
  throw new HttpError(415, `Content-Type: unsupported "${type}" (use application/json or application/msgpack)`, "Content-Type");
}

/** The reply encoding: MessagePack when Accept asks for it, or when Accept is absent and the request was MessagePack. */
export function replyEncoding(accept: string | undefined, request: Encoding): Encoding {
  if (!accept || accept === "*/*") return request;
  const lower = accept.toLowerCase();
  if (MSGPACK_TYPES.some((t) => lower.includes(t))) return "msgpack";
  return "json";
}

export function decodeBody(body: Buffer, encoding: Encoding): unknown {
  if (body.length === 0) return {};
  if (encoding === "json") {
    try {
      return JSON.parse(body.toString("utf8"));
    } catch (err) {
      throw new HttpError(400, `body: not valid JSON (${(err as Error).message})`, "body");
    }
  }
  let value: unknown;
  const decoder = new DecodeBuffer({ codec });
  try {
    decoder.write(body);
    value = decoder.read();
  } catch (err) {
    throw new HttpError(400, `body: not valid MessagePack (${(err as Error).message})`, "body");
  }
  if (decoder.offset !== body.length) {
    throw new HttpError(400, `body: not valid MessagePack (${body.length - decoder.offset} trailing bytes after the first value)`, "body");
  }
  return value;
}

/** Drop undefined object fields (JSON omits them; msgpack-lite would send nil). */
function plain(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(plain);
  if (Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = plain(v);
  return out;
}

/**
 * The UTF-8 bytes of `JSON.stringify(value)`. A reply's `observation` messages are written from
 * pieces (`messageJsonPieces`: FHIR replies from their cached escaped entry texts) straight into one
 * exactly sized buffer, instead of escaping ~10-30 KB per step and flattening the text into new
 * strings on the way to the socket (each such copy is young-generation garbage, and the scavenges
 * it causes are the server's tail latency).
 */
export function encodeJson(value: unknown): Buffer {
  const pieces = jsonPiecesWithMessages(value, "observation");
  return pieces === undefined ? Buffer.from(JSON.stringify(value) ?? "") : utf8Of(pieces);
}

/** Strings at least this long are spliced into msgpack-lite's output rather than given to it. */
const SPLICE_MIN = 1024;
/** Markers are "\0<random>:<i>\0": the random part is made per process, so no content can contain it. */
const SPLICE_MARK = `\u0000${randomBytes(8).toString("hex")}:`;

function strHeader(bytes: number): Buffer {
  if (bytes < 32) return Buffer.from([0xa0 | bytes]);
  if (bytes < 0x100) return Buffer.from([0xd9, bytes]);
  const h = Buffer.alloc(bytes < 0x10000 ? 3 : 5);
  if (bytes < 0x10000) {
    h[0] = 0xda;
    h.writeUInt16BE(bytes, 1);
  } else {
    h[0] = 0xdb;
    h.writeUInt32BE(bytes, 1);
  }
  return h;
}

/**
 * `msgpack.encode(value)` for a reply: the long content strings of its observation messages are
 * replaced by short markers for msgpack-lite (which reserves three bytes per character of every
 * string and copies its chunks again at the end), then written into one exactly sized buffer.
 * The bytes are the same as msgpack-lite's.
 */
export function encodeMsgpack(value: unknown): Buffer {
  const observation = value !== null && typeof value === "object" && !Array.isArray(value) ? (value as { observation?: unknown }).observation : undefined;
  const long: string[][] = [];
  let shaped = value;
  if (Array.isArray(observation)) {
    const messages = observation.map((m) => {
      const content = m !== null && typeof m === "object" ? (m as { content?: unknown }).content : undefined;
      if (typeof content !== "string" || content.length < SPLICE_MIN) return m;
      long.push(contentPieces(m as Message) ?? [content]);
      return { ...(m as object), content: `${SPLICE_MARK}${long.length - 1}\u0000` };
    });
    if (long.length) shaped = { ...(value as object), observation: messages };
  }
  const encoded = msgpack.encode(plain(shaped), { codec }) as Buffer;
  if (long.length === 0) return encoded;
  const splices: { at: number; end: number; header: Buffer; text: string[] }[] = [];
  let from = 0;
  let size = encoded.length;
  for (let i = 0; i < long.length; i++) {
    const text = long[i]!;
    const marker = Buffer.from(`${SPLICE_MARK}${i}\u0000`);
    const at = encoded.indexOf(marker, from) - 1; // the marker's one-byte fixstr header
    if (at < 0 || encoded[at] !== (0xa0 | marker.length)) return msgpack.encode(plain(value), { codec }) as Buffer;
    const bytes = utf8Length(text);
    const header = strHeader(bytes);
    splices.push({ at, end: at + 1 + marker.length, header, text });
    size += header.length + bytes - (1 + marker.length);
    from = at + 1 + marker.length;
  }
  const out = Buffer.allocUnsafe(size);
  let src = 0;
  let dst = 0;
  for (const p of splices) {
    dst += encoded.copy(out, dst, src, p.at);
    dst += p.header.copy(out, dst);
    dst = writeUtf8(out, dst, p.text);
    src = p.end;
  }
  encoded.copy(out, dst, src);
  return out;
}

export function encodeBody(value: unknown, encoding: Encoding): { body: Buffer; contentType: string } {
  if (encoding === "json") return { body: encodeJson(value), contentType: CONTENT_TYPE.json };
  return { body: encodeMsgpack(value), contentType: CONTENT_TYPE.msgpack };
}
