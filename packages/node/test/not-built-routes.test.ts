/**
 * The table of route families Vellum has not built (answered 501) must name none that the node serves:
 * a row left behind after its family is built would otherwise be harmless, but a row covering a built
 * route would mean the table is out of date.
 */
import { describe, expect, it } from "vitest"
import { makeRouter, notBuiltRoutes, parseTarget } from "@vellum/http"
import { nodeRouteList } from "../src/NodeApp.js"
import { load } from "./configSupport.js"

describe("route families not built yet", () => {
  it("no row names a path the node routes", () => {
    const router = makeRouter(nodeRouteList(load({ argv: ["--mem-db"] })))
    for (const row of notBuiltRoutes) {
      const target = parseTarget(row.path)
      expect(target._tag, row.path).toBe("Target")
      if (target._tag === "Target") expect(router.match(target.segments)._tag, row.path).toBe("NotFound")
    }
  })
})
