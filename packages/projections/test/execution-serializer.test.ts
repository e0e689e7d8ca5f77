import { describe, expect, it } from "vitest"
import { anEvent, outcomesOf, runFault, statesOf, withProjection } from "./executionSupport.js"

/** The state text of a handler returning `expression`. */
const stored = async (expression: string): Promise<string> =>
  (await statesOf(`fromAll().when({$any: function (s, e) { return ${expression} }})`, [anEvent("a", 0, "T")]))[0]

describe("the state serializer", () => {
  it("writes compact JSON in property order, leaving undefined members out and writing undefined items as null", async () => {
    expect(await stored("{b: 1, a: 'x', u: undefined, arr: [1, undefined, , null], n: {t: true}}")).toBe(
      '{"b":1,"a":"x","arr":[1,null,null,null],"n":{"t":true}}'
    )
  })

  it("does not honour toJSON: a Date or a Map is {}", async () => {
    expect(
      await stored(
        "{d: new Date(0), m: new Map([[1, 2]]), j: {toJSON: undefined, v: 1}, k: {toJSON: function () { return 1 }, v: 2}}"
      )
    ).toBe('{"d":{},"m":{},"j":{"v":1},"k":{"v":2}}')
  })

  it("writes a BigInt as a string of its digits", async () => {
    expect(await stored("{b: 12345678901234567890n, n: -5n}")).toBe('{"b":"12345678901234567890","n":"-5"}')
  })

  it("includes non-enumerable own members, leaves accessors, functions and symbols out", async () => {
    expect(
      await stored(
        "(function () { var o = {a: 1}; Object.defineProperty(o, 'hidden', {value: 2, enumerable: false}); Object.defineProperty(o, 'g', {get: function () { return 3 }, enumerable: true}); o.f = function () {}; o[Symbol('s')] = 4; return o })()"
      )
    ).toBe('{"a":1,"hidden":2}')
  })

  it("writes numbers as .NET writes a double", async () => {
    const numbers = [
      "0",
      "-0",
      "1",
      "-60",
      "0.1",
      "1.5",
      "0.0001",
      "0.00001",
      "123456789012345",
      "1e15",
      "1234567890123456.7",
      "12345678901234567",
      "5e123",
      "-1.5e-7",
      "1.7976931348623157e308",
      "5e-324",
      "NaN",
      "Infinity"
    ]
    expect(await stored(`[${numbers.join(",")}]`)).toBe(
      "[0,-0,1,-60,0.1,1.5,0.0001,1E-05,123456789012345,1E+15,1234567890123456.8,12345678901234568," +
        "5E+123,-1.5E-07,1.7976931348623157E+308,5E-324,null,null]"
    )
  })

  it("does not escape non-ASCII text", async () => {
    expect(await stored("{s: 'żółw \\u00e9 \\ud83d\\ude00', q: 'a\"b\\\\c\\n'}")).toBe(
      '{"s":"żółw é 😀","q":"a\\"b\\\\c\\n"}'
    )
  })

  it("a stored state read back and written again is the same text (the reference's round trips)", async () => {
    const texts = [
      "{}",
      '{"foo":123,"bar":456}',
      '{"fo o":[1,2,3]}',
      '{" foo":{}}',
      "[[],3]",
      '[{},[[],null],{"":[4,5,6]}]',
      '"stringvalue"',
      "true",
      "null",
      '["","\\"","\\\\","/","\\b","\\f","\\n","\\r","\\t","€"]',
      "[5,5E+123,5E-123,-5E-123,-50,0,-0.03,0.0123,-0.0123,-1.23E-123]"
    ]
    const outcomes = await withProjection("fromAll().when({$any: function (s) { return {v: s} }})", ({ handler }) =>
      outcomesOf(
        handler,
        texts.map((state, i) => ({ source: anEvent("a", i, "T"), partition: "", state }))
      )
    )
    expect(outcomes.map((o) => o.state)).toEqual(texts.map((text) => `{"v":${text}}`))
  })

  it("a boxed string is its own members", async () => {
    expect(await stored("{s: new String('ab')}")).toBe('{"s":{"0":"a","1":"b","length":2}}')
  })

  it("a state nested too deeply, or referring to itself, faults with a clear message", async () => {
    const message = "The value is nested more than 400 levels deep (or refers to itself) and cannot be serialized"
    const deep = await statesOf(
      "fromAll().when({$any: function (s) { var o = {}; for (var i = 0; i < 398; i++) o = {o: o}; return o }})",
      [anEvent("a", 0, "T")]
    )
    expect(deep[0].length).toBeGreaterThan(398 * 6)
    for (const body of [
      "var o = {}; for (var i = 0; i < 500; i++) o = {o: o}; return o",
      "var o = {}; o.self = o; return o"
    ])
      expect((await runFault(`fromAll().when({$any: function (s) { ${body} }})`, [anEvent("a", 0, "T")])).message).toBe(
        message
      )
  })
})
