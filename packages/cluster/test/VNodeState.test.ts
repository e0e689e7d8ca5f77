import { describe, expect, it } from "vitest"
import { VNodeStates, vNodeStateNumber, vNodeStateOf } from "../src/index.js"

describe("node states", () => {
  it("carry the reference's numbers on the wire", () => {
    expect(vNodeStateNumber("Initializing")).toBe(0)
    expect(vNodeStateNumber("Unknown")).toBe(2)
    expect(vNodeStateNumber("Follower")).toBe(6)
    expect(vNodeStateNumber("Leader")).toBe(8)
    expect(vNodeStateNumber("ReadOnlyReplica")).toBe(14)
    expect(vNodeStateNumber("ResigningLeader")).toBe(15)
    expect(VNodeStates.map((s) => vNodeStateOf(vNodeStateNumber(s)))).toEqual([...VNodeStates])
    expect(vNodeStateOf(16)).toBeUndefined()
  })
})
