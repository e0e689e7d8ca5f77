import { describe, expect, it } from "vitest"
import { subscriptionPosition, type Epoch } from "../src/index.js"

const e = (number: number, position: number, id = `e${number}@${position}`): Epoch => ({ number, position, id })

describe("where a subscribing follower starts", () => {
  it("an empty follower without epochs starts at 0; a non-empty one without epochs cannot be placed", () => {
    const leader = { epochs: [e(0, 0)], writer: 500 }
    expect(subscriptionPosition({ epochs: [], writer: 0 }, leader)).toEqual({ _tag: "From", position: 0 })
    expect(subscriptionPosition({ epochs: [], writer: 10 }, leader)._tag).toBe("Unplaceable")
  })

  it("with the same epochs, from the follower's own position (capped at the leader's)", () => {
    const leader = { epochs: [e(0, 0), e(1, 300)], writer: 800 }
    expect(subscriptionPosition({ epochs: [e(1, 300), e(0, 0)], writer: 650 }, leader)).toEqual({
      _tag: "From",
      position: 650
    })
    expect(subscriptionPosition({ epochs: [e(1, 300), e(0, 0)], writer: 900 }, leader)).toEqual({
      _tag: "From",
      position: 800
    })
  })

  it("a common epoch that is not the leader's last: up to the leader's next epoch", () => {
    // The follower followed leader 1 longer than the leader (who then started epoch 2 at 500) kept.
    const leader = { epochs: [e(0, 0), e(1, 300), e(2, 500)], writer: 900 }
    expect(subscriptionPosition({ epochs: [e(1, 300), e(0, 0)], writer: 700 }, leader)).toEqual({
      _tag: "From",
      position: 500
    })
  })

  it("a follower epoch the leader lacks: everything from it goes", () => {
    // The follower led epoch 2 at 600 on its own; the leader has epoch 2 elsewhere (a different id).
    const leader = { epochs: [e(0, 0), e(1, 300), e(2, 650, "other")], writer: 900 }
    expect(subscriptionPosition({ epochs: [e(2, 600), e(1, 300), e(0, 0)], writer: 800 }, leader)).toEqual({
      _tag: "From",
      position: 600
    })
  })

  it("no common epoch: the follower replicates everything again", () => {
    const leader = { epochs: [e(0, 0, "a")], writer: 900 }
    expect(subscriptionPosition({ epochs: [e(0, 0, "b")], writer: 400 }, leader)).toEqual({
      _tag: "From",
      position: 0
    })
  })
})
