/**
 * The next occurrence of an expanded schedule, as the reference computes it: the first whole minute
 * strictly after the base time (seconds and milliseconds of the base are dropped, then one minute added)
 * whose minute, hour, day of month, month AND day of week are all in their sets, on the UTC wall clock.
 *
 * The Gregorian calendar repeats every 400 years (146,097 days, a whole number of weeks), so a schedule
 * that occurs at all occurs within 400 years of any base: the search stops there and answers undefined
 * (`0 0 30 2 *`). The reference's calendar also ends with year 9999; nothing later is an occurrence.
 */

/** The value sets of the five fields, each sorted ascending. */
export interface CronValueSets {
  readonly minutes: ReadonlyArray<number>
  readonly hours: ReadonlyArray<number>
  readonly daysOfMonth: ReadonlyArray<number>
  readonly months: ReadonlyArray<number>
  readonly daysOfWeek: ReadonlyArray<number>
}

const MillisPerMinute = 60_000
const MillisPerDay = 86_400_000
const CalendarCycleYears = 400
const LastYear = 9999

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

const daysInMonth = (year: number, month: number): number =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

/** Days since 1970-01-01 of a proleptic Gregorian date (valid for every year, unlike `Date.UTC`'s 0–99). */
const daysFromCivil = (year: number, month: number, day: number): number => {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
}

/** 0 = Sunday; 1970-01-01 was a Thursday. */
const dayOfWeek = (days: number): number => (((days + 4) % 7) + 7) % 7

const firstAtLeast = (values: ReadonlyArray<number>, from: number): number | undefined =>
  values.find((value) => value >= from)

/** The first time on `days` at or after `fromMinuteOfDay` whose hour and minute match, in minutes of day. */
const firstTimeOfDay = (sets: CronValueSets, fromMinuteOfDay: number): number | undefined => {
  const fromHour = Math.floor(fromMinuteOfDay / 60)
  for (const hour of sets.hours) {
    if (hour < fromHour) continue
    const minute = firstAtLeast(sets.minutes, hour === fromHour ? fromMinuteOfDay % 60 : 0)
    if (minute !== undefined) return hour * 60 + minute
  }
  return undefined
}

/** The first occurrence strictly after `afterMillis`, or undefined when there is none. */
export const firstOccurrenceAfter = (sets: CronValueSets, afterMillis: number): number | undefined => {
  const start = (Math.floor(afterMillis / MillisPerMinute) + 1) * MillisPerMinute
  const startDate = new Date(start)
  const startYear = startDate.getUTCFullYear()
  const startMonth = startDate.getUTCMonth() + 1
  const startDay = startDate.getUTCDate()
  const startMinuteOfDay = startDate.getUTCHours() * 60 + startDate.getUTCMinutes()
  const lastYear = Math.min(startYear + CalendarCycleYears, LastYear)
  for (let year = startYear; year <= lastYear; year++) {
    for (const month of sets.months) {
      if (year === startYear && month < startMonth) continue
      const isStartMonth = year === startYear && month === startMonth
      for (const day of sets.daysOfMonth) {
        if (day > daysInMonth(year, month)) break
        if (isStartMonth && day < startDay) continue
        const days = daysFromCivil(year, month, day)
        if (!sets.daysOfWeek.includes(dayOfWeek(days))) continue
        const minuteOfDay = firstTimeOfDay(sets, isStartMonth && day === startDay ? startMinuteOfDay : 0)
        if (minuteOfDay !== undefined) return days * MillisPerDay + minuteOfDay * MillisPerMinute
      }
    }
  }
  return undefined
}
