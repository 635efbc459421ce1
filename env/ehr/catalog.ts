// Codes, units and value distributions of the synthetic chart (EHR.md "Resources and codes").

export interface LabDef {
  code: string;
  unit: string;
  ucum: string;
  decimals: number;
  low: number;
  high: number;
  mean: number;
  sd: number;
  min: number;
  max: number;
}

function lab(code: string, unit: string, ucum: string, decimals: number, low: number, high: number, mean: number, sd: number, min: number, max: number): LabDef {
  return { code, unit, ucum, decimals, low, high, mean, sd, min, max };
}

export const LABS: Record<string, LabDef> = {
  NA: lab("NA", "mmol/L", "mmol/L", 0, 135, 145, 139, 3, 118, 160),
  K: lab("K", "mmol/L", "mmol/L", 1, 3.5, 5.1, 4.1, 0.4, 2.4, 6.8),
  CL: lab("CL", "mmol/L", "mmol/L", 0, 98, 107, 103, 3, 85, 120),
  CO2: lab("CO2", "mmol/L", "mmol/L", 0, 22, 29, 25, 2.5, 12, 38),
  BUN: lab("BUN", "mg/dL", "mg/dL", 0, 7, 20, 17, 7, 4, 110),
  CREAT: lab("CREAT", "mg/dL", "mg/dL", 2, 0.6, 1.2, 0.95, 0.25, 0.3, 9),
  GLU: lab("GLU", "mg/dL", "mg/dL", 0, 70, 99, 108, 22, 40, 480),
  CA: lab("CA", "mg/dL", "mg/dL", 1, 8.5, 10.5, 9.2, 0.45, 6.5, 12.5),
  MG: lab("MG", "mg/dL", "mg/dL", 1, 1.7, 2.4, 2.0, 0.22, 0.8, 3.4),
  PHOS: lab("PHOS", "mg/dL", "mg/dL", 1, 2.5, 4.5, 3.5, 0.6, 1.2, 8),
  ALB: lab("ALB", "g/dL", "g/dL", 1, 3.5, 5.0, 3.8, 0.5, 1.8, 5.4),
  HGB: lab("HGB", "g/dL", "g/dL", 1, 12.0, 17.5, 12.6, 1.8, 6.0, 18.5),
  HCT: lab("HCT", "%", "%", 1, 36.0, 50.0, 38.5, 5, 19, 55),
  WBC: lab("WBC", "K/uL", "10*3/uL", 1, 4.0, 11.0, 7.6, 2.4, 1.2, 28),
  PLT: lab("PLT", "K/uL", "10*3/uL", 0, 150, 400, 238, 70, 25, 720),
  INR: lab("INR", "{INR}", "{INR}", 1, 0.8, 1.2, 1.1, 0.12, 0.8, 6),
  ALT: lab("ALT", "U/L", "U/L", 0, 7, 56, 27, 14, 5, 400),
  AST: lab("AST", "U/L", "U/L", 0, 10, 40, 26, 11, 8, 380),
  TSH: lab("TSH", "uIU/mL", "u[IU]/mL", 2, 0.4, 4.5, 1.9, 0.9, 0.05, 60),
  FT4: lab("FT4", "ng/dL", "ng/dL", 2, 0.8, 1.8, 1.2, 0.2, 0.3, 3.5),
  LDL: lab("LDL", "mg/dL", "mg/dL", 0, 0, 129, 104, 30, 30, 240),
  HDL: lab("HDL", "mg/dL", "mg/dL", 0, 40, 200, 51, 13, 18, 110),
  TRIG: lab("TRIG", "mg/dL", "mg/dL", 0, 0, 149, 138, 60, 35, 700),
  A1C: lab("A1C", "%", "%", 1, 4.0, 5.6, 5.4, 0.35, 4.2, 13.5),
  QTCINTERVAL: lab("QTCINTERVAL", "ms", "ms", 0, 350, 470, 438, 22, 360, 620),
};

export const BMP = ["NA", "K", "CL", "CO2", "BUN", "CREAT", "GLU", "CA"] as const;
export const CBC = ["HGB", "HCT", "WBC", "PLT"] as const;
export const LIPIDS = ["LDL", "HDL", "TRIG"] as const;
export const LFT = ["ALT", "AST", "ALB"] as const;

