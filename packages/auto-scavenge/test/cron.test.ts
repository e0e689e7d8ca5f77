// CRON in the reference's dialect: what it accepts and rejects, its expanded rendering, and next occurrences
// (AND rule, strictly after, UTC, month/year ends, leap years, never-occurring schedules). Many cases are
// the reference library's own (NCrontab's schedule tests), restated here as data.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { formatTimeSpan } from "@vellum/scavenge"
import { nextOccurrence, parseCron } from "../src/index.js"

const utc = (text: string): number => Date.parse(`${text.replace(" ", "T")}Z`)
const iso = (millis: number | undefined): string | undefined =>
  millis === undefined ? undefined : new Date(millis).toISOString().slice(0, 19).replace("T", " ")

describe("the expanded rendering", () => {
  it.each([
    // NCrontab's formatting cases
    ["* * * * *", "* * * * *"],
    ["* 1-2,3 * * *", "* 1-3 * * *"],
    ["* * * */2 *", "* * * 1,3,5,7,9,11 *"],
    ["10-40/15 * * * *", "10,25,40 * * * *"],
    ["* * * Mar,Jan,Aug Fri,Mon-Tue", "* * * 1,3,8 1-2,5"],
    // the reference's documented examples
    ["*/15 * * * *", "0,15,30,45 * * * *"],
    ["0 9 * * MON-FRI", "0 9 * * 1-5"],
    ["0-59 * * * *", "* * * * *"],
    ["0 6 * * 6", "0 6 * * 6"],
    // a run of two collapses too; full ranges written out become `*`
    ["1,2 * * * *", "1-2 * * * *"],
    ["0 0 * * 0,1,2,3,4,5,6", "0 0 * * *"],
    ["0 0 1-31 1-12 0-6", "0 0 * * *"],
    ["0,59 0,23 1,31 1,12 0,6", "0,59 0,23 1,31 1,12 0,6"],
    // reversed ranges are swapped, also under a step
    ["5-1 * * * *", "1-5 * * * *"],
    ["50-10/20 * * * *", "10,30,50 * * * *"],
    ["0 0 * * Fri-Mon", "0 0 * * 1-5"],
    // n/s runs from n to the field's maximum
    ["55/2 * * * *", "55,57,59 * * * *"],
    ["59/5 * * * *", "59 * * * *"],
    ["0 14/1 * * *", "0 14-23 * * *"],
    ["0 0 * jan/5 *", "0 0 * 1,6,11 *"],
    // a step below 1 counts as 1; a step is a .NET integer (sign, surrounding whitespace)
    ["*/0 * * * *", "* * * * *"],
    ["*/-5 * * * *", "* * * * *"],
    ["5/0 * * * *", "5-59 * * * *"],
    ["*/+20 * * * *", "0,20,40 * * * *"],
    ["*/\t20 * * * *", "0,20,40 * * * *"],
    // lists mix every form, repeats are harmless
    ["1,5-10/2,*/30 * * * *", "0-1,5,7,9,30 * * * *"],
    ["1,1 * * */1,*/2 *", "1 * * * *"],
    [`${Array(300).fill("*").join(",")} * * * *`, "* * * * *"],
    // repeated, leading and trailing spaces; a value may carry trailing whitespace (it is no separator)
    ["  0   6 *  * 6  ", "0 6 * * 6"],
    ["0 0 * * 5\t", "0 0 * * 5"],
    ["0 0 * * 5\r\0", "0 0 * * 5"],
    ["007 08 * * *", "7 8 * * *"],
    // names: the first name (calendar order) the text is a case-insensitive prefix of
    ["0 0 1 j *", "0 0 1 1 *"],
    ["0 0 1 Ma *", "0 0 1 3 *"],
    ["0 0 1 ju *", "0 0 1 6 *"],
    ["0 0 1 JUL *", "0 0 1 7 *"],
    ["0 0 1 a *", "0 0 1 4 *"],
    ["0 0 1 SEPT-October *", "0 0 1 9-10 *"],
    ["0 0 * * s", "0 0 * * 0"],
    ["0 0 * * t", "0 0 * * 2"],
    ["0 0 * * th,sa", "0 0 * * 4,6"],
    ["0 0 * * sunday,SATURDAY", "0 0 * * 0,6"],
    ["20 * * january,FeB,Mar,april,May,JuNE,July,Augu,SEPT-October,Nov,DECEM *", "20 * * * *"],
    // days of month are rendered as written, even those a named month lacks
    ["0 0 15,31 4 *", "0 0 15,31 4 *"],
    ["0 0 30 2 *", "0 0 30 2 *"]
  ])("%j renders as %j", (text, expanded) => {
    expect(parseCron(text)?.expanded).toBe(expanded)
  })

  it("an expanded rendering reads back as itself", () => {
    for (const text of ["*/15 * * * *", "0 9 * * MON-FRI", "1,5-10/2,*/30 3 1,15 */3 Sat"]) {
      const expanded = parseCron(text)!.expanded
      expect(parseCron(expanded)?.expanded).toBe(expanded)
    }
  })
})

