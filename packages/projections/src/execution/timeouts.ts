// The reference limits user code by time (a compile timeout of 500 ms and an execution timeout of 250 ms by
// default); our sandbox limits it by counted interrupt checks, so that a stop depends on the code and the data
// only, never on the machine or its load. One configured millisecond is worth CHECKS_PER_MILLI checks: the
// defaults become the sandbox's own defaults (2 000 and 1 000 checks). 1 000 checks run about 120 to 170 ms of
// plain loops on the development machine, so a script stopped here would have taken a little less than its
// allowance on that machine, and stops at the same place on every machine.

export const CHECKS_PER_MILLI = 4

/** The sandbox budget (interrupt checks) for a timeout of `millis` ms: at least one check. */
export const budgetForMillis = (millis: number): number => Math.max(1, Math.round(millis * CHECKS_PER_MILLI))

const pad = (n: number, width: number): string => String(n).padStart(width, "0")

/** A duration as .NET's constant TimeSpan text: `[d.]hh:mm:ss.fffffff` (`00:00:00.2500000` for 250 ms). */
export const timeSpanText = (millis: number): string => {
  const ticks = Math.round(millis * 10_000)
  const fraction = ticks % 10_000_000
  const seconds = Math.floor(ticks / 10_000_000)
  const days = Math.floor(seconds / 86_400)
  const clock = `${pad(Math.floor(seconds / 3600) % 24, 2)}:${pad(Math.floor(seconds / 60) % 60, 2)}:${pad(seconds % 60, 2)}`
  return `${days > 0 ? `${days}.` : ""}${clock}${fraction > 0 ? `.${pad(fraction, 7)}` : ""}`
}

/**
 * The reference's timeout reason, word for word up to its missing closing parenthesis. Our budget is counted, not
 * timed, and an entry stops exactly when it has used it all, so `took` shows the allowance too.
 */
export const timeoutMessage = (phase: "compile" | "execute", allowedMillis: number): string =>
  `Projection script took too long to ${phase} (took: ${timeSpanText(allowedMillis)}, allowed: ${timeSpanText(allowedMillis)}`
