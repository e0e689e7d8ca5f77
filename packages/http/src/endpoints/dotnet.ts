/**
 * The .NET text formats the reference's node documents use, so clients that parse them keep working:
 * `DateTime.ToString("O")` (seven fractional digits), Newtonsoft's ISO dates (trailing fractional zeros
 * trimmed). Parsing the .NET way (`bool.TryParse`, `int.TryParse`) is dotnetParse.ts.
 */

const pad = (n: number, width: number): string => String(n).padStart(width, "0")

const isoParts = (millis: number): { readonly base: string; readonly fraction: string } => {
  const iso = new Date(millis).toISOString() // yyyy-MM-ddTHH:mm:ss.fffZ
  return { base: iso.slice(0, 19), fraction: `${iso.slice(20, 23)}0000` }
}

/** `DateTime.ToUniversalTime().ToString("O")`: `2025-03-28T16:00:00.1230000Z`. */
export const roundTripDate = (millis: number): string => {
  const { base, fraction } = isoParts(millis)
  return `${base}.${fraction}Z`
}

/** Newtonsoft's UTC DateTime: `2025-03-28T16:00:00.123Z`, `2025-03-28T16:00:00Z` (zeros trimmed). */
export const jsonDate = (millis: number): string => {
  const { base, fraction } = isoParts(millis)
  const trimmed = fraction.replace(/0+$/, "")
  return trimmed === "" ? `${base}Z` : `${base}.${trimmed}Z`
}

/** `yyyy-MM-dd HH:mm:ss.fff` (the gossip text form). */
export const shortDate = (millis: number): string => {
  const d = new Date(millis)
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)} ` +
    `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}.${pad(d.getUTCMilliseconds(), 3)}`
  )
}

/** `TimeSpan.ToString("G")`: `d:hh:mm:ss.fffffff`, days and seven fractional digits always present. */
export const timeSpanGeneral = (millis: number): string => {
  const ticks = Math.max(0, Math.round(millis * 10_000))
  const totalSeconds = Math.floor(ticks / 10_000_000)
  const days = Math.floor(totalSeconds / 86_400)
  return (
    `${days}:${pad(Math.floor(totalSeconds / 3600) % 24, 2)}:${pad(Math.floor(totalSeconds / 60) % 60, 2)}:` +
    `${pad(totalSeconds % 60, 2)}.${pad(ticks % 10_000_000, 7)}`
  )
}
