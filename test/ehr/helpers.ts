// Shared helpers of the env/ehr tests.
import { createHash } from "node:crypto";
import { generateIntoBuilder, type EhrGenerateOptions, type GenerateSummary } from "../../env/ehr/index.ts";

/** Generates into a sink that keeps only a sha256 of the texts (and optionally inspects each). */
export function hashGeneration(opts: EhrGenerateOptions, inspect?: (json: string) => void): { sha256: string; summary: GenerateSummary } {
  const h = createHash("sha256");
  const summary = generateIntoBuilder(
    {
      addText(json: string) {
        h.update(json);
        h.update("\n");
        inspect?.(json);
      },
    },
    opts,
  );
  return { sha256: h.digest("hex"), summary };
}
