import { describe, expect, it } from "vitest"
import {
  checkpointStream,
  definitionStream,
  emittedStreamsCheckpointStream,
  emittedStreamsStream,
  orderStream,
  partitionCheckpointStream,
  partitionResultStream,
  partitionResultStreamPattern,
  partitionsStream,
  registryStream,
  resultStream
} from "../src/persisted/streamNames.js"

describe("the streams a projection owns", () => {
  it("are named after the projection under $projections-", () => {
    expect(registryStream).toBe("$projections-$all")
    expect(definitionStream("orders")).toBe("$projections-orders")
    expect(checkpointStream("orders")).toBe("$projections-orders-checkpoint")
    expect(partitionCheckpointStream("orders", "acc-1")).toBe("$projections-orders-acc-1-checkpoint")
    expect(resultStream("orders")).toBe("$projections-orders-result")
    expect(partitionsStream("orders")).toBe("$projections-orders-partitions")
    expect(emittedStreamsStream("orders")).toBe("$projections-orders-emittedstreams")
    expect(emittedStreamsCheckpointStream("orders")).toBe("$projections-orders-emittedstreams-checkpoint")
    expect(orderStream("orders")).toBe("$projections-orders-order")
  })

  it("put a partition's results in its own stream, the root partition's in the result stream", () => {
    expect(partitionResultStreamPattern("orders")).toBe("$projections-orders-{0}-result")
    expect(partitionResultStream("orders", "acc-1")).toBe("$projections-orders-acc-1-result")
    expect(partitionResultStream("orders", "")).toBe("$projections-orders-result")
  })

  it("follow the names a source definition chooses for its results", () => {
    const options = { resultStreamName: "totals", partitionResultStreamNamePattern: "totals-{0}-of-{0}" }
    expect(resultStream("orders", "totals")).toBe("totals")
    expect(partitionResultStream("orders", "", options)).toBe("totals")
    expect(partitionResultStream("orders", "x", options)).toBe("totals-x-of-x")
    expect(partitionResultStream("orders", "x", { resultStreamName: null })).toBe("$projections-orders-x-result")
  })

  it("give the root partition no partition checkpoint stream", () => {
    expect(() => partitionCheckpointStream("orders", "")).toThrow(/root partition/)
  })
})
