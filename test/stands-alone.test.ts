// The repository stands alone: no tracked source or doc points at material a clone does not have (the
// reference notes that sat beside the repository while it was written, cited as a relative path to that
// folder or by section sign). Rules are stated in our own words, in docs/, or cite the reference server's
// source as `EventStore/EventStore: src/...`.
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

// Built from parts so that this file does not match itself.
const SHARED = ["..", "/shared"].join("")
const outside: ReadonlyArray<RegExp> = [
  new RegExp(SHARED.replace(/\./g, "\\.")),
  new RegExp(["shared", "/spec"].join("")),
  new RegExp(["spec", " \u00a7"].join("")),
  new RegExp(["spec", "/[a-z-]+\\.md"].join("")),
  // The notes' own file names, and a bare section sign (a section of those notes; RFC sections are public).
  new RegExp(["(storage-and-cluster|simulation-and-style|users-and-operations)", "\\.md"].join("")),
  new RegExp(["(?<!RFC \\d+ )", "\u00a7"].join(""))
]

const tracked = (): ReadonlyArray<string> =>
  execFileSync("git", ["ls-files", "-z"], { encoding: "utf8" })
    .split("\0")
    .filter((path) => /\.(ts|js|mjs|cjs|md|json|ya?ml)$/.test(path))

/** `path:line: text` for every line that points outside the repository. */
const pointersOutside = (path: string, text: string): Array<string> =>
  text
    .split("\n")
    .flatMap((line, i) => (outside.some((re) => re.test(line)) ? [`${path}:${i + 1}: ${line.trim()}`] : []))

describe("the repository stands alone", () => {
  it("finds a pointer outside the repository when there is one", () => {
    expect(pointersOutside("a.ts", `// see ${SHARED}/ARCHITECTURE.md`)).toHaveLength(1)
    expect(pointersOutside("a.ts", ["// the rule of spec", "\u00a73.2"].join(" "))).toHaveLength(1)
    expect(pointersOutside("a.md", ["(spec", "/http.md \u00a77.4)"].join(""))).toHaveLength(1)
    expect(pointersOutside("a.ts", ["// as", "\u00a72.3 says"].join(" "))).toHaveLength(1)
    expect(pointersOutside("a.ts", "// EventStore/EventStore: src/EventStore.Core/Index/PTable.cs")).toEqual([])
    expect(pointersOutside("a.ts", ["// RFC 9110", "\u00a75.3"].join(" "))).toEqual([])
  })

  it("no tracked source or doc cites the reference notes or their sections", () => {
    const offenders = tracked().flatMap((path) => pointersOutside(path, readFileSync(path, "utf8")))
    expect(offenders).toEqual([])
  })
})
