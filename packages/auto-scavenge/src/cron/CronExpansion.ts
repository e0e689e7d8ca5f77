/**
 * A field's atoms expanded into its sorted set of values by cron-parser. The atoms are already valid
 * (CronDialect), so they are written in the plain numeric syntax both dialects share (`n`, `a-b/s`) and
 * cron-parser only enumerates them.
 *
 * Each atom is expanded on its own, in an otherwise all-`*` expression, and the sets are united here:
 * cron-parser refuses a field whose list repeats a value (`*,*\/2`, which the reference accepts), and it
 * trims the day-of-month values to the days of a single named month (`15,31` in April becomes `15`), which
 * the reference does not do for its rendering.
 */
import { CronExpressionParser } from "cron-parser"
import { assert } from "@vellum/platform"
import type { CronAtom, CronFieldRule } from "./CronDialect.js"
import { CronFieldRules } from "./CronDialect.js"

const atomText = (atom: CronAtom): string =>
  atom.start === atom.end ? `${atom.start}` : `${atom.start}-${atom.end}/${atom.step}`

// cron-parser's six positions (seconds first); the reference's five fields are positions 1 to 5.
const FieldNames = ["minute", "hour", "dayOfMonth", "month", "dayOfWeek"] as const

const expandAtom = (position: number, text: string): ReadonlyArray<number> => {
  const six = ["0", "*", "*", "*", "*", "*"]
  six[position + 1] = text
  let values: ReadonlyArray<number | string>
  try {
    // A fixed date and zone: only the fields are read, so cron-parser need not consult the machine's clock.
    values = CronExpressionParser.parse(six.join(" "), { currentDate: 0, tz: "UTC" }).fields[FieldNames[position]!]
      .values
  } catch (e) {
    assert(false, `cron-parser rejected the validated CRON atom ${text}: ${String(e)}`)
  }
  return values.map((value) => {
    assert(typeof value === "number", `cron-parser expanded a numeric CRON atom to ${String(value)}`)
    return value
  })
}

/** The sorted, distinct values of a field. */
export const expandField = (rule: CronFieldRule, atoms: ReadonlyArray<CronAtom>): ReadonlyArray<number> => {
  const position = CronFieldRules.indexOf(rule)
  assert(position >= 0, `unknown CRON field ${rule.label}`)
  const values = new Set<number>()
  for (const text of new Set(atoms.map(atomText))) {
    for (const value of expandAtom(position, text)) values.add(value)
  }
  return [...values].sort((a, b) => a - b)
}
