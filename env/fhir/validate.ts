// Write validation: a JSON object of the URL's type, the core types checked against their schemas.
import { toPlain } from "./lossless.ts";
import { resourceSchemas } from "./schemas.ts";
import { FhirError } from "./types.ts";

type R = Record<string, unknown>;

/** Throws FhirError 400 (not a resource of `type`) or 422 (fails the type's schema). */
export function validateWrite(type: string, resource: unknown): asserts resource is R & { resourceType: string } {
  if (resource === null || typeof resource !== "object" || Array.isArray(resource))
    throw new FhirError(400, `Failed to parse request body as a ${type} resource: expected a JSON object`);
  const found = (resource as R).resourceType;
  if (found !== type)
    throw new FhirError(400, `Incorrect resource type found, expected "${type}" but found "${typeof found === "string" ? found : String(found)}"`);
  const schema = resourceSchemas[type as keyof typeof resourceSchemas];
  if (!schema) return;
  const result = schema.safeParse(toPlain(resource));
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${type}.${i.path.map(String).join(".")}: ${i.message}`);
    throw new FhirError(422, `Invalid ${type} resource: ${issues.join("; ")}`);
  }
}
