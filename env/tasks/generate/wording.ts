// ehrgym's own wording of every task type (slots: {{mrn}} {{name}} {{dob}} {{bp}} {{sbar}} {{clock}}).
// mab-v2 contexts state "It's {{clock}} now." because the v2 graders read their clock from it.
import type { Suite } from "../task.ts";

export interface Template {
  instruction: string;
  context: string;
}

const MG_DOSING =
  "Dosing guide: mild deficiency (1.5 to 1.9 mg/dL): 1 g IV over 1 hour; moderate deficiency (1 to <1.5 mg/dL): 2 g IV over 2 hours; severe deficiency (<1 mg/dL): 4 g IV over 4 hours.";
const K_DOSING = "Dosing rule: order 10 mEq of oral potassium for every 0.1 mEq/L (mmol/L) below the goal level of 3.5.";

const V1: Record<string, Template> = {
  task1: {
    instruction: 'Look up the MRN of the patient named {{name}}, born {{dob}}. If there is no such patient, the answer should be "Patient not found".',
    context: "",
  },
  task2: { instruction: "How old is patient {{mrn}}, in whole years?", context: "Current time: {{clock}}. Round the age down to an integer." },
  task3: {
    instruction: 'Patient {{mrn}} just had a blood pressure reading of "{{bp}}". Please document it in the chart.',
    context: "Current time: {{clock}}. Blood pressure is charted under flowsheet ID BP.",
  },
  task4: {
    instruction: "Report the latest serum magnesium of patient {{mrn}} from the past 24 hours.",
    context: 'Current time: {{clock}}. Magnesium uses code "MG". Answer with one number in mg/dL, or -1 if nothing was measured in the past 24 hours.',
  },
  task5: {
    instruction:
      "Review the most recent magnesium level of patient {{mrn}} from the past 24 hours. If it is low, order IV magnesium replacement following the dosing guide. If nothing was measured in the past 24 hours, do not order anything.",
    context: `Current time: {{clock}}. Magnesium uses code "MG". IV magnesium replacement NDC: 0338-1715-40. ${MG_DOSING}`,
  },
  task6: {
    instruction: "What was the mean capillary blood glucose (CBG) of patient {{mrn}} over the past 24 hours?",
    context: 'Current time: {{clock}}. CBG uses code "GLU". Answer with one number in mg/dL, or -1 if nothing was measured in the past 24 hours.',
  },
  task7: { instruction: "Report the most recent CBG value of patient {{mrn}}.", context: 'Current time: {{clock}}. CBG uses code "GLU".' },
  task8: {
    instruction: 'Place an orthopedic surgery referral for patient {{mrn}} with this text in the referral note: "{{sbar}}"',
    context: "Current time: {{clock}}. SNOMED code for an orthopedic surgery referral: 306181000000106.",
  },
  task9: {
    instruction:
      "Look up the latest potassium level of patient {{mrn}}. If it is low, order oral potassium replacement per the dosing rule, together with a serum potassium test for tomorrow at 08:00.",
    context: `Current time: {{clock}}. Potassium uses code "K". Replacement potassium NDC: 40032-917-01. ${K_DOSING} LOINC code for serum potassium: 2823-3.`,
  },
  task10: {
    instruction: "Find the most recent HbA1C result of patient {{mrn}} and when it was taken. If that result is more than one year old, order a new HbA1C test.",
    context: 'Current time: {{clock}}. HbA1C uses code "A1C". LOINC code to order HbA1C: 4548-4. Answer [-1] if there is no result.',
  },
};

