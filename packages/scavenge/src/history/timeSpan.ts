/**
 * .NET TimeSpan text, as the reference's history events carry it: Newtonsoft writes a TimeSpan with its
 * invariant `ToString()` (the constant "c" format, `[-][d.]hh:mm:ss[.fffffff]`), and the interrupted-run
 * repair reads it back with `TimeSpan.Parse`. Work is done in ticks (100 ns) so sums stay exact.
 */

export const TicksPerMillisecond = 10_000
const TicksPerSecond = 10_000_000
const TicksPerDay = 86_400 * TicksPerSecond

const pad = (n: number, width: number): string => String(n).padStart(width, "0")

/** Milliseconds (fractions allowed) to whole ticks, rounding to the nearest tick. */
export const millisToTicks = (millis: number): number => Math.round(millis * TicksPerMillisecond)

/** The "c" format of a tick count: days only when non-zero, the seven-digit fraction only when non-zero. */
export const formatTicks = (ticks: number): string => {
  const sign = ticks < 0 ? "-" : ""
  const abs = Math.abs(ticks)
  const days = Math.floor(abs / TicksPerDay)
  const seconds = Math.floor((abs % TicksPerDay) / TicksPerSecond)
  const fraction = abs % TicksPerSecond
  const clock = `${pad(Math.floor(seconds / 3600), 2)}:${pad(Math.floor(seconds / 60) % 60, 2)}:${pad(seconds % 60, 2)}`
  return `${sign}${days > 0 ? `${days}.` : ""}${clock}${fraction > 0 ? `.${pad(fraction, 7)}` : ""}`
}

/** `TimeSpan.FromMilliseconds(millis).ToString()`: 1500 → "00:00:01.5000000", 93_600_000 → "1.02:00:00". */
export const formatTimeSpan = (millis: number): string => formatTicks(millisToTicks(millis))

// TimeSpan.Parse's invariant forms: [ws][-]{ d | [d.]hh:mm[:ss[.fffffff]] }[ws].
const DaysOnly = /^\s*(-)?(\d+)\s*$/
const Clock = /^\s*(-)?(?:(\d+)\.)?(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,7}))?)?\s*$/

/** Ticks of a TimeSpan text, or undefined when `TimeSpan.Parse` would reject it. */
export const parseTimeSpanTicks = (text: string): number | undefined => {
  const daysOnly = DaysOnly.exec(text)
  if (daysOnly !== null) {
    const ticks = Number(daysOnly[2]) * TicksPerDay
    return Number.isSafeInteger(ticks) ? (daysOnly[1] === "-" ? -ticks : ticks) : undefined
  }
  const m = Clock.exec(text)
  if (m === null) return undefined
  const hours = Number(m[3])
  const minutes = Number(m[4])
  const seconds = m[5] === undefined ? 0 : Number(m[5])
  if (hours > 23 || minutes > 59 || seconds > 59) return undefined
  const fraction = m[6] === undefined ? 0 : Number(m[6].padEnd(7, "0"))
  const ticks =
    (m[2] === undefined ? 0 : Number(m[2])) * TicksPerDay +
    ((hours * 60 + minutes) * 60 + seconds) * TicksPerSecond +
    fraction
  if (!Number.isSafeInteger(ticks)) return undefined
  return m[1] === "-" ? -ticks : ticks
}