describe("rejected expressions", () => {
  it.each([
    // field count: none, four, six (no seconds field); a tab does not separate fields
    [""],
    ["   "],
    ["* * * *"],
    ["* * * * * *"],
    ["0 0 * * * 2026"],
    ["0\t0 * * *"],
    // 7 is not Sunday
    ["0 0 * * 7"],
    ["0 0 * * 0-7"],
    ["0 0 * * 7-1"],
    // other dialects' specials
    ["0 0 L * *"],
    ["0 0 ? * *"],
    ["0 0 * * ?"],
    ["0 0 * * 5#3"],
    ["0 0 * * 5L"],
    ["0 0 15W * *"],
    ["@daily"],
    ["@hourly"],
    ["H * * * *"],
    // out of range
    ["60 * * * *"],
    ["* 24 * * *"],
    ["* * 0 * *"],
    ["* * 32 * *"],
    ["* * * 0 *"],
    ["* * * 13 *"],
    ["70/5 * * * *"],
    ["* * 0/5 * *"],
    ["* 1,2,3,456,7,8,9 * * *"],
    ["99999999999 * * * *"],
    ["*/99999999999 * * * *"],
    // garbage (several are NCrontab's own bad-field cases)
    ["bad * * * *"],
    ["* bad * * *"],
    ["* * bad * *"],
    ["* * * bad *"],
    ["* * * * mon,bad,wed"],
    ["* 1,Z,3,4 * * *"],
    ["* 1/Z * * *"],
    ["* 3-l2 * * *"],
    ["jan * * * *"],
    ["* * * Mon *"],
    ["* * * * jan"],
    ["* * * * Mondays"],
    ["* * * * mon\t"],
    ["1, * * * *"],
    [",1 * * * *"],
    ["1,,2 * * * *"],
    ["*/ * * * *"],
    ["/5 * * * *"],
    ["*/5/2 * * * *"],
    ["-5 * * * *"],
    ["1- * * * *"],
    ["1-2-3 * * * *"],
    ["*-5 * * * *"],
    ["** * * * *"],
    ["0x1 * * * *"],
    ["1.5 * * * *"],
    ["+1 * * * *"]
  ])("%j", (text) => {
    expect(parseCron(text)).toBeUndefined()
  })
})

