import { XMLValidator } from "fast-xml-parser"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  NoEventsDate,
  StartPosition,
  escapeDataString,
  formatAllPosition,
  formatAtomDate,
  parseAllPosition,
  parseEmbed
} from "../src/atom/index.js"
import { jsonValueOrString, prettyJsonObject, reindentJson } from "../src/atom/jsonIndent.js"
import { dotnetDouble, dotnetDoubleFromExponent, quoteJson } from "../src/atom/jsonText.js"
import { jsonToXml } from "../src/atom/xml.js"
import { encodeXmlName, escapeXmlAttribute, escapeXmlText } from "../src/xmlText.js"

describe("escapeDataString (RFC 3986)", () => {
  it("keeps only unreserved characters literal", () => {
    expect(escapeDataString("orders-1_a.b~C9")).toBe("orders-1_a.b~C9")
    expect(escapeDataString("$all")).toBe("%24all")
    expect(escapeDataString("$$orders")).toBe("%24%24orders")
    expect(escapeDataString("a@b")).toBe("a%40b")
    expect(escapeDataString("a/b c")).toBe("a%2Fb%20c")
  })

  it("escapes ! * ' ( ) unlike encodeURIComponent", () => {
    expect(escapeDataString("!*'()")).toBe("%21%2A%27%28%29")
  })

  it("writes other characters as UTF-8 bytes, lone surrogates as U+FFFD", () => {
    expect(escapeDataString("é")).toBe("%C3%A9")
    expect(escapeDataString("😀")).toBe("%F0%9F%98%80")
    expect(escapeDataString("a\ud800")).toBe("a%EF%BF%BD")
    expect(escapeDataString("")).toBe("")
  })
})

describe("formatAtomDate (XmlConvert UTC)", () => {
  it("prints microseconds with trailing zeros trimmed", () => {
    expect(formatAtomDate(Date.UTC(2017, 11, 15, 12, 19, 32) * 1000 + 21776)).toBe("2017-12-15T12:19:32.021776Z")
    expect(formatAtomDate(Date.UTC(2025, 2, 1, 10, 0, 0) * 1000 + 123456)).toBe("2025-03-01T10:00:00.123456Z")
    expect(formatAtomDate(Date.UTC(2025, 2, 1, 10, 0, 0) * 1000 + 100000)).toBe("2025-03-01T10:00:00.1Z")
    expect(formatAtomDate(Date.UTC(2025, 2, 1, 10, 0, 0) * 1000 + 10)).toBe("2025-03-01T10:00:00.00001Z")
  })

  it("omits the fraction on whole seconds", () => {
    expect(formatAtomDate(0)).toBe("1970-01-01T00:00:00Z")
    expect(formatAtomDate(Date.UTC(2024, 1, 29, 23, 59, 59) * 1000)).toBe("2024-02-29T23:59:59Z")
  })

  it("handles times before the epoch", () => {
    expect(formatAtomDate(-1)).toBe("1969-12-31T23:59:59.999999Z")
    expect(formatAtomDate(-500000)).toBe("1969-12-31T23:59:59.5Z")
  })

  it("has DateTime.MinValue for pages without events", () => {
    expect(NoEventsDate).toBe("0001-01-01T00:00:00Z")
  })
})

describe("$all positions", () => {
  it("writes commit then prepare as 16 uppercase hex digits each", () => {
    expect(formatAllPosition(0)).toBe(StartPosition)
    expect(StartPosition).toBe("00000000000000000000000000000000")
    expect(formatAllPosition(0xabc)).toBe("0000000000000ABC0000000000000ABC")
  })

  it("parses its own tokens back, in either case", () => {
    for (const p of [0, 1, 4096, 123456789, Number.MAX_SAFE_INTEGER]) {
      expect(parseAllPosition(formatAllPosition(p))).toEqual({ commit: p, prepare: p })
    }
    expect(parseAllPosition("0000000000000abc0000000000000ABD")).toEqual({ commit: 0xabc, prepare: 0xabd })
  })

  it("rejects wrong lengths, non-hex digits and negative longs", () => {
    expect(parseAllPosition("0".repeat(31))).toBeUndefined()
    expect(parseAllPosition("0".repeat(33))).toBeUndefined()
    expect(parseAllPosition("head")).toBeUndefined()
    expect(parseAllPosition("G" + "0".repeat(31))).toBeUndefined()
    expect(parseAllPosition("-" + "0".repeat(31))).toBeUndefined()
    expect(parseAllPosition("8000000000000000" + "0".repeat(16))).toBeUndefined()
    expect(parseAllPosition("0".repeat(16) + "FFFFFFFFFFFFFFFF")).toBeUndefined()
  })

  it("clamps positions past 2^53 to the largest safe integer (past any log end)", () => {
    expect(parseAllPosition("7FFFFFFFFFFFFFFF7FFFFFFFFFFFFFFF")).toEqual({
      commit: Number.MAX_SAFE_INTEGER,
      prepare: Number.MAX_SAFE_INTEGER
    })
  })
})

