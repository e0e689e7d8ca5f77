/**
 * Discard points, stored as "first event number to keep". KeepAll is 0: nothing below it.
 */
export const KeepAll = 0

/** Discard event numbers < n (clamped at 0). */
export const discardBefore = (n: number): number => Math.max(n, KeepAll)

/** Discard event numbers ≤ n. */
export const discardIncluding = (n: number): number => discardBefore(n + 1)

export const shouldDiscard = (firstToKeep: number, eventNumber: number): boolean => eventNumber < firstToKeep
