import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  boolean,
  decodeValue,
  encodeValue,
  endpointList,
  integer,
  ipAddress,
  oneOf,
  text
} from "../src/config/valueTypes.js"
import { cliFlagOf, envNameOf, kebabCase, lookupKey, upperSnakeCase } from "../src/config/naming.js"

const ok = <A>(result: Either.Either<A, string>): A => {
  if (Either.isLeft(result)) throw new Error(`expected a value, got: ${result.left}`)
  return result.right
}
const reason = <A>(result: Either.Either<A, string>): string => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left
}

describe("option names", () => {
  it("derive the reference's flag, environment and lookup spellings", () => {
    expect(kebabCase("EnableAtomPubOverHttp")).toBe("enable-atom-pub-over-http")
    expect(upperSnakeCase("MaxMemTableSize")).toBe("MAX_MEM_TABLE_SIZE")
    expect(cliFlagOf(["AutoScavenge", "Enabled"])).toBe("--auto-scavenge:enabled")
    expect(envNameOf("VELLUM_", ["AutoScavenge", "Enabled"])).toBe("VELLUM_AUTO_SCAVENGE__ENABLED")
    expect(lookupKey(["mem-db"])).toBe(lookupKey(["MemDb"]))
    expect(lookupKey(["MEM_DB"])).toBe(lookupKey(["memdb"]))
    expect(lookupKey(["AutoScavenge", "Enabled"])).not.toBe(lookupKey(["AutoScavengeEnabled"]))
  })
})

describe("value types", () => {
  it("booleans accept true/false in any case and nothing else", () => {
    const type = boolean()
    expect(ok(decodeValue(type, "true"))).toBe(true)
    expect(ok(decodeValue(type, "False"))).toBe(false)
    expect(ok(decodeValue(type, " TRUE "))).toBe(true)
    expect(reason(decodeValue(type, "yes"))).toBe('expected true or false, got "yes"')
    expect(reason(decodeValue(type, "1"))).toContain("expected true or false")
    expect(reason(decodeValue(type, ""))).toContain("expected true or false")
    expect(encodeValue(type, true)).toBe("true")
  })

  it("integers are digits within bounds", () => {
    const type = integer({ min: 1, max: 65535 })
    expect(ok(decodeValue(type, "2113"))).toBe(2113)
    expect(ok(decodeValue(type, "+80"))).toBe(80)
    expect(reason(decodeValue(type, "abc"))).toBe('expected an integer, got "abc"')
    expect(reason(decodeValue(type, "1.5"))).toContain("expected an integer")
    expect(reason(decodeValue(type, "1e3"))).toContain("expected an integer")
    expect(reason(decodeValue(type, "0x10"))).toContain("expected an integer")
    expect(reason(decodeValue(type, "0"))).toBe("must be between 1 and 65535, got 0")
    expect(reason(decodeValue(type, "70000"))).toBe("must be between 1 and 65535, got 70000")
    expect(ok(decodeValue(integer({ min: -10, max: 10 }), "-3"))).toBe(-3)
  })

  it("enums match case-insensitively and keep the canonical spelling", () => {
    const type = oneOf(["None", "System", "All"])
    expect(ok(decodeValue(type, "all"))).toBe("All")
    expect(reason(decodeValue(type, "some"))).toBe('expected one of None, System, All, got "some"')
    expect(type.jsonSchema("RunProjections")).toEqual({
      type: "string",
      name: "RunProjections",
      enum: ["None", "System", "All"]
    })
  })

  it("text can be required to be non-empty", () => {
    expect(ok(decodeValue(text(), ""))).toBe("")
    expect(reason(decodeValue(text({ nonEmpty: true }), "  "))).toBe("must not be empty")
  })

  it("IP addresses are IPv4 or IPv6", () => {
    const type = ipAddress()
    expect(ok(decodeValue(type, "0.0.0.0"))).toBe("0.0.0.0")
    expect(ok(decodeValue(type, "::1"))).toBe("::1")
    expect(ok(decodeValue(type, "fe80::1:2"))).toBe("fe80::1:2")
    expect(reason(decodeValue(type, "256.1.1.1"))).toContain("expected an IPv4 or IPv6 address")
    expect(reason(decodeValue(type, "localhost"))).toContain("expected an IPv4 or IPv6 address")
    expect(reason(decodeValue(type, "1::2::3"))).toContain("expected an IPv4 or IPv6 address")
  })

  it("endpoint lists are comma-separated host:port items", () => {
    const type = endpointList()
    expect(ok(decodeValue(type, "a:2113, 10.0.0.2:2113,[::1]:2113"))).toEqual(["a:2113", "10.0.0.2:2113", "[::1]:2113"])
    expect(ok(decodeValue(type, ""))).toEqual([])
    expect(reason(decodeValue(type, "a:2113,b"))).toBe('expected host:port endpoints, got "b"')
    expect(reason(decodeValue(type, "a:0"))).toContain("expected host:port")
    expect(encodeValue(type, ["a:1", "b:2"])).toBe("a:1,b:2")
  })

  it("integer schemas carry the unit as x-unit, like the reference", () => {
    expect(integer({ min: 0, max: 1, unit: "ms" }).jsonSchema("X")).toEqual({ type: "integer", "x-unit": "ms" })
    expect(integer({ min: 0, max: 1 }).jsonSchema("X")).toEqual({ type: "integer" })
  })
})
