/**
 * A field's atoms expanded into its sorted set of values by cron-parser. The atoms are already valid
 * (CronDialect), so they are written in the plain numeric syntax both dialects share (`n`, `a-b/s`) and
 * cron-parser only enumerates them.
 *
 * Each field is expanded on its own, placed in an otherwise all-`*` expression: cron-parser trims the
 * day-of-month values to the days of a single named month (`15,31` in April becomes `15`), which the
 * reference does not do for its rendering. cron-parser also refuses a field of more than 256 values or an
 * expression over 1,024 characters, limits the reference does not have, so atoms are deduplicated and
 * expanded in batches within both limits.
 */
import { CronExpressionParser } from "cron-parser"
import { assert } from "@vellum/platform"
import type { CronAtom, CronFieldRule } from "./CronDialect.js"
import { CronFieldRules } from "./CronDialect.js"

const MaxBatchValues = 256
const MaxBatchChars = 900

const atomText = (atom: CronAtom): string =>
  atom.start === atom.end ? `${atom.start}` : `${atom.start}-${atom.end}/${atom.step}`

const valueCount = (atom: CronAtom): number => Math.floor((atom.end - atom.start) / atom.step) + 1

// cron-parser's six positions (seconds first); the reference's five fields are positions 1 to 5.
const FieldNames = ["minute", "hour", "dayOfMonth", "month", "dayOfWeek"] as const

const expandBatch = (position: number, texts: ReadonlyArray<string>): ReadonlyArray<number> => {
  const six = ["0", "*", "*", "*", "*", "*"]
  six[position + 1] = texts.join(",")
  let values: ReadonlyArray<number | string>
  try {
    values = CronExpressionParser.parse(six.join(" ")).fields[FieldNames[position]!].values
  } catch (e) {
    assert(false, `cron-parser rejected the validated field ${six[position + 1]}: ${String(e)}`)
  }
  return values.map((value) => {
    assert(typeof value === "number", `cron-parser expanded a numeric field to ${String(value)}`)
    return value
  })
}

/** The sorted, distinct values of the field at `position` (0 = minute … 4 = day of week). */
export const expandField = (rule: CronFieldRule, atoms: ReadonlyArray<CronAtom>): ReadonlyArray<number> => {
  const position = CronFieldRules.indexOf(rule)
  assert(position >= 0, `unknown CRON field ${rule.label}`)
  const distinct = new Map<string, CronAtom>()
  for (const atom of atoms) distinct.set(atomText(atom), atom)
  const values = new Set<number>()
  let batch: Array<string> = []
  let batchValues = 0
  let batchChars = 0
  const flush = (): void => {
    if (batch.length > 0) for (const value of expandBatch(position, batch)) values.add(value)
    batch = []
    batchValues = 0
    batchChars = 0
  }
  for (const [text, atom] of distinct) {
    if (batchValues + valueCount(atom) > MaxBatchValues || batchChars + text.length + 1 > MaxBatchChars) flush()
    batch.push(text)
    batchValues += valueCount(atom)
    batchChars += text.length + 1
  }
  flush()
  return [...values].sort((a, b) => a - b)
}