describe("next occurrences", () => {
  // NCrontab's five-field evaluation cases: [base, expression, next], on the UTC wall clock.
  it.each([
    ["2003-01-01 00:00:00", "* * * * *", "2003-01-01 00:01:00"],
    ["2003-01-01 00:01:00", "* * * * *", "2003-01-01 00:02:00"],
    ["2003-01-01 00:59:00", "* * * * *", "2003-01-01 01:00:00"],
    ["2003-01-01 23:59:00", "* * * * *", "2003-01-02 00:00:00"],
    ["2003-12-31 23:59:00", "* * * * *", "2004-01-01 00:00:00"],
    ["2003-02-28 23:59:00", "* * * * *", "2003-03-01 00:00:00"],
    ["2004-02-28 23:59:00", "* * * * *", "2004-02-29 00:00:00"],
    ["2003-01-01 00:00:00", "45 * * * *", "2003-01-01 00:45:00"],
    ["2003-01-01 00:45:00", "45-47,48,49 * * * *", "2003-01-01 00:46:00"],
    ["2003-01-01 00:49:00", "45-47,48,49 * * * *", "2003-01-01 01:45:00"],
    ["2003-01-01 00:00:00", "2/5 * * * *", "2003-01-01 00:02:00"],
    ["2003-01-01 00:52:00", "2/5 * * * *", "2003-01-01 00:57:00"],
    ["2003-01-01 00:57:00", "2/5 * * * *", "2003-01-01 01:02:00"],
    ["2003-12-20 10:00:00", " * 3/4 * * *", "2003-12-20 11:00:00"],
    ["2003-12-20 00:30:00", " * 3   * * *", "2003-12-20 03:00:00"],
    ["2003-12-20 01:45:00", "30 3   * * *", "2003-12-20 03:30:00"],
    ["2003-01-07 00:00:00", "30  *  1 * *", "2003-02-01 00:30:00"],
    ["2003-02-01 00:30:00", "30  *  1 * *", "2003-02-01 01:30:00"],
    ["2003-01-01 00:00:00", "10  * 22    * *", "2003-01-22 00:10:00"],
    ["2003-01-01 00:00:00", "30 23 19    * *", "2003-01-19 23:30:00"],
    ["2003-01-01 00:01:00", " *  * 21    * *", "2003-01-21 00:00:00"],
    ["2003-07-10 00:00:00", " *  * 30,31 * *", "2003-07-30 00:00:00"],
    // month ends of 28, 29, 30 and 31 days (bases with seconds: the next whole minute after them)
    ["2002-02-28 23:59:59", "* * * 3 *", "2002-03-01 00:00:00"],
    ["2004-02-29 23:59:59", "* * * 3 *", "2004-03-01 00:00:00"],
    ["2002-03-31 23:59:59", "* * * 4 *", "2002-04-01 00:00:00"],
    ["2002-04-30 23:59:59", "* * * 5 *", "2002-05-01 00:00:00"],
    // days 30 and 31 skip the months that lack them
    ["2000-01-31 00:00:00", "0 0 15,30,31 * *", "2000-02-15 00:00:00"],
    ["2000-02-15 00:00:00", "0 0 15,30,31 * *", "2000-03-15 00:00:00"],
    ["2000-03-31 00:00:00", "0 0 15,30,31 * *", "2000-04-15 00:00:00"],
    ["2000-04-30 00:00:00", "0 0 15,30,31 * *", "2000-05-15 00:00:00"],
    ["2000-12-31 00:00:00", "0 0 15,30,31 * *", "2001-01-15 00:00:00"],
    // months, year rollover
    ["2003-12-01 05:00:00", "10 * * 6 *", "2004-06-01 00:10:00"],
    ["2003-01-04 00:00:00", " 1 2 3 * *", "2003-02-03 02:01:00"],
    ["2002-07-01 05:00:00", "10 * * February,April-Jun *", "2003-02-01 00:10:00"],
    ["1988-09-11 14:23:00", "* 12 1 6 *", "1989-06-01 12:00:00"],
    ["1988-03-11 14:23:00", "* 2,4-8,15 * 6 *", "1988-06-01 02:00:00"],
    [
      "1988-03-11 14:23:00",
      "20 * * january,FeB,Mar,april,May,JuNE,July,Augu,SEPT-October,Nov,DECEM *",
      "1988-03-11 15:20:00"
    ],
    // days of week
    ["2003-06-26 10:00:00", "30 6 * * sunday", "2003-06-29 06:30:00"],
    ["2003-06-24 12:01:00", "1 12 * * 2", "2003-07-01 12:01:00"],
    ["2003-06-30 18:15:00", "15 18 * * Mon", "2003-07-07 18:15:00"],
    ["2003-01-01 00:00:00", "* * * * Mon", "2003-01-06 00:00:00"],
    // day of month AND day of week: only the 1st that is a Monday
    ["2003-01-01 12:00:00", "45 16 1 * Mon", "2003-09-01 16:45:00"],
    ["2003-09-01 23:45:00", "45 16 1 * Mon", "2003-12-01 16:45:00"],
    // leap years
    ["2000-01-01 12:00:00", "1 12 29 2 *", "2000-02-29 12:01:00"],
    ["2000-02-29 12:01:00", "1 12 29 2 *", "2004-02-29 12:01:00"],
    ["2100-01-01 00:00:00", "0 0 29 2 *", "2104-02-29 00:00:00"],
    ["2004-02-29 12:01:00", "1 12 28 2 *", "2005-02-28 12:01:00"],
    ["2017-01-01 00:00:00", "0 0 29 Feb Mon", "2044-02-29 00:00:00"],
    ["9000-01-01 00:00:00", "0 0 29 Feb Mon", "9008-02-29 00:00:00"],
    ["2000-01-01 14:40:00", "40 14/1 * * *", "2000-01-01 15:40:00"]
  ])("after %s, %j is next at %s", (base, text, next) => {
    expect(iso(parseCron(text)!.nextAfter(utc(base)))).toBe(next)
  })

  it("day of month and day of week must both match (only Friday the 13th)", () => {
    const schedule = parseCron("0 0 13 * 5")!
    const fridays: Array<string | undefined> = []
    let t = utc("2026-01-01 00:00:00")
    for (let i = 0; i < 4; i++) {
      const next = schedule.nextAfter(t)!
      fridays.push(iso(next))
      t = next
    }
    expect(fridays).toEqual([
      "2026-02-13 00:00:00",
      "2026-03-13 00:00:00",
      "2026-11-13 00:00:00",
      "2027-08-13 00:00:00"
    ])
  })

  it("is strictly after the base, whatever its seconds and milliseconds", () => {
    const everyMinute = parseCron("* * * * *")!
    const base = utc("2026-05-01 10:00:00")
    expect(everyMinute.nextAfter(base)).toBe(base + 60_000)
    expect(everyMinute.nextAfter(base + 1)).toBe(base + 60_000)
    expect(everyMinute.nextAfter(base + 59_999)).toBe(base + 60_000)
    const hourly = parseCron("0 * * * *")!
    expect(hourly.nextAfter(base)).toBe(base + 3_600_000)
    expect(hourly.nextAfter(base - 1)).toBe(base)
  })

  it.each([["0 0 30 2 *"], ["* * 31 Feb *"], ["0 0 31 4,6,9,11 *"], ["0 0 30,31 2 Mon"]])(
    "%j never occurs: undefined",
    (text) => {
      expect(parseCron(text)!.nextAfter(utc("2001-01-01 00:00:00"))).toBeUndefined()
    }
  )

  it("ends with the reference's calendar, in year 9999", () => {
    const schedule = parseCron("0 0 29 Feb Mon")!
    expect(iso(schedule.nextAfter(utc("9988-01-01 00:00:00")))).toBe("9988-02-29 00:00:00")
    expect(schedule.nextAfter(utc("9988-02-29 00:00:00"))).toBeUndefined()
    expect(iso(parseCron("59 23 31 12 *")!.nextAfter(utc("9999-01-01 00:00:00")))).toBe("9999-12-31 23:59:00")
  })

  it("nextOccurrence reads the stored expanded rendering", () => {
    const base = utc("2026-05-01 10:07:30")
    const expanded = parseCron("*/15 9-17 * * MON-FRI")!.expanded
    expect(iso(nextOccurrence(expanded, base))).toBe("2026-05-01 10:15:00")
    expect(nextOccurrence("not a schedule", base)).toBeUndefined()
  })
})