export interface VitalDef {
  code: string;
  unit: string;
  ucum: string;
  decimals: number;
}

export const VITALS: Record<string, VitalDef> = {
  HEARTRATE: { code: "HEARTRATE", unit: "/min", ucum: "/min", decimals: 0 },
  TEMP: { code: "TEMP", unit: "[degF]", ucum: "[degF]", decimals: 1 },
  RESP: { code: "RESP", unit: "/min", ucum: "/min", decimals: 0 },
  SPO2: { code: "SPO2", unit: "%", ucum: "%", decimals: 0 },
  WEIGHT: { code: "WEIGHT", unit: "kg", ucum: "kg", decimals: 1 },
  HEIGHT: { code: "HEIGHT", unit: "cm", ucum: "cm", decimals: 1 },
  PAIN: { code: "PAIN", unit: "{score}", ucum: "{score}", decimals: 0 },
};

export interface ConditionDef {
  code: string;
  display: string;
}

export const CONDITIONS = {
  diabetes: { code: "E11.9", display: "Type 2 diabetes mellitus without complications" },
  diabetesHyper: { code: "E11.65", display: "Type 2 diabetes mellitus with hyperglycemia" },
  hypertension: { code: "I10", display: "Essential (primary) hypertension" },
  ckd: { code: "N18.30", display: "Chronic kidney disease, stage 3 unspecified" },
  hypothyroid: { code: "E03.9", display: "Hypothyroidism, unspecified" },
  afib: { code: "I48.91", display: "Unspecified atrial fibrillation" },
  renalMassLeft: { code: "C64.2", display: "Malignant neoplasm of left kidney, except renal pelvis" },
  renalMassRight: { code: "C64.1", display: "Malignant neoplasm of right kidney, except renal pelvis" },
  hyperlipidemia: { code: "E78.5", display: "Hyperlipidemia, unspecified" },
  heartFailure: { code: "I50.9", display: "Heart failure, unspecified" },
  copd: { code: "J44.9", display: "Chronic obstructive pulmonary disease, unspecified" },
  obesity: { code: "E66.9", display: "Obesity, unspecified" },
  depression: { code: "F32.9", display: "Major depressive disorder, single episode, unspecified" },
  gerd: { code: "K21.9", display: "Gastro-esophageal reflux disease without esophagitis" },
  osteoarthritis: { code: "M17.11", display: "Unilateral primary osteoarthritis, right knee" },
  sleepApnea: { code: "G47.33", display: "Obstructive sleep apnea (adult) (pediatric)" },
  cad: { code: "I25.10", display: "Atherosclerotic heart disease of native coronary artery without angina pectoris" },
  uti: { code: "N39.0", display: "Urinary tract infection, site not specified" },
  pneumonia: { code: "J18.9", display: "Pneumonia, unspecified organism" },
  dvt: { code: "I82.409", display: "Acute embolism and thrombosis of unspecified deep veins of unspecified lower extremity" },
  hypokalemia: { code: "E87.6", display: "Hypokalemia" },
  hypomagnesemia: { code: "E83.42", display: "Hypomagnesemia" },
  longQt: { code: "I45.81", display: "Long QT syndrome" },
  schizophrenia: { code: "F20.9", display: "Schizophrenia, unspecified" },
  bph: { code: "N40.0", display: "Benign prostatic hyperplasia without lower urinary tract symptoms" },
  chronicPain: { code: "G89.29", display: "Other chronic pain" },
  urinaryRetention: { code: "R33.9", display: "Retention of urine, unspecified" },
  sepsis: { code: "A41.9", display: "Sepsis, unspecified organism" },
  aki: { code: "N17.9", display: "Acute kidney failure, unspecified" },
} as const satisfies Record<string, ConditionDef>;

export type ConditionKey = keyof typeof CONDITIONS;

export interface DrugDef {
  text: string;
  ndc: string;
  rxnorm: string;
  route: string;
  timing: string;
  frequency: number;
  period: number;
  periodUnit: "h" | "d";
  dose: number;
  doseUnit: string;
  prn?: boolean;
}

