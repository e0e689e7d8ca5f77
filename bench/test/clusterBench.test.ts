import { describe, expect, it } from "vitest"
import { median } from "../src/benchSupport.js"
import { roundsBetween } from "../src/clusterAppends.js"
import { paddedAppendBody } from "../src/clusterCatchUp.js"
import { memberArgs, ownRecord } from "../src/clusterProcesses.js"
import { parseSimulatorSpeed } from "../src/clusterSimulator.js"

const record = (internalTcpPort: number, state: string, writer: number) => ({
  internalTcpPort,
  state,
  writerCheckpoint: writer,
  chaserCheckpoint: writer - 1
})

describe("bench:cluster helpers", () => {
  it("takes a member's own record from /gossip by its internal port", () => {
    const gossip = { members: [record(1112, "Leader", 500), record(1122, "Follower", 400)] }
    expect(ownRecord(gossip, 1122)).toEqual({ state: "Follower", writerCheckpoint: 400, chaserCheckpoint: 399 })
    expect(ownRecord(gossip, 1132)).toBeUndefined()
    expect(ownRecord({ members: [{ internalTcpPort: 1112, state: "Leader" }] }, 1112)).toBeUndefined()
    expect(ownRecord(undefined, 1112)).toBeUndefined()
  })

  it("seeds each member with the other two and never puts the secret on the command line", () => {
    const specs = [1, 2, 3].map((n) => ({
      name: `node${n}`,
      httpPort: 2100 + n,
      internalPort: 1100 + n,
      db: `/d/${n}`
    }))
    const args = memberArgs(specs[1]!, specs)
    expect(args[args.indexOf("--gossip-seed") + 1]).toBe("127.0.0.1:1101,127.0.0.1:1103")
    expect(args[args.indexOf("--replication-port") + 1]).toBe("1102")
    expect(args[args.indexOf("--cluster-size") + 1]).toBe("3")
    expect(args.join(" ")).not.toMatch(/secret/i)
  })

  it("turns writer counters into rounds per second, appends per round and round times", () => {
    const before = { commands: 100, rounds: 10, flushSeconds: 0.5 }
    const after = { commands: 1100, rounds: 110, flushSeconds: 1.0 }
    expect(roundsBetween(before, after, 4)).toEqual({ perSec: 25, appendsPerRound: 10, roundMs: 40, flushMs: 5 })
    expect(roundsBetween(before, before, 4)).toBeUndefined()
  })

  it("builds fill appends of valid JSON with distinct ids and data of the asked size", () => {
    const body = JSON.parse(paddedAppendBody("abcd1234", 7, 3, 500)) as Array<{ eventId: string; data: unknown }>
    expect(body).toHaveLength(3)
    expect(new Set(body.map((e) => e.eventId)).size).toBe(3)
    for (const event of body) expect(JSON.stringify(event.data)).toHaveLength(500)
  })

  it("reads the simulator's speed from the line that ends its batch", () => {
    const output = "coverage ...\nsimulated 62.9 s in 5.6 s of wall time (11.2x)\n10 passed, 0 failed"
    const speed = parseSimulatorSpeed(output)!
    expect(speed.simulatedSecs).toBe(62.9)
    expect(speed.wallSecs).toBe(5.6)
    expect(speed.ratio).toBeCloseTo(11.23, 2)
    expect(parseSimulatorSpeed("10 passed")).toBeUndefined()
  })

  it("takes the median of odd and even counts", () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(median([])).toBeNaN()
  })
})
