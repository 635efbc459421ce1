// zod shapes of the six core resource types: the required fields and their forms, everything else
// allowed (.loose()). Used by write validation and by the synthetic EHR's tests.
import { z } from "zod";
import { parseDateRange } from "./dates.ts";

const dateTime = z.string().refine((s) => parseDateRange(s) !== undefined, { message: "not a FHIR date/dateTime" });
const coding = z.object({ system: z.string().optional(), code: z.string().optional(), display: z.string().optional() }).loose();
export const CodeableConcept = z.object({ coding: z.array(coding).optional(), text: z.string().optional() }).loose();
export const Reference = z.object({ reference: z.string().min(1), display: z.string().optional() }).loose();
const Identifier = z.object({ system: z.string().optional(), value: z.string().optional() }).loose();
const Quantity = z.object({ value: z.number().optional(), unit: z.string().optional(), system: z.string().optional(), code: z.string().optional() }).loose();
const Period = z.object({ start: dateTime.optional(), end: dateTime.optional() }).loose();
const Meta = z.object({ versionId: z.string().optional(), lastUpdated: dateTime.optional(), source: z.string().optional() }).loose();
const HumanName = z.object({ family: z.string().optional(), given: z.array(z.string()).optional(), text: z.string().optional() }).loose();

const resource = <T extends string>(type: T) => ({
  resourceType: z.literal(type),
  id: z.string().regex(/^[A-Za-z0-9\-.]{1,64}$/).optional(),
  meta: Meta.optional(),
});

export const Patient = z
  .object({
    ...resource("Patient"),
    identifier: z.array(Identifier).optional(),
    name: z.array(HumanName).optional(),
    gender: z.enum(["male", "female", "other", "unknown"]).optional(),
    birthDate: dateTime.optional(),
  })
  .loose();

export const Observation = z
  .object({
    ...resource("Observation"),
    status: z.enum(["registered", "preliminary", "final", "amended", "corrected", "cancelled", "entered-in-error", "unknown"]),
    category: z.array(CodeableConcept).optional(),
    code: CodeableConcept,
    subject: Reference,
    effectiveDateTime: dateTime.optional(),
    effectivePeriod: Period.optional(),
    issued: dateTime.optional(),
    valueQuantity: Quantity.optional(),
    valueString: z.string().optional(),
    interpretation: z.array(CodeableConcept).optional(),
  })
  .loose();

export const Condition = z
  .object({
    ...resource("Condition"),
    clinicalStatus: CodeableConcept.optional(),
    verificationStatus: CodeableConcept.optional(),
    category: z.array(CodeableConcept).optional(),
    code: CodeableConcept.optional(),
    subject: Reference,
    onsetDateTime: dateTime.optional(),
    onsetPeriod: Period.optional(),
    recordedDate: dateTime.optional(),
  })
  .loose();

export const MedicationRequest = z
  .object({
    ...resource("MedicationRequest"),
    status: z.enum(["active", "on-hold", "cancelled", "completed", "entered-in-error", "stopped", "draft", "unknown"]),
    intent: z.enum(["proposal", "plan", "order", "original-order", "reflex-order", "filler-order", "instance-order", "option"]),
    category: z.array(CodeableConcept).optional(),
    medicationCodeableConcept: CodeableConcept.optional(),
    subject: Reference,
    authoredOn: dateTime.optional(),
    dosageInstruction: z.array(z.object({}).loose()).optional(),
  })
  .loose();

export const Procedure = z
  .object({
    ...resource("Procedure"),
    status: z.enum(["preparation", "in-progress", "not-done", "on-hold", "stopped", "completed", "entered-in-error", "unknown"]),
    code: CodeableConcept.optional(),
    subject: Reference,
    performedDateTime: dateTime.optional(),
    performedPeriod: Period.optional(),
  })
  .loose();

export const ServiceRequest = z
  .object({
    ...resource("ServiceRequest"),
    status: z.enum(["draft", "active", "on-hold", "revoked", "completed", "entered-in-error", "unknown"]),
    intent: z.enum(["proposal", "plan", "directive", "order", "original-order", "reflex-order", "filler-order", "instance-order", "option"]),
    category: z.array(CodeableConcept).optional(),
    code: CodeableConcept.optional(),
    subject: Reference,
    authoredOn: dateTime.optional(),
    occurrenceDateTime: dateTime.optional(),
  })
  .loose();

export const resourceSchemas = { Patient, Observation, Condition, MedicationRequest, Procedure, ServiceRequest } as const;
export type CoreResourceType = keyof typeof resourceSchemas;