function drug(text: string, ndc: string, rxnorm: string, route: string, timing: string, frequency: number, period: number, periodUnit: "h" | "d", dose: number, doseUnit: string, prn = false): DrugDef {
  return { text, ndc, rxnorm, route, timing, frequency, period, periodUnit, dose, doseUnit, prn };
}

export const DRUGS = {
  heparin5k: drug("heparin (porcine) 5,000 unit/mL injection", "63323-0262-01", "1361615", "Subcutaneous", "every 8 hours", 1, 8, "h", 5000, "Units"),
  heparin5kB: drug("heparin 5,000 unit/0.5 mL injection syringe", "25021-0402-01", "1658717", "Subcutaneous", "every 12 hours", 1, 12, "h", 5000, "Units"),
  heparinDrip: drug("heparin 100 unit/mL in 0.45 % sodium chloride infusion", "0409-7620-03", "1361574", "Intravenous", "continuous", 1, 1, "h", 18, "Units/kg/hr"),
  enoxaparin: drug("enoxaparin 40 mg/0.4 mL subcutaneous syringe", "0075-0624-30", "854235", "Subcutaneous", "daily", 1, 1, "d", 40, "mg"),
  enoxaparinTx: drug("enoxaparin 80 mg/0.8 mL subcutaneous syringe", "0075-0626-03", "854245", "Subcutaneous", "every 12 hours", 1, 12, "h", 80, "mg"),
  apixaban: drug("apixaban 5 mg tablet", "0003-0894-21", "1364445", "Oral", "2 times daily", 2, 1, "d", 5, "mg"),
  rivaroxaban: drug("rivaroxaban 20 mg tablet", "50458-0579-30", "1232086", "Oral", "daily with dinner", 1, 1, "d", 20, "mg"),
  warfarin: drug("warfarin 5 mg tablet", "0056-0172-70", "855332", "Oral", "daily", 1, 1, "d", 5, "mg"),
  dabigatran: drug("dabigatran etexilate 150 mg capsule", "0597-0135-60", "1037179", "Oral", "2 times daily", 2, 1, "d", 150, "mg"),
  fondaparinux: drug("fondaparinux 2.5 mg/0.5 mL subcutaneous syringe", "67457-0592-01", "763592", "Subcutaneous", "daily", 1, 1, "d", 2.5, "mg"),
  dalteparin: drug("dalteparin 5,000 unit/0.2 mL subcutaneous syringe", "62856-0250-10", "866307", "Subcutaneous", "daily", 1, 1, "d", 5000, "Units"),

  oxycodone: drug("oxycodone 5 mg tablet", "0406-0552-01", "1049621", "Oral", "every 4 hours PRN", 1, 4, "h", 5, "mg", true),
  hydromorphoneTab: drug("hydromorphone 2 mg tablet", "0406-3243-01", "897696", "Oral", "every 4 hours PRN", 1, 4, "h", 2, "mg", true),
  hydromorphoneInj: drug("hydromorphone 0.5 mg/0.5 mL injection", "0409-2552-31", "1728082", "Intravenous", "every 3 hours PRN", 1, 3, "h", 0.5, "mg", true),
  fentanyl: drug("fentanyl 25 mcg/hr transdermal patch", "0406-9025-76", "245134", "Transdermal", "every 72 hours", 1, 72, "h", 1, "patch"),
  hydrocodone: drug("hydrocodone-acetaminophen 5-325 mg tablet", "0406-0123-01", "856999", "Oral", "every 6 hours PRN", 1, 6, "h", 1, "tablet", true),
  morphine: drug("morphine 2 mg/mL injection", "0409-1890-01", "1736854", "Intravenous", "every 4 hours PRN", 1, 4, "h", 2, "mg", true),
  naloxoneNasal: drug("naloxone 4 mg/actuation nasal spray", "69547-0353-02", "1725059", "Nasal", "once PRN", 1, 1, "d", 4, "mg", true),
  naloxoneInj: drug("naloxone 0.4 mg/mL injection", "0409-1215-01", "1191250", "Intravenous", "every 2 minutes PRN", 1, 1, "h", 0.4, "mg", true),

  ondansetronOdt: drug("ondansetron 4 mg disintegrating tablet", "0781-5238-10", "104894", "Oral", "every 8 hours PRN", 1, 8, "h", 4, "mg", true),
  ondansetronInj: drug("ondansetron 4 mg/2 mL injection", "0409-4755-03", "1740467", "Intravenous", "every 6 hours PRN", 1, 6, "h", 4, "mg", true),
  prochlorperazine: drug("prochlorperazine maleate 10 mg tablet", "0781-5086-01", "204465", "Oral", "every 6 hours PRN", 1, 6, "h", 10, "mg", true),
  haloperidol: drug("haloperidol lactate 5 mg/mL injection", "0703-7011-03", "1719644", "Intramuscular", "every 6 hours PRN", 1, 6, "h", 2, "mg", true),
  quetiapine: drug("quetiapine 25 mg tablet", "0310-0275-10", "312743", "Oral", "nightly", 1, 1, "d", 25, "mg"),
  olanzapine: drug("olanzapine 5 mg tablet", "0002-4115-30", "312078", "Oral", "nightly", 1, 1, "d", 5, "mg"),
  risperidone: drug("risperidone 1 mg tablet", "50458-0300-06", "312830", "Oral", "2 times daily", 2, 1, "d", 1, "mg"),

  levothyroxine: drug("levothyroxine 50 mcg tablet", "0074-4552-90", "966224", "Oral", "daily before breakfast", 1, 1, "d", 50, "mcg"),
  metformin: drug("metformin 500 mg tablet", "0093-1048-01", "861007", "Oral", "2 times daily with meals", 2, 1, "d", 500, "mg"),
  insulinGlargine: drug("insulin glargine 100 unit/mL injection", "0088-2220-33", "311041", "Subcutaneous", "nightly", 1, 1, "d", 20, "Units"),
  insulinLispro: drug("insulin lispro 100 unit/mL injection (sliding scale)", "0002-7510-01", "1652639", "Subcutaneous", "4 times daily before meals and nightly", 4, 1, "d", 2, "Units"),
  lisinopril: drug("lisinopril 10 mg tablet", "68180-0513-01", "314076", "Oral", "daily", 1, 1, "d", 10, "mg"),
  amlodipine: drug("amlodipine 5 mg tablet", "0069-1530-68", "197361", "Oral", "daily", 1, 1, "d", 5, "mg"),
  atorvastatin: drug("atorvastatin 40 mg tablet", "0071-0157-23", "617311", "Oral", "nightly", 1, 1, "d", 40, "mg"),
  metoprolol: drug("metoprolol tartrate 25 mg tablet", "0378-0018-01", "866924", "Oral", "2 times daily", 2, 1, "d", 25, "mg"),
  furosemide: drug("furosemide 40 mg tablet", "0054-4299-25", "313988", "Oral", "daily", 1, 1, "d", 40, "mg"),
  pantoprazole: drug("pantoprazole 40 mg EC tablet", "0008-0841-81", "314200", "Oral", "daily before breakfast", 1, 1, "d", 40, "mg"),
  acetaminophen: drug("acetaminophen 500 mg tablet", "0904-6727-60", "198105", "Oral", "every 6 hours PRN", 1, 6, "h", 1000, "mg", true),
  docusate: drug("docusate sodium 100 mg capsule", "0904-7181-61", "1099279", "Oral", "2 times daily", 2, 1, "d", 100, "mg"),
  senna: drug("sennosides 8.6 mg tablet", "0904-6289-61", "312935", "Oral", "nightly PRN", 1, 1, "d", 17.2, "mg", true),
  potassiumChloride: drug("potassium chloride 20 mEq ER tablet", "40032-917-01", "628958", "Oral", "once", 1, 1, "d", 40, "mEq"),
  magnesiumSulfate: drug("magnesium sulfate 1 g/100 mL in water IV piggyback", "0338-1715-40", "1310197", "Intravenous", "once", 1, 1, "h", 2, "g"),
  ceftriaxone: drug("ceftriaxone 1 gram injection", "0409-7332-01", "1665021", "Intravenous", "every 24 hours", 1, 24, "h", 1, "g"),
  tamsulosin: drug("tamsulosin 0.4 mg capsule", "0597-0058-01", "863669", "Oral", "nightly", 1, 1, "d", 0.4, "mg"),
  sertraline: drug("sertraline 50 mg tablet", "16729-0213-01", "312940", "Oral", "daily", 1, 1, "d", 50, "mg"),
  covidPfizer: drug("COVID-19 VACCINE, MRNA, (PFIZER) 30 MCG/0.3 ML IM SUSPENSION", "59267-1000-01", "2468235", "Intramuscular", "once", 1, 1, "d", 0.3, "mL"),
  covidModerna: drug("COVID-19 VACCINE, MRNA, (MODERNA) 50 MCG/0.5 ML IM SUSPENSION", "80777-0102-01", "2470234", "Intramuscular", "once", 1, 1, "d", 0.5, "mL"),
} as const satisfies Record<string, DrugDef>;

