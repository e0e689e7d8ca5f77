/**
 * The one thing the state machine needs of a CRON schedule: its next occurrence strictly after a time, or
 * undefined when it never occurs again (`0 0 30 2 *`). The cron module provides it; tests pass their own.
 */
export type NextOccurrence = (schedule: string, afterMillis: number) => number | undefined
