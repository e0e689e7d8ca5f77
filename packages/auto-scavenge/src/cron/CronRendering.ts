/**
 * The reference's expanded rendering of a field (what `schedule` shows and the configuration event
 * stores): `*` when the field holds its whole range, otherwise a comma list of its values in ascending
 * order, every run of consecutive values (two or more) written `a-b`, numbers only, never names.
 */
import type { CronFieldRule } from "./CronDialect.js"

/** `values` sorted ascending and distinct, inside the rule's bounds. */
export const renderField = (rule: CronFieldRule, values: ReadonlyArray<number>): string => {
  if (values.length === rule.max - rule.min + 1) return "*"
  const parts: Array<string> = []
  let i = 0
  while (i < values.length) {
    let j = i
    while (j + 1 < values.length && values[j + 1] === values[j]! + 1) j++
    parts.push(i === j ? `${values[i]}` : `${values[i]}-${values[j]}`)
    i = j + 1
  }
  return parts.join(",")
}
