/**
 * UUID text ↔ bytes: the parsers (`uuidWords`, `uuidToBytes`, `normalizeUuid`) agree with
 * plain definitions (the regexes of the accepted forms, the bytes read back) on every form a client may
 * send, and refuse near misses.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { isUuid, normalizeUuid, uuidFromBytes, uuidToBytes, uuidWords } from "../src/codec/bytes.js"

const CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const DASHED_OR_PLAIN =
  /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{32})$/

const bytes16 = fc.uint8Array({ minLength: 16, maxLength: 16 })

/** A text form of the id: canonical, upper or mixed case, with any of its four dashes left out. */
const textOf = (id: Uint8Array, upper: Array<boolean>, dashes: Array<boolean>): string => {
  const canonical = uuidFromBytes(id, 0)
  let out = ""
  let dash = 0
  for (let i = 0; i < canonical.length; i++) {
    const c = canonical[i]!
    if (c === "-") {
      if (dashes[dash++]) out += "-"
    } else {
      out += upper[i] ? c.toUpperCase() : c
    }
  }
  return out
}
const anyForm = fc.tuple(
  bytes16,
  fc.array(fc.boolean(), { minLength: 36, maxLength: 36 }),
  fc.array(fc.boolean(), { minLength: 4, maxLength: 4 })
)

const wordsOf = (id: Uint8Array): Array<number> => {
  const view = new DataView(id.buffer, id.byteOffset, 16)
  return [0, 4, 8, 12].map((o) => view.getInt32(o))
}

describe("UUID text", () => {
  it("every accepted form writes the id's bytes, and its words when dashed 8-4-4-4-12 or plain", () => {
    fc.assert(
      fc.property(anyForm, ([id, upper, dashes]) => {
        const text = textOf(id, upper, dashes)
        expect(isUuid(text)).toBe(true)
        const out = new Uint8Array(20)
        uuidToBytes(text, out, 2)
        expect([...out.subarray(2, 18)]).toEqual([...id])
        expect(out[0]).toBe(0)
        expect(out[19]).toBe(0)
        const words = new Int32Array(4)
        const parsed = uuidWords(text, words)
        expect(parsed).toBe(DASHED_OR_PLAIN.test(text))
        if (parsed) expect([...words]).toEqual(wordsOf(id))
        expect(CANONICAL.test(normalizeUuid(text))).toBe(true)
      }),
      { numRuns: 3000 }
    )
  })

  it("refuses near misses: a wrong character anywhere, a moved dash, a wrong length", () => {
    const alphabet = fc.constantFrom(..."0123456789abcdefABCDEFgG-xz \u0660\uff10".split(""))
    fc.assert(
      fc.property(bytes16, fc.nat(35), alphabet, (id, at, c) => {
        const canonical = uuidFromBytes(id, 0)
        const text = canonical.slice(0, at) + c + canonical.slice(at + 1)
        expect(uuidWords(text, new Int32Array(4))).toBe(DASHED_OR_PLAIN.test(text))
        const plain = canonical.replace(/-/g, "")
        const plainText = plain.slice(0, at % 32) + c + plain.slice((at % 32) + 1)
        expect(uuidWords(plainText, new Int32Array(4))).toBe(DASHED_OR_PLAIN.test(plainText))
      }),
      { numRuns: 3000 }
    )
    for (const text of [
      "",
      "0",
      "00000000-0000-0000-0000-00000000000",
      "00000000-0000-0000-0000-0000000000000",
      "000000000000-0000-0000-000000000000"
    ]) {
      expect(uuidWords(text, new Int32Array(4))).toBe(false)
    }
  })
})
