/**
 * Scavenging's strict metadata reading: integer tokens only, <= 0 (or $tb < 0)
 * unset, and any parse error — bad JSON, not an object, a wrong token type, overflow — is empty metadata.
 */
import { describe, expect, it } from "vitest"
import { DeletedStreamNumber } from "@vellum/storage"
import { parseScavengeMetadata } from "./model/index.js"

const parse = (text: string) => parseScavengeMetadata(Buffer.from(text, "utf8"))

describe("scavenge metadata parsing", () => {
  it("reads $maxCount, $maxAge (seconds) and $tb, skipping other keys", () => {
    expect(parse(`{"$maxCount": 3, "$maxAge": 60, "$tb": 2, "custom": {"a": [1.5, null]}}`)).toEqual({
      maxCount: 3,
      maxAge: 60,
      truncateBefore: 2
    })
  })

  it("treats $maxCount <= 0 and $maxAge <= 0 as unset, $tb only when negative", () => {
    expect(parse(`{"$maxCount": 0, "$maxAge": -5, "$tb": 0}`)).toEqual({ truncateBefore: 0 })
    expect(parse(`{"$tb": -1}`)).toEqual({})
  })

  it("maps $tb = long.MaxValue to the soft-delete number and keeps other huge values below it", () => {
    expect(parse(`{"$tb": 9223372036854775807}`)).toEqual({ truncateBefore: DeletedStreamNumber })
    expect(parse(`{"$tb": 9223372036854775806}`)).toEqual({ truncateBefore: DeletedStreamNumber - 1 })
  })

  it.each([
    ["a string number", `{"$maxCount": "5"}`],
    ["a float", `{"$maxCount": 5.0}`],
    ["an exponent", `{"$maxAge": 1e3}`],
    ["null", `{"$tb": null}`],
    ["overflow past a long", `{"$maxCount": 9223372036854775808}`],
    ["a TimeSpan overflow", `{"$maxAge": 922337203686}`],
    ["a non-boolean $tmp", `{"$maxCount": 5, "$tmp": 1}`],
    ["a non-integer $cacheControl", `{"$maxCount": 5, "$cacheControl": "1"}`],
    ["an $acl that is not an object", `{"$maxCount": 5, "$acl": "x"}`],
    ["an $acl with an unknown key", `{"$maxCount": 5, "$acl": {"$x": "a"}}`],
    ["a bad earlier duplicate", `{"$maxCount": "5", "$maxCount": 5}`],
    ["malformed JSON", `{"$maxCount": 5`],
    ["trailing text", `{"$maxCount": 5} x`],
    ["a non-object", `[{"$maxCount": 5}]`],
    ["too deep nesting", `{"$maxCount": 5, "x": ${"[".repeat(70)}${"]".repeat(70)}}`]
  ])("gives empty metadata for %s", (_name, text) => {
    expect(parse(text)).toEqual({})
  })

  it("lets a later duplicate win and accepts a well-formed $acl and $tmp", () => {
    expect(parse(`{"$maxCount": 5, "$maxCount": 7, "$tmp": true, "$acl": {"$r": "$all", "$w": ["a", "b"]}}`)).toEqual({
      maxCount: 7
    })
  })

  it("reads binary (non-UTF-8) data as empty metadata", () => {
    expect(parseScavengeMetadata(new Uint8Array([0xff, 0xfe, 0x00]))).toEqual({})
  })
})