describe("parseEmbed", () => {
  it("knows only content, rich, body, pretty and tryharder, case-insensitively", () => {
    expect(parseEmbed("content")).toBe("Content")
    expect(parseEmbed("RICH")).toBe("Rich")
    expect(parseEmbed("Body")).toBe("Body")
    expect(parseEmbed("pretty")).toBe("PrettyBody")
    expect(parseEmbed("TryHarder")).toBe("TryHarder")
  })

  it("treats anything else as None, even the documented PrettyBody", () => {
    expect(parseEmbed("PrettyBody")).toBe("None")
    expect(parseEmbed("None")).toBe("None")
    expect(parseEmbed("")).toBe("None")
    expect(parseEmbed(null)).toBe("None")
    expect(parseEmbed(undefined)).toBe("None")
  })
})

describe("JSON text as Newtonsoft prints it", () => {
  it("quotes strings escaping quotes, backslashes, controls and U+0085/2028/2029", () => {
    expect(quoteJson("plain é")).toBe('"plain é"')
    expect(quoteJson('a"b\\c\n\t\u0001')).toBe('"a\\"b\\\\c\\n\\t\\u0001"')
    expect(quoteJson("x\u2028y\u0085")).toBe('"x\\u2028y\\u0085"')
  })

  it("re-indents with two spaces, `: ` separators and empty containers inline", () => {
    expect(reindentJson('{"a":1,"b":[true,null,{}],"c":[]}', 0)).toBe(
      '{\n  "a": 1,\n  "b": [\n    true,\n    null,\n    {}\n  ],\n  "c": []\n}'
    )
    expect(reindentJson('{"a":{"b":"c"}}', 2)).toBe('{\n      "a": {\n        "b": "c"\n      }\n    }')
    expect(reindentJson('  "text"  ', 0)).toBe('"text"')
  })

  it("keeps integer literals exact (no rounding past 2^53)", () => {
    expect(reindentJson("[12345678901234567890,-0,-5]", 0)).toBe("[\n  12345678901234567890,\n  0,\n  -5\n]")
  })

  it("prints non-integers as .NET doubles", () => {
    expect(dotnetDouble("1.50")).toBe("1.5")
    expect(dotnetDouble("1e2")).toBe("100.0")
    expect(dotnetDouble("1.0")).toBe("1.0")
    expect(dotnetDouble("0.0001")).toBe("0.0001")
    expect(dotnetDouble("0.00001")).toBe("1E-05")
    expect(dotnetDouble("1e15")).toBe("1E+15")
    expect(dotnetDouble("123456789012345.5")).toBe("123456789012345.5")
    expect(dotnetDouble("-2.5e-7")).toBe("-2.5E-07")
    expect(dotnetDouble("-0.0")).toBe("-0.0")
  })

  it("prints plain-range doubles exactly as the general (exponent-form) path does", () => {
    // The fast path (JavaScript's own number-to-string between 1e-4 and 1e15) must agree with the general one
    // everywhere, the range's edges and the rounding of long fractions included.
    const edges = [
      1e-4,
      -1e-4,
      0.00010000000000000002,
      1e15 - 0.125,
      999999999999999.9,
      0.1 + 0.2,
      123.456,
      5e-4,
      42,
      1e14
    ]
    for (const v of edges) expect(dotnetDouble(String(v))).toBe(dotnetDoubleFromExponent(v))
    fc.assert(
      fc.property(fc.double({ min: -1e15, max: 1e15, noNaN: true, noDefaultInfinity: true }), (v) => {
        fc.pre(v !== 0 && Math.abs(v) < 1e15)
        expect(dotnetDouble(String(v))).toBe(dotnetDoubleFromExponent(v))
      }),
      { numRuns: 2000 }
    )
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 ** 9 }), fc.integer({ min: 0, max: 12 }), (n, scale) => {
        const v = n / 10 ** scale
        expect(dotnetDouble(String(v))).toBe(dotnetDoubleFromExponent(v))
      }),
      { numRuns: 2000 }
    )
  })

  it("passes through decimal texts that are already their shortest form, and only those", () => {
    // The token fast path must give what the number does, for any text a client may send.
    const expected = (t: string) => {
      const v = Number(t)
      return v === 0 ? (Object.is(v, -0) ? "-0.0" : "0.0") : dotnetDoubleFromExponent(v)
    }
    const digits = (min: number, max: number) =>
      fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max })
    const token = fc
      .tuple(fc.boolean(), digits(1, 18), digits(1, 18))
      .map(([negative, int, frac]) => `${negative ? "-" : ""}${int}.${frac}`)
    fc.assert(
      fc.property(token, (t) => {
        expect(dotnetDouble(t)).toBe(expected(t))
      }),
      { numRuns: 5000 }
    )
    // 16+ significant digits, a trailing zero, a leading zero, below 10^-4, negative zero: not passed through.
    for (const t of [
      "0.1000000000000000055511151231257827",
      "1.10",
      "01.5",
      "0.00005",
      "-0.0",
      "1234567890123.4567",
      "0.1234567890123456"
    ]) {
      expect(dotnetDouble(t)).toBe(expected(t))
    }
  })

  it("reads leniently: single quotes, unquoted names, comments, raw control characters", () => {
    expect(reindentJson("{a : '1', $b_2: 'it\\'s' /* note */}", 0)).toBe('{\n  "a": "1",\n  "$b_2": "it\'s"\n}')
    expect(reindentJson("// lead\n[1]", 0)).toBe("[\n  1\n]")
    expect(reindentJson('["a\nb"]', 0)).toBe('[\n  "a\\nb"\n]')
  })

  it("decodes escapes and re-escapes only what must be", () => {
    expect(reindentJson('["\\u0041\\/\\n"]', 0)).toBe('[\n  "A/\\n"\n]')
    expect(reindentJson('{"q":"say \\"hi\\"","r":"x"}', 0)).toBe('{\n  "q": "say \\"hi\\"",\n  "r": "x"\n}')
  })

  it("rejects what is not one JSON value", () => {
    for (const text of [
      "",
      "   ",
      "{",
      "[1,]",
      '{"a":1,}',
      "01",
      "1.",
      "NaN",
      "nul",
      "nullx",
      "{} {}",
      "'open",
      "[1 2]",
      '{"a" 1}',
      '"\\x"',
      "/* open"
    ]) {
      expect(reindentJson(text, 0), text).toBeUndefined()
    }
  })

  it("pretty-prints objects only; other text is left alone", () => {
    expect(prettyJsonObject('{"a":"1"}')).toBe('{\n  "a": "1"\n}')
    expect(prettyJsonObject("[1,2]")).toBeUndefined()
    expect(prettyJsonObject("5")).toBeUndefined()
    expect(prettyJsonObject("{bad")).toBeUndefined()
    expect(prettyJsonObject("")).toBe("")
  })

  it("shows payloads parsed when they are JSON (not null), else as strings", () => {
    expect(jsonValueOrString('{"a":"1"}', 0)).toBe('{\n  "a": "1"\n}')
    expect(jsonValueOrString("42", 0)).toBe("42")
    expect(jsonValueOrString("", 0)).toBe('""')
    expect(jsonValueOrString("null", 0)).toBe('"null"')
    expect(jsonValueOrString("not json", 0)).toBe('"not json"')
  })
})