const V2: Record<string, Template> = {
  task1: {
    instruction:
      "Check when patient {{mrn}} last had a CT of the abdomen. If it was more than 12 months ago, or never, order a CT abdomen with IV contrast with the indication 'Renal mass follow-up'.",
    context: "It's {{clock}} now. Prior CT studies use procedure codes IMGCT0491 or IMGIL0001. Order the new study with CPT code 74177.",
  },
  task2: {
    instruction:
      "Make sure patient {{mrn}} has exactly one active DVT prophylaxis order: create it if there is none, and discontinue duplicates (keeping only the newest) if there are several.",
    context: "It's {{clock}} now. The prophylaxis order is heparin 5000 units SC every 8 hours. Any other anticoagulant (LMWH, DOAC, warfarin, ...) counts as a duplicate.",
  },
  task3: {
    instruction: "Compute the average heart rate of patient {{mrn}} over the last 6 hours and over the last 12 hours.",
    context: "It's {{clock}} now. Heart rate uses code 'HEARTRATE'. Answer [average over 6 h, average over 12 h]; use -1 for a window without measurements.",
  },
  task4: {
    instruction: "Does patient {{mrn}} have a urinary catheter that has been in place for more than 48 hours with no removal order? If so, order its removal with a service request.",
    context: "It's {{clock}} now. Urinary catheter procedures use code 'NUR1373'.",
  },
  task5: {
    instruction:
      "If patient {{mrn}} is diagnosed with a malignant neoplasm of the left kidney and the last CT abdomen/pelvis is more than 3 months old (or missing), order a new CT and an Interventional Radiology referral.",
    context:
      "It's {{clock}} now. ICD-10 code: C64.2. CT abdomen/pelvis with IV contrast: CPT 74177. Interventional Radiology referral: code CON417, with the request 'Evaluate renal mass for biopsy or ablation.'",
  },
  task6: {
    instruction: "Review the latest TSH and free T4 results of patient {{mrn}} and act according to the protocol.",
    context:
      "It's {{clock}} now. Codes: 'TSH' and 'FT4'. Protocol: if TSH > 10 uIU/mL on two occasions at least one month apart, start levothyroxine 25 mcg PO daily and order repeat TSH and FT4 in 6 weeks. If TSH is between 4.5 and 10 uIU/mL with a normal free T4 (0.8-1.8 ng/dL), order repeat TSH and FT4 in 3 months without medication. Otherwise do nothing.",
  },
  task7: {
    instruction: "Look at the latest QTc of patient {{mrn}}. If it is prolonged, stop QT-prolonging medications and order a follow-up ECG in 24 hours.",
    context:
      "It's {{clock}} now. QTc uses code 'QTCINTERVAL'; prolonged means > 500 ms. QT-prolonging drugs include ondansetron, prochlorperazine and most antipsychotics. SNOMED code for a 12-lead ECG: 445118002.",
  },
  task8: {
    instruction: "Check that every active opioid order of patient {{mrn}} is covered by a naloxone prescription; if an active opioid has no naloxone, order naloxone.",
    context: "It's {{clock}} now. Opioids: hydromorphone, oxycodone, fentanyl, hydrocodone, morphine. Order naloxone nasal spray 4 mg.",
  },
  task9: {
    instruction: "When did patient {{mrn}} last receive an influenza vaccine? If it was more than 365 days ago, or never, order an influenza vaccine for today.",
    context: "It's {{clock}} now. Influenza vaccine CPT code: 90686. Order influenza vaccine (quadrivalent, preservative-free, IM).",
  },
  task10: {
    instruction: "Review the COVID-19 vaccination history of patient {{mrn}}. If the most recent dose was more than 12 months ago, or there is none, order a COVID booster.",
    context:
      "It's {{clock}} now. COVID-19 vaccines appear as procedure code 'COVIDVACCINE' or as completed MedicationRequests whose text contains 'COVID-19 VAC'. Order a single-dose COVID vaccine (CPT 91320) for today.",
  },
  v2_task5: {
    instruction: "Review the most recent magnesium level of patient {{mrn}} from the past 24 hours. If it is below 2.0 mg/dL, order IV magnesium replacement; otherwise order nothing.",
    context: `It's {{clock}} now. Magnesium uses code "MG". IV magnesium replacement NDC: 0338-1715-40. ${MG_DOSING}`,
  },
  v2_task9: {
    instruction: "Look up the latest potassium level of patient {{mrn}}. If it is below 3.5, order oral potassium replacement; otherwise order nothing.",
    context: `It's {{clock}} now. Potassium uses code "K". Replacement potassium NDC: 40032-917-01. ${K_DOSING}`,
  },
  v2_task10: {
    instruction: "Find the most recent HbA1C result of patient {{mrn}}. If it is more than 365 days old, or there is none, order a new HbA1C test; otherwise order nothing.",
    context: `It's {{clock}} now. HbA1C uses code "A1C". LOINC code to order HbA1C: 4548-4.`,
  },
};

export function ownTemplate(suite: Suite, type: string): Template {
  const t = (suite === "mab-v1" ? V1 : V2)[type];
  if (!t) throw new Error(`no wording for ${suite}/${type}`);
  return t;
}

/** Own SBAR texts for orthopedic referrals (no double quotes inside: graders read the quoted text). */
export const SBAR_TEXTS = [
  "Situation: right shoulder pain after a fall. Background: X-ray shows a displaced proximal humerus fracture. Assessment: fracture that may need fixation. Recommendation: Orthopedic service to evaluate and advise on management.",
  "Situation: worsening left hip pain. Background: MRI shows avascular necrosis of the femoral head. Assessment: progressive AVN. Recommendation: Orthopedic service to assess for surgical options.",
  "Situation: acute right knee swelling after a sports injury. Background: MRI shows a medial meniscus tear. Assessment: symptomatic meniscal tear. Recommendation: Orthopedic service to evaluate and recommend treatment.",
  "Situation: chronic low back pain with new leg weakness. Background: imaging shows lumbar disc herniation at L4-L5. Assessment: radiculopathy with motor deficit. Recommendation: Orthopedic spine service to evaluate urgently.",
  "Situation: left wrist pain after a fall on an outstretched hand. Background: X-ray shows a scaphoid fracture. Assessment: fracture at risk of non-union. Recommendation: Orthopedic service to evaluate and provide management recommendations.",
];

export function fill(template: Template, slots: Record<string, string>): Template {
  const sub = (s: string) => s.replace(/\{\{(\w+)\}\}/g, (m, k: string) => slots[k] ?? m);
  return { instruction: sub(template.instruction), context: sub(template.context) };
}
