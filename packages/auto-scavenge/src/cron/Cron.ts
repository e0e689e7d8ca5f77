/**
 * CRON schedules in the reference's dialect. IN PROGRESS (a helper replaces this file): the signatures
 * below are the contract the rest of the package uses.
 */
import type { NextOccurrence } from "../domain/Schedule.js"

export interface CronSchedule {
  /** The expanded rendering: `*\/15 * * * *` → `0,15,30,45 * * * *`. */
  readonly expanded: string
  /** The first occurrence strictly after `afterMillis` (UTC wall clock), or undefined if there is none. */
  readonly nextAfter: (afterMillis: number) => number | undefined
}

/** The schedule, or undefined when the text is not a valid expression ("Invalid CRON expression"). */
export const parseCron = (_text: string): CronSchedule | undefined => {
  throw new Error("cron: not built yet")
}

/** `NextOccurrence` over expanded renderings, as the state machine stores them. */
export const nextOccurrence: NextOccurrence = (schedule, afterMillis) => parseCron(schedule)?.nextAfter(afterMillis)
