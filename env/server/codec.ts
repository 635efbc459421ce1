// Body encodings: JSON (default) and MessagePack, chosen by Content-Type (requests) and Accept (replies).
import { createRequire } from "node:module";
import msgpack from "msgpack-lite";
import { HttpError } from "./errors.ts";
import { nestedDeeperThan, nestingMessage } from "../util/index.ts";

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

/** The body's value; 400 when it does not decode or nests deeper than the limit (zod and the graders recurse). */
export function decodeBody(body: Buffer, encoding: Encoding): unknown {
  return checkNesting(decodeValue(body, encoding));
}

export function checkNesting<T>(value: T): T {
  if (nestedDeeperThan(value)) throw new HttpError(400, `body: ${nestingMessage()}`, "body");
  return value;
}

export function decodeValue(body: Buffer, encoding: Encoding): unknown {
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

export function encodeBody(value: unknown, encoding: Encoding): { body: Buffer; contentType: string } {
  if (encoding === "json") return { body: Buffer.from(JSON.stringify(value) ?? ""), contentType: CONTENT_TYPE.json };
  return { body: msgpack.encode(plain(value), { codec }) as Buffer, contentType: CONTENT_TYPE.msgpack };
}
