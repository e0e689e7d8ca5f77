/**
 * Atom dates as ESDB writes them (.NET XmlConvert, UTC): `yyyy-MM-ddTHH:mm:ss[.fffffff]Z` with trailing
 * fractional zeros trimmed. Stored times are microseconds since the Unix epoch, so at
 * most six fractional digits appear. A page without events says DateTime.MinValue.
 */

export const NoEventsDate = "0001-01-01T00:00:00Z"

const MICROS_PER_SECOND = 1_000_000

// Events of a page are usually written within the same second: remember the last second's text.
let lastSecond = Number.NaN
let lastSecondText = ""

/** `yyyy-MM-ddTHH:mm:ss` of a second since the epoch. */
const secondText = (seconds: number): string => {
  if (seconds !== lastSecond) {
    // Date with an explicit argument is a pure conversion (no clock read).
    lastSecondText = new Date(seconds * 1000).toISOString().slice(0, 19)
    lastSecond = seconds
  }
  return lastSecondText
}

/** Formats microseconds since the Unix epoch (UTC). */
export const formatAtomDate = (micros: number): string => {
  const whole = Math.floor(micros)
  const seconds = Math.floor(whole / MICROS_PER_SECOND)
  const fraction = whole - seconds * MICROS_PER_SECOND
  const date = secondText(seconds)
  if (fraction === 0) return date + "Z"
  let digits = String(fraction).padStart(6, "0")
  let end = digits.length
  while (digits.charCodeAt(end - 1) === 48) end--
  digits = digits.slice(0, end)
  return date + "." + digits + "Z"
}
