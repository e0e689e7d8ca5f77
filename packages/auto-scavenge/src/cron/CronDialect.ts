/**
 * The reference's CRON text rules (NCrontab's `CrontabSchedule.Parse` with default options), read into
 * validated atoms: each atom is `start..end` in steps of `step`, already inside its field's bounds. Only the
 * text is judged here; what values an atom stands for is cron-parser's job (CronExpansion).
 *
 * The rules, as the reference applies them:
 * - the expression is split on the space character only (repeats, leading and trailing spaces are dropped);
 *   a tab is no separator, so it stays inside a field. There must be exactly five fields;
 * - a field holding a comma after its first character is a list; every element must be valid (an empty one
 *   is not). Each element is `*`, a value, or `a-b`, optionally followed by `/step`;
 * - a value starting with a digit is a .NET `int.Parse` number (trailing whitespace tolerated, no overflow);
 *   anything else is a name, only in month and day-of-week: the first English name (January…, Sunday…,
 *   in calendar order) that the text is a case-insensitive prefix of, so `J` is January and `Ma` March;
 * - `a-b` with `a > b` is the range `b-a`; `n/s` is `n` to the field's maximum in steps of `s`; a step below
 *   1 counts as 1 (so `*\/0` is `*`); a step is a .NET `int.Parse` number, so a sign and surrounding
 *   whitespace are allowed;
 * - every value must lie in its field's bounds: day-of-week is 0–6 (7 is not Sunday).
 */

export interface CronFieldRule {
  readonly label: "minute" | "hour" | "day of month" | "month" | "day of week"
  readonly min: number
  readonly max: number
  /** Names for `min`, `min + 1`, … in the order the reference tries them, or empty when none are accepted. */
  readonly names: ReadonlyArray<string>
}

/** The five fields in the order they are written. */
export const CronFieldRules: ReadonlyArray<CronFieldRule> = [
  { label: "minute", min: 0, max: 59, names: [] },
  { label: "hour", min: 0, max: 23, names: [] },
  { label: "day of month", min: 1, max: 31, names: [] },
  {
    label: "month",
    min: 1,
    max: 12,
    names: [
      "january",
      "february",
      "march",
      "april",
      "may",
      "june",
      "july",
      "august",
      "september",
      "october",
      "november",
      "december"
    ]
  },
  {
    label: "day of week",
    min: 0,
    max: 6,
    names: ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
  }
]

/** `start..end` in steps of `step`, with `rule.min <= start <= end <= rule.max` and `step >= 1`. */
export interface CronAtom {
  readonly start: number
  readonly end: number
  readonly step: number
}

const Int32Max = 2_147_483_647
const Int32Min = -2_147_483_648

// .NET's NumberStyles.Integer: optional whitespace (tab to carriage return, space) around an optional sign
// and ASCII digits; trailing NULs are tolerated after the trailing whitespace.
const DotNetInteger = /^[\t-\r ]*([+-]?\d+)[\t-\r ]*\0*$/

/** `int.Parse(text, InvariantCulture)`, or undefined where it throws (format or overflow). */
const parseDotNetInt = (text: string): number | undefined => {
  const m = DotNetInteger.exec(text)
  if (m === null) return undefined
  const n = Number(m[1])
  return n >= Int32Min && n <= Int32Max ? n : undefined
}

const isDigit = (c: string): boolean => c >= "0" && c <= "9"

/** One value: a number when it starts with a digit, otherwise a name prefix (month and day-of-week only). */
const readValue = (rule: CronFieldRule, text: string): number | undefined => {
  if (text.length === 0) return undefined
  if (isDigit(text[0]!)) return parseDotNetInt(text)
  // Names compare case-insensitively; only ASCII letters can be a prefix of an English name.
  if (!/^[A-Za-z]+$/.test(text)) return undefined
  const prefix = text.toLowerCase()
  const index = rule.names.findIndex((name) => name.startsWith(prefix))
  return index < 0 ? undefined : rule.min + index
}

/** Bounds-check `start..end` (swapped when reversed) and clamp the step to at least 1. */
const atomOf = (rule: CronFieldRule, start: number, end: number, step: number): CronAtom | undefined => {
  const low = Math.min(start, end)
  const high = Math.max(start, end)
  if (low < rule.min || high > rule.max) return undefined
  return { start: low, end: high, step: Math.max(step, 1) }
}

/** One list element: `*`, `n`, `a-b`, each optionally with `/step`. */
const readElement = (rule: CronFieldRule, element: string): CronAtom | undefined => {
  let body = element
  let step: number | undefined
  const slash = element.indexOf("/")
  if (slash > 0) {
    step = parseDotNetInt(element.slice(slash + 1))
    if (step === undefined) return undefined
    body = element.slice(0, slash)
  }
  if (body === "*") return atomOf(rule, rule.min, rule.max, step ?? 1)
  const dash = body.indexOf("-")
  if (dash > 0) {
    const first = readValue(rule, body.slice(0, dash))
    const last = readValue(rule, body.slice(dash + 1))
    if (first === undefined || last === undefined) return undefined
    return atomOf(rule, first, last, step ?? 1)
  }
  const value = readValue(rule, body)
  if (value === undefined) return undefined
  // `n/s` runs from n to the field's maximum; a bare value is itself.
  return step === undefined ? atomOf(rule, value, value, 1) : atomOf(rule, value, rule.max, step)
}

/** One field's atoms; a comma after the first character makes it a list. */
const readField = (rule: CronFieldRule, field: string): ReadonlyArray<CronAtom> | undefined => {
  const elements = field.indexOf(",") > 0 ? field.split(",") : [field]
  const atoms: Array<CronAtom> = []
  for (const element of elements) {
    const atom = readElement(rule, element)
    if (atom === undefined) return undefined
    atoms.push(atom)
  }
  return atoms
}

/** The five fields' atoms, or undefined when the reference would reject the text. */
export const readCronFields = (text: string): ReadonlyArray<ReadonlyArray<CronAtom>> | undefined => {
  const fields = text.split(" ").filter((field) => field.length > 0)
  if (fields.length !== CronFieldRules.length) return undefined
  const result: Array<ReadonlyArray<CronAtom>> = []
  for (const [i, field] of fields.entries()) {
    const atoms = readField(CronFieldRules[i]!, field)
    if (atoms === undefined) return undefined
    result.push(atoms)
  }
  return result
}