describe("XML text", () => {
  it("escapes markup, keeps \\r, and replaces characters XML cannot carry", () => {
    expect(escapeXmlText("a<b>&c")).toBe("a&lt;b&gt;&amp;c")
    expect(escapeXmlText("x\r\ny\u0001")).toBe("x&#xD;\ny\uFFFD")
    expect(escapeXmlAttribute('"q"\t\n')).toBe("&quot;q&quot;&#x9;&#xA;")
    expect(escapeXmlText("a\udc00b")).toBe("a\uFFFDb")
  })

  it("encodes names that are not XML names", () => {
    expect(encodeXmlName("eventType")).toBe("eventType")
    expect(encodeXmlName("a b")).toBe("a_x0020_b")
    expect(encodeXmlName("1st")).toBe("_x0031_st")
    expect(encodeXmlName("$type")).toBe("_x0024_type")
    expect(encodeXmlName("a:b")).toBe("a_x003A_b")
    expect(encodeXmlName("_x0041_")).toBe("_x005F_x0041_")
    expect(encodeXmlName("")).toBe("_")
    expect(encodeXmlName("a\u{1D400}")).toBe("a_x0001D400_")
  })

  it("converts JSON as Newtonsoft's XmlNodeConverter does", () => {
    expect(jsonToXml('{"a":"1","b":{"c":true},"n":null,"e":"","o":{}}', "data")).toBe(
      "<data><a>1</a><b><c>true</c></b><n /><e /><o /></data>"
    )
    expect(jsonToXml('{"list":[1,{"x":2}],"none":[]}', "data")).toBe("<data><list>1</list><list><x>2</x></list></data>")
    expect(jsonToXml('{"@id":"7","#text":"hi","@late":"x"}', "data")).toBe(
      '<data id="7">hi<_x0040_late>x</_x0040_late></data>'
    )
    expect(jsonToXml("[1,[2,3]]", "data")).toBe("<data><item>1</item><item><item>2</item><item>3</item></item></data>")
    expect(jsonToXml("[1,2]", "data", ' xmlns=""', true)).toBe('<data xmlns="">1</data><data xmlns="">2</data>')
    expect(jsonToXml('"a&b"', "data")).toBe("<data>a&amp;b</data>")
    expect(jsonToXml("{oops", "data")).toBeUndefined()
  })

  it("always yields well-formed XML", () => {
    const samples = [
      '{"a b":{"1":["<&>",{"@q":"\\""}]}}',
      "[[[]]]",
      '{"@a":1,"@a":2,"@xmlns":"u"}',
      '{"$type":"x","#text":"\\u0001"}',
      '{"ü":"\\ud800"}'
    ]
    for (const text of samples) {
      const xml = jsonToXml(text, "data")!
      expect(XMLValidator.validate(xml), xml).toBe(true)
    }
  })
})
