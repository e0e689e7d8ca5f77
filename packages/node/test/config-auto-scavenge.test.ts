// AutoScavengeEnabled: on by default; off when set to false; off with --mem-db unless set, and refused when
// set to true there. Every spelling of the option counts (both command-line flags, both environment names,
// YAML), and the routes are served only while it is on.
import { describe, expect, it } from "vitest"
import { makeRouter, parseTarget } from "@vellum/http"
import { autoScavengeEnablement, describeAutoScavengeEnablement, formatConfigError } from "../src/config/index.js"
import { nodeRouteList } from "../src/NodeApp.js"
import { fail, load, type Inputs } from "./configSupport.js"
import { admin, text, withNode } from "./nodeAppSupport.js"

const YAML = "vellum.conf"

/** Every way to set the option to `value`. */
const spellings = (value: boolean): ReadonlyArray<readonly [string, Inputs]> => [
  ["--auto-scavenge-enabled", { argv: [`--auto-scavenge-enabled=${value}`] }],
  ["--auto-scavenge:enabled", { argv: [`--auto-scavenge:enabled=${value}`] }],
  ["VELLUM_AUTO_SCAVENGE_ENABLED", { env: { VELLUM_AUTO_SCAVENGE_ENABLED: String(value) } }],
  ["VELLUM_AUTO_SCAVENGE__ENABLED", { env: { VELLUM_AUTO_SCAVENGE__ENABLED: String(value) } }],
  [
    "YAML AutoScavenge: Enabled",
    { argv: ["--config", YAML], files: { [YAML]: `AutoScavenge:\n  Enabled: ${value}\n` } }
  ]
]

const withMemDb = (inputs: Inputs): Inputs => ({ ...inputs, argv: [...(inputs.argv ?? []), "--mem-db"] })

describe("enablement", () => {
  it("is on by default", () => {
    const loaded = load({})
    expect(loaded.config.AutoScavengeEnabled).toBe(true)
    expect(autoScavengeEnablement(loaded.config)).toEqual({ enabled: true })
    expect(describeAutoScavengeEnablement(autoScavengeEnablement(loaded.config))).toBe("Auto-scavenge enabled")
  })

  it("the bare flag turns it on, like any boolean", () => {
    expect(load({ argv: ["--auto-scavenge-enabled"] }).config.AutoScavengeEnabled).toBe(true)
  })

  it.each(spellings(false))("%s=false turns it off, with how to turn it on", (_name, inputs) => {
    const loaded = load(inputs)
    expect(loaded.warnings).toEqual([])
    const enablement = autoScavengeEnablement(loaded.config)
    expect(enablement).toEqual({
      enabled: false,
      reason: "to enable it, leave AutoScavenge:Enabled unset or set it to true"
    })
    expect(describeAutoScavengeEnablement(enablement)).toMatch(/^Auto-scavenge disabled: /)
  })

  it.each(spellings(true))("%s=true keeps it on, with no warning", (_name, inputs) => {
    const loaded = load(inputs)
    expect(loaded.warnings).toEqual([])
    expect(autoScavengeEnablement(loaded.config)).toEqual({ enabled: true })
  })

  it("the flat spelling wins over the nested one by precedence, not by name", () => {
    const loaded = load({ argv: ["--auto-scavenge-enabled=false"], env: { VELLUM_AUTO_SCAVENGE__ENABLED: "true" } })
    expect(loaded.config.AutoScavengeEnabled).toBe(false)
    expect(loaded.sources.AutoScavengeEnabled).toEqual({ _tag: "Cli", flag: "--auto-scavenge-enabled" })
  })
})

describe("with --mem-db", () => {
  it("is off when the option is not set", () => {
    expect(autoScavengeEnablement(load({ argv: ["--mem-db"] }).config)).toEqual({
      enabled: false,
      reason: "AutoScavenge is not compatible with mem-db"
    })
  })

  it.each(spellings(false))("is off when %s=false", (_name, inputs) => {
    expect(autoScavengeEnablement(load(withMemDb(inputs)).config).enabled).toBe(false)
  })

  it.each(spellings(true))("refuses to start when %s=true, saying how to fix it", (_name, inputs) => {
    const error = fail(withMemDb(inputs))
    expect(error.problems).toHaveLength(1)
    expect(error.problems[0]).toMatchObject({ option: "AutoScavengeEnabled" })
    expect(formatConfigError(error)).toContain(
      "AutoScavenge is not compatible with mem-db: leave AutoScavenge:Enabled unset (or false) with --mem-db, or run on disk without --mem-db"
    )
  })
})

describe("the routes", () => {
  const routes = (inputs: Inputs) => {
    const router = makeRouter(nodeRouteList(load(inputs)))
    const target = parseTarget("/auto-scavenge/status")
    if (target._tag !== "Target") throw new Error("bad target")
    return router.match(target.segments)._tag
  }

  it("are routed while it is on, and not when it is off", () => {
    expect(routes({})).not.toBe("NotFound")
    expect(routes({ argv: ["--auto-scavenge-enabled=false"] })).toBe("NotFound")
    expect(routes({ argv: ["--mem-db"] })).toBe("NotFound")
  })

  it("answer on a node where it is on", () =>
    withNode(
      async (call) => {
        const reply = await call("GET", "/auto-scavenge/enabled", admin)
        expect([reply.status, text(reply)]).toEqual([200, '{"enabled":true}'])
      },
      ["--password-hash-cost", "4"]
    ))

  it("answer 404 on a node where it is off", () =>
    withNode(async (call) => {
      for (const [method, path] of [
        ["GET", "/auto-scavenge/enabled"],
        ["GET", "/auto-scavenge/status"],
        ["POST", "/auto-scavenge/pause"]
      ] as const) {
        const reply = await call(method, path, admin)
        expect([path, reply.status, text(reply)]).toEqual([path, 404, ""])
      }
    }))
})