describe("timeUntilNextCycle's .NET TimeSpan text", () => {
  it.each([
    [3_600_000, "01:00:00"],
    [(86_400 + 13 * 3600 + 14 * 60 + 32) * 1000 + 629.9115, "1.13:14:32.6299115"],
    [0, "00:00:00"],
    [90_061_500, "1.01:01:01.5000000"]
  ])("%d ms is %j", (millis, text) => {
    expect(formatTimeSpan(millis)).toBe(text)
  })
})

// The property's expressions: each field a list of `*`, `n` and `a-b` elements, each maybe with a step,
// generated as data so that the test knows, independently of the parser, which values a field holds.
type Element =
  | { readonly kind: "star"; readonly step?: number }
  | { readonly kind: "value"; readonly value: number; readonly step?: number }
  | { readonly kind: "range"; readonly first: number; readonly last: number; readonly step?: number }

interface FieldShape {
  readonly min: number
  readonly max: number
  readonly abbreviations: ReadonlyArray<string>
}

const Shapes: ReadonlyArray<FieldShape> = [
  { min: 0, max: 59, abbreviations: [] },
  { min: 0, max: 23, abbreviations: [] },
  { min: 1, max: 31, abbreviations: [] },
  {
    min: 1,
    max: 12,
    abbreviations: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
  },
  { min: 0, max: 6, abbreviations: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] }
]

