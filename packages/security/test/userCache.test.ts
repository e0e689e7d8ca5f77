import { describe, expect, it } from "vitest"
import { UserCache, sameDigest, type LoadedUser } from "../src/UserCache.js"

const missing: LoadedUser = { _tag: "Missing", hardDeleted: false }

describe("UserCache: verified-password digests", () => {
  it("matches only the password that was verified, under the cache's own key", () => {
    const cache = new UserCache(10, new Uint8Array(32).fill(7))
    const entry = cache.store("admin", missing, cache.begin())
    expect(cache.matchesVerified(entry, "changeit")).toBe(false)
    entry.verified = cache.digest("changeit")
    expect(cache.matchesVerified(entry, "changeit")).toBe(true)
    expect(cache.matchesVerified(entry, "changeiT")).toBe(false)
    expect(cache.matchesVerified(entry, "")).toBe(false)
    // Another process (another key) digests the same password differently.
    const other = new UserCache(10, new Uint8Array(32).fill(8))
    expect(other.digest("changeit")).not.toBe(cache.digest("changeit"))
  })

  it("compares digests over their whole length", () => {
    const digest = new UserCache(1, new Uint8Array(32)).digest("p")
    expect(sameDigest(digest, digest.slice())).toBe(true)
    for (const at of [0, 20, digest.length - 1]) {
      const changed = digest.slice(0, at) + (digest[at] === "A" ? "B" : "A") + digest.slice(at + 1)
      expect(sameDigest(digest, changed)).toBe(false)
    }
    expect(sameDigest(digest, digest.slice(0, -1))).toBe(false)
    expect(sameDigest("", "")).toBe(true)
  })
})