export type DrugKey = keyof typeof DRUGS;

export const ANTICOAG_OTHER: DrugKey[] = ["enoxaparin", "apixaban", "rivaroxaban", "warfarin", "dabigatran", "enoxaparinTx", "heparinDrip", "dalteparin", "fondaparinux"];
export const OPIOIDS: DrugKey[] = ["oxycodone", "hydromorphoneTab", "hydromorphoneInj", "fentanyl", "hydrocodone", "morphine"];
export const NALOXONE: DrugKey[] = ["naloxoneNasal", "naloxoneInj"];
export const QT_DRUGS: DrugKey[] = ["ondansetronOdt", "ondansetronInj", "prochlorperazine", "haloperidol", "quetiapine", "olanzapine", "risperidone"];

export interface ProcDef {
  code: string;
  display: string;
}

export const PROCS = {
  ctAbdContrast: { code: "IMGCT0491", display: "CT ABDOMEN PELVIS W IV CONTRAST" },
  ctAbdOutside: { code: "IMGIL0001", display: "CT ABDOMEN (OUTSIDE IMAGE IMPORT)" },
  ct74177: { code: "74177", display: "CT ABD & PELV W/CONTRAST" },
  ct74176: { code: "74176", display: "CT ABD & PELVIS W/O CONTRAST" },
  catheter: { code: "NUR1373", display: "INSERT INDWELLING URINARY CATHETER" },
  covid: { code: "COVIDVACCINE", display: "COVID-19 VACCINE ADMINISTRATION" },
  flu: { code: "90686", display: "INFLUENZA VACCINE QUADRIVALENT PRESERVATIVE FREE IM" },
  ecg: { code: "93000", display: "ELECTROCARDIOGRAM COMPLETE" },
  cxr: { code: "71046", display: "X-RAY CHEST 2 VIEWS" },
  cxr1: { code: "71045", display: "X-RAY CHEST 1 VIEW" },
  echo: { code: "93306", display: "ECHO TRANSTHORACIC COMPLETE" },
  centralLine: { code: "36556", display: "INSERT NON-TUNNELED CENTRAL VENOUS CATHETER" },
  egd: { code: "43239", display: "EGD WITH BIOPSY" },
  colonoscopy: { code: "45378", display: "COLONOSCOPY DIAGNOSTIC" },
  renalUs: { code: "76770", display: "US RETROPERITONEAL COMPLETE" },
  pneumovax: { code: "90732", display: "PNEUMOCOCCAL POLYSACCHARIDE VACCINE 23-VALENT" },
} as const satisfies Record<string, ProcDef>;

export type ProcKey = keyof typeof PROCS;

export interface OrderDef {
  system: string;
  code: string;
  display: string;
}

export const ORDERS = {
  catheterRemoval: { system: "http://www.ama-assn.org/go/cpt", code: "NUR1373", display: "REMOVE URINARY CATHETER" },
  cardiologyReferral: { system: "http://snomed.info/sct", code: "183519002", display: "Referral to cardiology service" },
  nephrologyReferral: { system: "http://snomed.info/sct", code: "306104007", display: "Referral to nephrology service" },
  endocrinologyReferral: { system: "http://snomed.info/sct", code: "306124005", display: "Referral to endocrinology service" },
  ptReferral: { system: "http://snomed.info/sct", code: "308447003", display: "Referral to physiotherapist" },
  bmpOrder: { system: "http://loinc.org", code: "51990-0", display: "Basic metabolic panel - Blood" },
  cbcOrder: { system: "http://loinc.org", code: "58410-2", display: "CBC panel - Blood by Automated count" },
} as const satisfies Record<string, OrderDef>;

export type OrderKey = keyof typeof ORDERS;
