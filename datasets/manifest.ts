// manifest.json: every file of the dataset (rows, bytes, sha256), the build's options, its inputs by
// file name and hash (never a local path), and the held-out set as hashes. Read back by `validate`
// and `push`, so it has a schema too.
import { createHash } from "node:crypto";
import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { firstIssue, UserError } from "../env/util/index.ts";

export const MANIFEST = "manifest.json";
const Sha = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 in hex");

export const ManifestFile = z.strictObject({ path: z.string().min(1), rows: z.int().min(0), bytes: z.int().min(0), sha256: Sha });
export type ManifestFile = z.infer<typeof ManifestFile>;

export const Manifest = z.strictObject({
  format: z.literal("ehrgym-dataset/2"),
  name: z.string().min(1),
  license: z.string().min(1),
  ehrgym_version: z.string(),
  build: z.strictObject({ options: z.looseObject({ keep: z.enum(["clean", "correct", "all"]) }) }),
  inputs: z.array(z.strictObject({ file: z.string(), bytes: z.int().min(0), sha256: Sha, lines: z.int().min(0) })),
  held_out: z.strictObject({
    files: z.array(z.strictObject({ file: z.string(), sha256: Sha, patients: z.int().min(0), tasks: z.int().min(0) })),
    mrn_sha256: z.array(Sha),
    task_sha256: z.array(Sha),
  }),
  splits: z.array(z.strictObject({ name: z.string(), rows: z.int().min(0) })),
  /** Configs beside the default one (e.g. formats dpo, kto), each in the folder of its name. */
  configs: z.array(z.strictObject({ name: z.string().regex(/^[a-z]+$/), splits: z.array(z.strictObject({ name: z.string(), rows: z.int().min(0) })) })).optional(),
  counts: z.record(z.string(), z.int().min(0)),
  files: z.array(ManifestFile),
});
export type Manifest = z.infer<typeof Manifest>;

export class DatasetError extends UserError {}

export function readManifest(dir: string): Manifest {
  const path = join(dir, MANIFEST);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new DatasetError(`${path}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "missing (is this a dataset folder made by `ehrgym dataset build`?)" : `not JSON (${(err as Error).message})`}`);
  }
  const parsed = Manifest.safeParse(json);
  if (!parsed.success) throw new DatasetError(`${path}: field ${firstIssue(parsed.error, "(root)")}`);
  return parsed.data;
}

/** A file's digest in hex, of `head` followed by the file's bytes. */
export async function fileDigest(path: string, algorithm = "sha256", head = ""): Promise<string> {
  const h = createHash(algorithm).update(head);
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest("hex");
}

/** How the folder's files differ from what manifest.json lists (missing, size, sha256): `validate` and `push` both check it. */
export async function fileProblems(dir: string, files: readonly ManifestFile[]): Promise<string[]> {
  const problems: string[] = [];
  for (const f of files) {
    const abs = join(dir, f.path);
    if (!existsSync(abs)) problems.push(`${f.path}: listed in manifest.json but missing`);
    else if (statSync(abs).size !== f.bytes) problems.push(`${f.path}: ${statSync(abs).size} bytes, manifest.json says ${f.bytes}`);
    else if ((await fileDigest(abs)) !== f.sha256) problems.push(`${f.path}: sha256 differs from manifest.json`);
  }
  return problems;
}
