/**
 * Credential header parsing: the Basic scheme is case-sensitive, other schemes are
 * anonymous, the decoded text must contain ':' (the password may contain more), malformed Basic values are a
 * MalformedCredentials with a reason; trusted-auth headers `login[; group, …]`.
 */
import { describe, it, assert } from "@effect/vitest"
import { Either } from "effect"
import { parseBasicAuthorization, parseTrustedAuth, trustedAuthHeader } from "../src/index.js"

const basic = (text: string) => "Basic " + Buffer.from(text, "utf8").toString("base64")

const parsed = (header: string | undefined) => {
  const result = parseBasicAuthorization(header)
  return Either.isLeft(result) ? `malformed: ${result.left.message}` : result.right
}

describe("Basic credentials", () => {
  const cases: ReadonlyArray<readonly [string, string | undefined, unknown]> = [
    ["no header", undefined, undefined],
    ["empty header", "", undefined],
    ["admin:changeit", basic("admin:changeit"), { login: "admin", password: "changeit" }],
    ["a password with colons", basic("ops:a:b::c"), { login: "ops", password: "a:b::c" }],
    ["an empty password", basic("ops:"), { login: "ops", password: "" }],
    ["an empty login", basic(":pw"), { login: "", password: "pw" }],
    ["UTF-8 text", basic("jürgen:pässwörd"), { login: "jürgen", password: "pässwörd" }],
    [
      "extra spaces around the token",
      "  Basic    " + Buffer.from("a:b").toString("base64") + "  ",
      { login: "a", password: "b" }
    ],
    ["a tab after the scheme", "Basic\t" + Buffer.from("a:b").toString("base64"), { login: "a", password: "b" }],
    ["scheme in lower case is not Basic", "basic " + Buffer.from("a:b").toString("base64"), undefined],
    ["scheme in upper case is not Basic", "BASIC " + Buffer.from("a:b").toString("base64"), undefined],
    ["Bearer is another scheme", "Bearer abc.def.ghi", undefined],
    ["a bare token", "YWRtaW46Y2hhbmdlaXQ=", undefined],
    ["Basic alone", "Basic", "malformed: The Basic credentials are empty"],
    ["Basic and spaces", "Basic   ", "malformed: The Basic credentials are empty"],
    ["not base64", "Basic not*base64", "malformed: The Basic credentials are not valid base64"],
    ["unpadded base64", "Basic YWRtaW46Y2hhbmdlaXQ", "malformed: The Basic credentials are not valid base64"],
    [
      "url-safe alphabet",
      "Basic " + Buffer.from("a:b>>?").toString("base64url"),
      "malformed: The Basic credentials are not valid base64"
    ],
    ["two tokens", "Basic YTpi YTpi", "malformed: The Basic credentials are not valid base64"],
    [
      "no colon",
      basic("adminchangeit"),
      "malformed: The Basic credentials have no ':' between the login and the password"
    ],
    [
      "invalid UTF-8",
      "Basic " + Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString("base64"),
      "malformed: The Basic credentials are not valid UTF-8"
    ]
  ]
  for (const [name, header, expected] of cases) {
    it(name, () => {
      assert.deepStrictEqual(parsed(header), expected)
    })
  }
})

describe("trusted auth header", () => {
  const trusted = (value: string) => {
    const result = parseTrustedAuth(value)
    return Either.isLeft(result) ? `malformed: ${result.left.message}` : result.right
  }

  it("login only, and login with groups (trimmed, empty ones dropped)", () => {
    assert.deepStrictEqual(trusted("alice"), { login: "alice", groups: [] })
    assert.deepStrictEqual(trusted(" alice ; $admins,  ops , ,x"), { login: "alice", groups: ["$admins", "ops", "x"] })
    assert.deepStrictEqual(trusted("alice;"), { login: "alice", groups: [] })
    assert.deepStrictEqual(trusted(" ; $admins"), "malformed: The trusted auth header names no login")
  })

  it("Kurrent-TrustedAuth wins over the legacy ES-TrustedAuth", () => {
    assert.strictEqual(trustedAuthHeader({ "kurrent-trustedauth": "a", "es-trustedauth": "b" }), "a")
    assert.strictEqual(trustedAuthHeader({ "es-trustedauth": "b" }), "b")
    assert.isUndefined(trustedAuthHeader({ authorization: "Basic x" }))
  })
})
