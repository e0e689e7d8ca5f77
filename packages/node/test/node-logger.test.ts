// The node's loggers: the console in either format, the --log file always in JSON lines, both at --log-level.
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import * as Logging from "../src/logging.js"

const logAll = Effect.gen(function* () {
  yield* Effect.logDebug("debug line")
  yield* Effect.logInfo("info line")
  yield* Effect.logWarning("warning line")
})

const capture = (format: "Json" | "Plain", level: "Default" | "Debug" | "Warning" | "Verbose") => {
  const console: Array<string> = []
  const file: Array<string> = []
  Effect.runSync(
    Effect.provide(
      logAll,
      Logging.layer(
        { LogConsoleFormat: format, LogLevel: level },
        { console: (l) => console.push(l), file: (l) => file.push(l) }
      )
    )
  )
  return { console: console.map((l) => JSON.parse(l).message), file: file.map((l) => JSON.parse(l).message) }
}

describe("Logging.layer", () => {
  it("Json: console and file get the same JSON lines, from the level up", () => {
    expect(capture("Json", "Default")).toEqual({
      console: ["info line", "warning line"],
      file: ["info line", "warning line"]
    })
    expect(capture("Json", "Debug").file).toEqual(["debug line", "info line", "warning line"])
    expect(capture("Json", "Verbose").file).toEqual(["debug line", "info line", "warning line"])
    expect(capture("Json", "Warning")).toEqual({ console: ["warning line"], file: ["warning line"] })
  })

  it("Plain: the console sink is not used (Effect's text logger writes), the file still gets JSON lines", () => {
    expect(capture("Plain", "Debug")).toEqual({ console: [], file: ["debug line", "info line", "warning line"] })
  })
})
