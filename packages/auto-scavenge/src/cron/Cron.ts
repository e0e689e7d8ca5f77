/**
 * CRON schedules in the reference's dialect (NCrontab's five fields, default options), built on
 * cron-parser. cron-parser's own dialect differs (a seconds field, `7` for Sunday, `L`, `#`, `?`, `@daily`,
 * name aliases of exactly three letters, no reversed ranges) and it lets either day field match (Vixie
 * cron's OR rule), so it is used only for what both dialects agree on:
 * 1. CronDialect reads the text by the reference's rules and rejects what the reference rejects;
 * 2. CronExpansion has cron-parser expand each validated field, written in the numeric syntax both share,
 *    into its set of values;
 * 3. CronRendering writes the sets back as the reference's expanded text (`*\/15` → `0,15,30,45`);
 * 4. CronOccurrence searches the sets for the next minute where all five fields match (the AND rule:
 *    `0 0 13 * 5` is only Friday the 13th), strictly after the base, on the UTC wall clock.
 */
import type { NextOccurrence } from "../domain/Schedule.js"
import { CronFieldRules, readCronFields } from "./CronDialect.js"
import { expandField } from "./CronExpansion.js"
import { firstOccurrenceAfter, type CronValueSets } from "./CronOccurrence.js"
import { renderField } from "./CronRendering.js"

export interface CronSchedule {
  /** The expanded rendering: `*\/15 * * * *` → `0,15,30,45 * * * *`. */
  readonly expanded: string
  /** The first occurrence strictly after `afterMillis` (UTC wall clock), or undefined if there is none. */
  readonly nextAfter: (afterMillis: number) => number | undefined
}

/** The schedule, or undefined when the text is not a valid expression ("Invalid CRON expression"). */
export const parseCron = (text: string): CronSchedule | undefined => {
  const fields = readCronFields(text)
  if (fields === undefined) return undefined
  const values = CronFieldRules.map((rule, i) => expandField(rule, fields[i]!))
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = values as [
    ReadonlyArray<number>,
    ReadonlyArray<number>,
    ReadonlyArray<number>,
    ReadonlyArray<number>,
    ReadonlyArray<number>
  ]
  const sets: CronValueSets = { minutes, hours, daysOfMonth, months, daysOfWeek }
  return {
    expanded: CronFieldRules.map((rule, i) => renderField(rule, values[i]!)).join(" "),
    nextAfter: (afterMillis) => firstOccurrenceAfter(sets, afterMillis)
  }
}

/** `NextOccurrence` over expanded renderings, as the state machine stores them. */
export const nextOccurrence: NextOccurrence = (schedule, afterMillis) => parseCron(schedule)?.nextAfter(afterMillis)
