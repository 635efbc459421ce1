// What Python `requests.get(url)` (requests 2.32 + urllib3 2.x) does to a URL before sending it,
// and the error texts it raises, so GET replies read exactly as in the official harness.
import { pyLstrip, strRepr } from "../python/index.ts";

export interface PreparedUrl {
  /** The URL as requests reports it (`response.url`, used in HTTPError messages). */
  url: string;
  scheme: string;
  host: string;
  /** Explicit port, or the scheme default. */
  port: number;
  /** Path (never empty: "/" at least). */
  path: string;
  query: string | null;
  fragment: string | null;
}

export type PrepareResult = { ok: true; prepared: PreparedUrl } | { ok: false; error: string };

const UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-~";
const SUB_DELIMS = "!$&'()*+,;=";
const PATH_CHARS = new Set(UNRESERVED + SUB_DELIMS + ":@/");
const QUERY_CHARS = new Set(UNRESERVED + SUB_DELIMS + ":@/?");
const SCHEME_RE = /^(?:[a-zA-Z][a-zA-Z0-9+-]*:|\/)/;
const URI_RE = /^(?:([a-zA-Z][a-zA-Z0-9+.-]*):)?(?:\/\/([^\\/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#([\s\S]*))?$/;
const HOST_PORT_RE = /^((?:[^\[\]%:/?#]|%[a-fA-F0-9]{2})*|\[[^\]]*\])(?::0*?(|0|[1-9][0-9]{0,4}))?$/;
const DEFAULT_PORT: Record<string, number> = { http: 80, https: 443 };
const utf8 = new TextEncoder();

// Fast paths: components made only of allowed characters (no escapes) pass unchanged.
const PATH_OK = /^[A-Za-z0-9._~!$&'()*+,;=:@/-]*$/;
const QUERY_OK = /^[A-Za-z0-9._~!$&'()*+,;=:@/?-]*$/;

/** urllib3 `_encode_invalid_chars`: percent-encode bytes outside `allowed`, keep valid existing escapes. */
function encodeInvalidChars(component: string, allowed: Set<string>, ok: RegExp): string {
  if (ok.test(component)) return component;
  let escapes = 0;
  const normalized = component.replace(/%[a-fA-F0-9]{2}/g, (m) => {
    escapes++;
    return m.toUpperCase();
  });
  const bytes = utf8.encode(normalized);
  let percents = 0;
  for (const b of bytes) if (b === 0x25) percents++;
  const keepPercent = escapes === percents;
  let out = "";
  for (const b of bytes) {
    const ch = String.fromCharCode(b);
    if ((keepPercent && b === 0x25) || (b < 128 && allowed.has(ch))) out += ch;
    else out += "%" + b.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

/** RFC 3986 remove_dot_segments as urllib3 implements it. */
function removeDotSegments(path: string): string {
  if (!path.includes("/.") && !path.startsWith(".")) return path;
  const output: string[] = [];
  for (const seg of path.split("/")) {
    if (seg === ".") continue;
    if (seg !== "..") output.push(seg);
    else if (output.length) output.pop();
  }
  if (path.startsWith("/") && (output.length === 0 || output[0])) output.unshift("");
  if (path.endsWith("/.") || path.endsWith("/..")) output.push("");
  return output.join("/");
}

const SAFE_WITH_PERCENT = new Set(UNRESERVED + "!#$%&'()*+,/:;=?@[]~");
const SAFE_WITHOUT_PERCENT = new Set(UNRESERVED + "!#$&'()*+,/:;=?@[]~");
/** urllib.parse.quote(s, safe) over UTF-8. */
function quote(s: string, safe: Set<string>): string {
  let out = "";
  for (const b of utf8.encode(s)) {
    const ch = String.fromCharCode(b);
    out += b < 128 && safe.has(ch) ? ch : "%" + b.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

const REQUOTE_NOOP = /^[A-Za-z0-9._~!#$&'()*+,/:;=?@[\]-]*$/;
/** requests.utils.requote_uri. */
function requoteUri(uri: string): string {
  if (REQUOTE_NOOP.test(uri)) return uri;
  const parts = uri.split("%");
  let invalid = false;
  for (let i = 1; i < parts.length; i++) {
    const h = parts[i]!.slice(0, 2);
    if (h.length === 2 && /^[\p{L}\p{N}]{2}$/u.test(h)) {
      if (!/^[0-9a-fA-F]{2}$/.test(h)) {
        invalid = true;
        break;
      }
      const c = String.fromCharCode(parseInt(h, 16));
      parts[i] = UNRESERVED.includes(c) ? c + parts[i]!.slice(2) : "%" + parts[i];
    } else parts[i] = "%" + parts[i];
  }
  if (invalid) return quote(uri, SAFE_WITHOUT_PERCENT);
  return quote(parts.join(""), SAFE_WITH_PERCENT);
}

/** requests' PreparedRequest.prepare_url + adapter lookup, for http(s) URLs. */
export function prepareRequestsUrl(rawUrl: string): PrepareResult {
  const url = pyLstrip(rawUrl);
  if (url.includes(":") && !url.toLowerCase().startsWith("http")) {
    return { ok: false, error: `No connection adapters were found for ${strRepr(url)}` };
  }
  const m = URI_RE.exec(SCHEME_RE.test(url) ? url : "//" + url);
  const invalid = { ok: false as const, error: `Failed to parse: ${url}` };
  if (!m) return invalid;
  const [, rawScheme, authority, rawPath, rawQuery, rawFragment] = m;
  const scheme = rawScheme?.toLowerCase();
  let host: string | undefined;
  let port: number | undefined;
  if (authority) {
    const at = authority.lastIndexOf("@");
    const hostPort = at >= 0 ? authority.slice(at + 1) : authority;
    const hp = HOST_PORT_RE.exec(hostPort);
    if (!hp) return invalid;
    host = hp[1]!.toLowerCase();
    if (hp[2]) port = Number(hp[2]);
    if (port !== undefined && port > 65535) return invalid;
  }
  const normalize = scheme === undefined || scheme === "http" || scheme === "https";
  let path = rawPath ?? "";
  let query = rawQuery ?? null;
  let fragment = rawFragment ?? null;
  if (normalize && path) path = encodeInvalidChars(removeDotSegments(path), PATH_CHARS, PATH_OK);
  if (normalize && query) query = encodeInvalidChars(query, QUERY_CHARS, QUERY_OK);
  if (normalize && fragment) fragment = encodeInvalidChars(fragment, QUERY_CHARS, QUERY_OK);
  if (!scheme) {
    return { ok: false, error: `Invalid URL ${strRepr(url)}: No scheme supplied. Perhaps you meant https://${url}?` };
  }
  if (!host) return { ok: false, error: `Invalid URL ${strRepr(url)}: No host supplied` };
  if (host.startsWith("*") || host.startsWith(".")) return { ok: false, error: "URL has an invalid label." };
  if (!(scheme in DEFAULT_PORT)) return { ok: false, error: `No connection adapters were found for ${strRepr(url)}` };
  if (!path) path = "/";
  const netloc = (at(authority) ?? "") + host + (port !== undefined ? `:${port}` : "");
  let unparsed = `${scheme}://${netloc}${path}`;
  if (query) unparsed += "?" + query;
  if (fragment) unparsed += "#" + fragment;
  return {
    ok: true,
    prepared: { url: requoteUri(unparsed), scheme, host, port: port ?? DEFAULT_PORT[scheme]!, path, query, fragment },
  };
}

function at(authority: string | undefined): string | undefined {
  if (!authority) return undefined;
  const i = authority.lastIndexOf("@");
  return i >= 0 ? authority.slice(0, i + 1) : undefined;
}

/** `raise_for_status()` message; HAPI (Tomcat, HTTP/1.1) sends no reason phrase, hence `reason` "". */
export function httpErrorMessage(status: number, url: string, reason = ""): string {
  const kind = status < 500 ? "Client Error" : "Server Error";
  return `${status} ${kind}: ${reason} for url: ${url}`;
}

/** The ConnectionError text requests gives when nothing listens at the URL's host (never actually sent). */
export function connectionErrorMessage(p: PreparedUrl): string {
  const pool = p.scheme === "https" ? "HTTPSConnectionPool" : "HTTPConnectionPool";
  const conn = p.scheme === "https" ? "HTTPSConnection" : "HTTPConnection";
  const target = requoteUri(p.path + (p.query ? "?" + p.query : ""));
  return (
    `${pool}(host=${strRepr(p.host)}, port=${p.port}): Max retries exceeded with url: ${target} ` +
    `(Caused by NewConnectionError('<urllib3.connection.${conn} object at 0x7f3c2a1e4d90>: ` +
    `Failed to establish a new connection: [Errno 111] Connection refused'))`
  );
}
