/** Base URLs from the Host header: the same answers with the memo of Host values as without it. */
import { describe, expect, it } from "vitest"
import { buildBaseUrl, rawRequestUrl } from "../src/baseUrl.js"

describe("buildBaseUrl / rawRequestUrl", () => {
  it("build scheme://host[:port] from the Host header, default ports omitted, hostile characters dropped", () => {
    expect(buildBaseUrl({ host: "127.0.0.1:2113" }, "http", {})).toBe("http://127.0.0.1:2113")
    expect(buildBaseUrl({ host: "example.com:80" }, "http", {})).toBe("http://example.com")
    expect(buildBaseUrl({ host: "example.com:443" }, "https", {})).toBe("https://example.com")
    expect(buildBaseUrl({ host: "[::1]:2113" }, "http", {})).toBe("http://[::1]:2113")
    expect(buildBaseUrl({ host: 'ev<il>.com"' }, "http", {})).toBe("http://evil.com")
    expect(buildBaseUrl({}, "http", {})).toBe("http://localhost")
    expect(rawRequestUrl({ host: "h:2113" }, "http", "/streams/s", "a=1")).toBe("http://h:2113/streams/s?a=1")
  })

  it("answers the same for the same Host under other schemes, advertise settings and forwarded headers", () => {
    expect(buildBaseUrl({ host: "h:2113" }, "http", {})).toBe("http://h:2113")
    expect(buildBaseUrl({ host: "h:2113" }, "https", {})).toBe("https://h:2113")
    expect(buildBaseUrl({ host: "h:2113" }, "http", { advertiseHost: "public.example", advertisePort: 443 })).toBe(
      "http://public.example:443"
    )
    expect(
      buildBaseUrl({ host: "h:2113", "x-forwarded-proto": "https", "x-forwarded-host": "proxy.example" }, "http", {})
    ).toBe("https://proxy.example:2113")
    expect(buildBaseUrl({ host: "h:2113", "x-forwarded-prefix": "/es/" }, "http", {})).toBe("http://h:2113/es")
    expect(buildBaseUrl({ host: "h:2113" }, "http", {})).toBe("http://h:2113")
  })

  it("stays right past the memo's bound (hundreds of distinct Host values)", () => {
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 600; i++)
        expect(buildBaseUrl({ host: `node-${i}:${1000 + i}` }, "http", {})).toBe(`http://node-${i}:${1000 + i}`)
    }
  })
})
