// The subscriptions workload's rules (subscriptions/subsModel.ts) on hand-made histories: each rule finds
// the history that breaks it, and lets through the at-least-once cases the service documents.
import { describe, expect, it } from "vitest"
import { checkEnd, GroupModel, type Action, type Copy } from "../src/subscriptions/subsModel.js"

const copy = (position: number, action: Action | undefined, retryCount = 0, maxRetryCount = 2, life = 0): Copy => ({
  life,
  position,
  retryCount,
  action,
  maxRetryCount
})

const source = [
  { id: "a", position: 0 },
  { id: "b", position: 1 }
]

describe("the subscriptions model", () => {
  it("a copy past maxRetryCount breaks the retry rule", () => {
    const model = new GroupModel("s::g", 2)
    expect(model.delivered("a", copy(0, undefined, 2), undefined)).toBeUndefined()
    expect(model.delivered("a", copy(0, undefined, 3), undefined)).toMatch(/past maxRetryCount 2/)
  })

  it("a copy at or before the durable checkpoint is refused, unless a replay may have handed it out", () => {
    const model = new GroupModel("s::g", 2)
    model.beginLife(5, 2)
    expect(model.delivered("a", copy(6, "park"), 5)).toBeUndefined()
    expect(model.delivered("b", copy(5, undefined), 5)).toMatch(/durable checkpoint 5 covers it/)
    model.replayAsked = true
    // "a" may have been parked: a replay hands it out at its old position.
    expect(model.delivered("a", copy(3, "ack"), 5)).toBeUndefined()
    // "c" never was.
    expect(model.delivered("c", copy(4, undefined), 5)).toMatch(/covers it/)
  })

  it("every source event was handed out and its last copy finished it (or left it parked)", () => {
    const model = new GroupModel("s::g", 2)
    model.delivered("a", copy(0, "ack"), undefined)
    expect(checkEnd(model, source, [])).toEqual([expect.stringMatching(/event b at 1 was never handed out/)])
    model.delivered("b", copy(1, "skip"), undefined)
    expect(checkEnd(model, source, [])).toEqual([])
    // Parked, then handed out again (a replay, or from the source after a crash) and left unanswered: lost,
    // unless its link is still in the parked stream.
    model.delivered("a", copy(0, "park"), undefined)
    model.delivered("a", copy(0, undefined, 0, 2, 1), undefined)
    expect(checkEnd(model, source, [])).toEqual([expect.stringMatching(/event a at 0 is lost/)])
    model.delivered("a", copy(0, "retry", 0, 2, 1), undefined)
    expect(checkEnd(model, source, [])).toEqual([expect.stringMatching(/event a at 0 is lost/)])
    expect(checkEnd(model, source, ["a"])).toEqual([])
  })

  it("a copy parked last is in the parked stream, asked for or by running out of retries", () => {
    const model = new GroupModel("s::g", 1)
    model.delivered("a", copy(0, "park"), undefined)
    model.delivered("b", copy(1, "abandon", 1, 1), undefined)
    expect(checkEnd(model, source, ["a"])).toEqual([expect.stringMatching(/event b was parked .* not in the parked/)])
    expect(checkEnd(model, source, ["a", "b"])).toEqual([])
  })

  it("the parked stream links only to events the model may have parked, at most as often", () => {
    const model = new GroupModel("s::g", 1)
    model.delivered("a", copy(0, "ack"), undefined)
    model.delivered("b", copy(1, "park"), undefined)
    expect(checkEnd(model, source, ["a", "b"])).toEqual([expect.stringMatching(/links to a 1 times, but at most 0/)])
    expect(checkEnd(model, source, ["b", "b"])).toEqual([expect.stringMatching(/links to b 2 times, but at most 1/)])
    // Parked, handed out again after a crash (the checkpoint did not cover it), parked again: two links.
    model.delivered("b", copy(1, "park", 0, 1, 1), undefined)
    expect(checkEnd(model, source, ["b", "b"])).toEqual([])
  })

  it("a copy of an event outside the source is reported", () => {
    const model = new GroupModel("s::g", 1)
    model.delivered("a", copy(0, "ack"), undefined)
    model.delivered("b", copy(1, "ack"), undefined)
    model.delivered("x", copy(7, "ack"), undefined)
    expect(checkEnd(model, source, [])).toEqual([expect.stringMatching(/event x was handed out but is not in/)])
  })
})
