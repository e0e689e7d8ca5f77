import { describe, expect, it } from "vitest"
import { Coverage, CoverageMarks, markNames } from "../src/coverage.js"

describe("coverage marks", () => {
  it("a mark the CI batch must reach and that never ran is reported missing, until it runs", () => {
    const coverage = new Coverage()
    for (const batch of ["single", "cluster"] as const) {
      const required = markNames().filter((m) => CoverageMarks[m].reachedByCi && CoverageMarks[m].batch === batch)
      expect(required.length).toBeGreaterThan(0)
      expect(coverage.missedByCi(batch)).toEqual(required)
      for (const m of required) coverage.hit(m)
      expect(coverage.missedByCi(batch)).toEqual([])
      expect(coverage.report(batch)).not.toContain("NEVER RAN")
    }
  })

  it("adds the counts of several runs and reports each mark with its count", () => {
    const a = new Coverage()
    const b = new Coverage()
    a.hit("read.forward", 2)
    b.hit("read.forward")
    b.hit("crash.strict")
    a.add(b)
    expect(a.count("read.forward")).toBe(3)
    expect(a.count("crash.strict")).toBe(1)
    expect(a.report()).toMatch(/^\s+3 {2}read\.forward\s/m)
    expect(a.report()).toMatch(/0 {2}read\.backward .*NEVER RAN/)
  })
})
