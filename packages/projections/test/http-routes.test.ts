/**
 * The route table as a whole: every route is passed to the leader by a follower, anonymous callers get the
 * bare 401 wherever the reference asks for a user, replies are JSON (406 for other types) but for the
 * script and the redirect, and the URL helpers escape as the reference's URL builder does.
 */
import { describe, expect, it } from "vitest"
import { projectionRoutes } from "../src/http/routes.js"
import { formatSingle } from "../src/http/dotnetSingle.js"
import { absoluteUrl, escapeUrlPath } from "../src/http/urls.js"
import { UserAuth, makeProjectionsNode } from "./httpSupport.js"

/** One request per route, with the path placeholders filled in. */
const requests = projectionRoutes.map((route) => ({
  method: route.method,
  url: route.path.split("?")[0]!.replace("{name}", "orders")
}))

describe("projectionRoutes", () => {
  it("every route is passed to the leader by a follower", () => {
    expect(projectionRoutes.length).toBe(24)
    expect(projectionRoutes.every((route) => route.forwardsToLeader === true)).toBe(true)
  })

  it.each(requests)("$method $url needs an authenticated caller (bare 401, service not called)", async (request) => {
    const node = makeProjectionsNode()
    const reply = await node.request(request.method, request.url, {
      body: "{}",
      headers: { "Content-Type": "application/json" }
    })
    expect(reply.status).toBe(401)
    expect(node.fake.calls).toEqual([])
  })

  it("JSON routes refuse other reply types (406); the script is given whatever is asked", async () => {
    const node = makeProjectionsNode()
    expect(
      (await node.request("GET", "/projection/orders", { auth: UserAuth, headers: { Accept: "text/xml" } })).status
    ).toBe(406)
    expect(
      (await node.request("GET", "/projection/orders/query", { auth: UserAuth, headers: { Accept: "text/xml" } }))
        .status
    ).toBe(200)
  })

  it("a method a path does not take is 405", async () => {
    const node = makeProjectionsNode()
    expect((await node.request("POST", "/projections/any", { auth: UserAuth })).status).toBe(405)
    expect((await node.request("GET", "/projections/restart", { auth: UserAuth })).status).toBe(405)
  })
})

describe("URLs", () => {
  it.each([
    ["/projection/orders", "/projection/orders"],
    ["/projection/$by category", "/projection/$by%20category"],
    ["/projection/p/query?config=yes", "/projection/p/query%3Fconfig=yes"],
    ["/projection/a#b", "/projection/a%23b"],
    ["/projection/a%20b", "/projection/a%20b"],
    ["/projection/100%", "/projection/100%25"],
    ['/projection/"é"', "/projection/%22%C3%A9%22"],
    ["/projection/a:b@c!$&'()*+,;=~", "/projection/a:b@c!$&'()*+,;=~"],
    ["/projection/a\\b", "/projection/a/b"],
    ["/projection/\uD800", "/projection/%EF%BF%BD"]
  ])("%s is escaped as %s", (path, escaped) => {
    expect(escapeUrlPath(path)).toBe(escaped)
  })

  it("joins the base URL and the path", () => {
    expect(absoluteUrl("http://h:1", "/projection/p")).toBe("http://h:1/projection/p")
    expect(absoluteUrl("http://h:1/prefix", "/projection/p")).toBe("http://h:1/prefix/projection/p")
  })
})

describe("a .NET float", () => {
  it.each([
    [0, "0.0"],
    [100, "100.0"],
    [-1, "-1.0"],
    [-2, "-2.0"],
    [12.5, "12.5"],
    [0.1, "0.1"],
    [100 / 3, "33.333332"],
    [2 / 3, "0.6666667"],
    [0.0001, "0.0001"],
    [0.00001, "1E-05"],
    [0.000015, "1.5E-05"],
    [99.99999, "99.99999"]
  ])("%s is written %s", (value, written) => {
    expect(formatSingle(value)).toBe(written)
  })
})