const elementArb = (shape: FieldShape): fc.Arbitrary<Element> => {
  const value = fc.integer({ min: shape.min, max: shape.max })
  const step = fc.option(fc.integer({ min: 1, max: 25 }), { nil: undefined })
  return fc.oneof(
    { weight: 2, arbitrary: step.map((s): Element => ({ kind: "star", step: s })) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("value" as const), value, step }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("range" as const), first: value, last: value, step }) }
  )
}

/** The values an element stands for, by the dialect's rules as the reference states them. */
const valuesOf = (shape: FieldShape, element: Element): ReadonlyArray<number> => {
  const [from, to] =
    element.kind === "star"
      ? [shape.min, shape.max]
      : element.kind === "value"
        ? [element.value, element.step === undefined ? element.value : shape.max]
        : [Math.min(element.first, element.last), Math.max(element.first, element.last)]
  const values: Array<number> = []
  for (let v = from; v <= to; v += element.step ?? 1) values.push(v)
  return values
}

const textOf = (shape: FieldShape, element: Element, useNames: boolean): string => {
  const name = (v: number): string =>
    useNames && shape.abbreviations.length > 0 ? shape.abbreviations[v - shape.min]! : `${v}`
  const body =
    element.kind === "star"
      ? "*"
      : element.kind === "value"
        ? name(element.value)
        : `${name(element.first)}-${name(element.last)}`
  return element.step === undefined ? body : `${body}/${element.step}`
}

const fieldArb = (shape: FieldShape) =>
  fc.record({ elements: fc.array(elementArb(shape), { minLength: 1, maxLength: 3 }), useNames: fc.boolean() })

const WindowMinutes = 8 * 24 * 60

describe("next occurrence, against a minute-by-minute scan", () => {
  it("is after the base, matches every field, and no minute before it does", () => {
    fc.assert(
      fc.property(
        fc.tuple(...Shapes.map(fieldArb)),
        fc.integer({ min: utc("1990-01-01 00:00:00"), max: utc("2100-01-01 00:00:00") }),
        (fields, base) => {
          const sets = fields.map(({ elements }, i) => new Set(elements.flatMap((e) => valuesOf(Shapes[i]!, e))))
          const text = fields
            .map(({ elements, useNames }, i) => elements.map((e) => textOf(Shapes[i]!, e, useNames)).join(","))
            .join(" ")
          const matches = (t: number): boolean => {
            const d = new Date(t)
            const parts = [d.getUTCMinutes(), d.getUTCHours(), d.getUTCDate(), d.getUTCMonth() + 1, d.getUTCDay()]
            return parts.every((part, i) => sets[i]!.has(part))
          }
          const schedule = parseCron(text)
          expect(schedule, text).toBeDefined()
          const next = schedule!.nextAfter(base)
          const firstMinute = Math.floor(base / 60_000) * 60_000 + 60_000
          let scanned: number | undefined
          for (let m = 0; m < WindowMinutes && scanned === undefined; m++) {
            if (matches(firstMinute + m * 60_000)) scanned = firstMinute + m * 60_000
          }
          if (scanned !== undefined) expect(next, text).toBe(scanned)
          else if (next !== undefined) {
            expect(next).toBeGreaterThanOrEqual(firstMinute + WindowMinutes * 60_000)
            expect(matches(next), text).toBe(true)
          }
          if (next !== undefined) expect(next).toBeGreaterThan(base)
          // the expanded rendering is the same schedule
          expect(parseCron(schedule!.expanded)?.nextAfter(base), text).toBe(next)
        }
      ),
      { numRuns: 200 }
    )
  })
})
