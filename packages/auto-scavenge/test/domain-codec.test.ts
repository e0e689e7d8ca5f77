/**
 * The persisted form of auto-scavenge's events: the reference's event types and camelCase payloads, times
 * with seven fraction digits and an offset, read back from any offset; what cannot be read is skipped.
 */
import { describe, expect, it } from "vitest"
import { AutoScavengeCodec, type AutoScavengeEvent } from "../src/index.js"
import { A, B, C } from "./domainFixtures.js"

const { decodeEvent, encodeEvent, formatTime, streamOf, ConfigurationStream, ScavengesStream } = AutoScavengeCodec

type Written = Exclude<AutoScavengeEvent, { _tag: "Initialized" }>

const t = Date.UTC(2025, 2, 28, 16, 0, 14, 123)
const text = "2025-03-28T16:00:14.1230000+00:00"
const a = `{"address":"10.0.0.1","port":2113}`
const b = `{"address":"10.0.0.2","port":2113}`
const c = `{"address":"10.0.0.3","port":2113}`

const cases: ReadonlyArray<readonly [Written, string, string]> = [
  [
    { _tag: "ConfigurationUpdated", schedule: "0 3 * * *", updatedAt: t },
    "$configuration-updated",
    `{"schedule":"0 3 * * *","updatedAt":"${text}"}`
  ],
  [
    { _tag: "ClusterScavengeStarted", clusterScavengeId: "c1", members: [A, B, C], startedAt: t },
    "$cluster-scavenge-started",
    `{"clusterScavengeId":"c1","members":[${a},${b},${c}],"startedAt":"${text}"}`
  ],
  [
    { _tag: "NodeDesignated", nodeId: B, designatedAt: t },
    "$node-designated",
    `{"nodeId":${b},"designatedAt":"${text}"}`
  ],
  [
    { _tag: "NodeScavengeStarted", nodeId: B, scavengeId: "s1", startedAt: t },
    "$node-scavenge-started",
    `{"nodeId":${b},"scavengeId":"s1","startedAt":"${text}"}`
  ],
  ...(["Success", "Stopped", "Errored"] as const).map(
    (result) =>
      [
        { _tag: "NodeScavengeCompleted", nodeId: C, completedAt: t, result },
        "$node-scavenge-completed",
        `{"nodeId":${c},"completedAt":"${text}","result":"${result}"}`
      ] as const
  ),
  [
    { _tag: "ClusterMembersChanged", added: [C], removed: [A, B] },
    "$cluster-members-changed",
    `{"added":[${c}],"removed":[${a},${b}]}`
  ],
  [{ _tag: "ClusterMembersChanged", added: [], removed: [] }, "$cluster-members-changed", `{"added":[],"removed":[]}`],
  [
    { _tag: "ClusterScavengeCompleted", clusterScavengeId: "c1", members: [A], completedAt: t },
    "$cluster-scavenge-completed",
    `{"clusterScavengeId":"c1","members":[${a}],"completedAt":"${text}"}`
  ],
  [{ _tag: "PauseRequested", requestedAt: t }, "$pause-requested", `{"requestedAt":"${text}"}`],
  [{ _tag: "Paused", pausedAt: t }, "$paused", `{"pausedAt":"${text}"}`],
  [{ _tag: "Resumed", resumedAt: t }, "$resumed", `{"resumedAt":"${text}"}`]
]

describe("encoding and decoding an event", () => {
  it.each(cases.map(([event, type, json]) => [`${event._tag} ${json}`, event, type, json] as const))(
    "%s",
    (_name, event, eventType, json) => {
      expect(encodeEvent(event)).toEqual({ eventType, data: json })
      expect(decodeEvent(eventType, json)).toEqual(event)
    }
  )

  it("configuration goes to its own stream, the rest to the scavenges stream, Initialized nowhere", () => {
    expect(streamOf(cases[0]![0])).toBe("$auto-scavenge-configuration")
    expect(ConfigurationStream).toBe("$auto-scavenge-configuration")
    expect(ScavengesStream).toBe("$auto-scavenges")
    for (const [event] of cases.slice(1)) expect(streamOf(event)).toBe("$auto-scavenges")
    expect(streamOf({ _tag: "Initialized", at: t })).toBeUndefined()
  })
})

describe("times", () => {
  it("are written with seven fraction digits and an offset", () => {
    expect(formatTime(Date.UTC(2026, 0, 2, 3, 4, 5, 6))).toBe("2026-01-02T03:04:05.0060000+00:00")
    expect(formatTime(Date.UTC(1999, 11, 31, 23, 59, 59, 999))).toBe("1999-12-31T23:59:59.9990000+00:00")
    expect(formatTime(0)).toBe("1970-01-01T00:00:00.0000000+00:00")
  })

  it("are read from any offset, as the reference writes local times", () => {
    const decoded = decodeEvent("$paused", `{"pausedAt":"2025-03-28T17:00:14.1234567+01:00"}`)
    expect(decoded).toEqual({ _tag: "Paused", pausedAt: Date.UTC(2025, 2, 28, 16, 0, 14, 123) })
    const utc = decodeEvent("$paused", `{"pausedAt":"2025-03-28T16:00:14.1234567Z"}`)
    expect(utc).toEqual({ _tag: "Paused", pausedAt: Date.UTC(2025, 2, 28, 16, 0, 14, 123) })
    const west = decodeEvent("$resumed", `{"resumedAt":"2025-03-28T11:30:00.0000000-04:30"}`)
    expect(west).toEqual({ _tag: "Resumed", resumedAt: Date.UTC(2025, 2, 28, 16, 0, 0, 0) })
  })

  it("round-trip any millisecond", () => {
    for (const millis of [1, 999, 1_700_000_000_001, Date.UTC(2030, 5, 15, 12, 0, 0, 500)]) {
      expect(decodeEvent("$paused", encodeEvent({ _tag: "Paused", pausedAt: millis }).data)).toEqual({
        _tag: "Paused",
        pausedAt: millis
      })
    }
  })
})

describe("what cannot be read is skipped", () => {
  it.each([
    ["an unknown type", "$resume-requested", `{"resumedAt":"${text}"}`],
    ["Initialized, never written", "$initialized", `{"initializedAt":"${text}"}`],
    ["a type without its $", "paused", `{"pausedAt":"${text}"}`],
    ["not JSON", "$paused", `{"pausedAt":`],
    ["JSON null", "$paused", `null`],
    ["a JSON string", "$paused", `"${text}"`],
    ["a missing time", "$paused", `{}`],
    ["a time that is not a time", "$paused", `{"pausedAt":"yesterday"}`],
    ["a time as a number", "$paused", `{"pausedAt":1743177614123}`],
    // Without an offset the time would be read in this machine's zone, so the same event would differ by machine.
    ["a time without an offset", "$paused", `{"pausedAt":"2025-03-28T17:00:14.1234567"}`],
    ["a date without a time", "$paused", `{"pausedAt":"2025-03-28"}`],
    ["a time in another format", "$paused", `{"pausedAt":"Fri, 28 Mar 2025 17:00:14 GMT"}`],
    ["PascalCase fields", "$paused", `{"PausedAt":"${text}"}`],
    ["a missing schedule", "$configuration-updated", `{"updatedAt":"${text}"}`],
    ["a schedule that is not text", "$configuration-updated", `{"schedule":5,"updatedAt":"${text}"}`],
    [
      "members not an array",
      "$cluster-scavenge-started",
      `{"clusterScavengeId":"c","members":${a},"startedAt":"${text}"}`
    ],
    [
      "a member without a port",
      "$cluster-scavenge-started",
      `{"clusterScavengeId":"c","members":[{"address":"x"}],"startedAt":"${text}"}`
    ],
    ["a port as text", "$node-designated", `{"nodeId":{"address":"10.0.0.1","port":"2113"},"designatedAt":"${text}"}`],
    ["a missing cycle id", "$cluster-scavenge-completed", `{"members":[],"completedAt":"${text}"}`],
    ["a missing scavenge id", "$node-scavenge-started", `{"nodeId":${a},"startedAt":"${text}"}`],
    [
      "result Interrupted",
      "$node-scavenge-completed",
      `{"nodeId":${a},"completedAt":"${text}","result":"Interrupted"}`
    ],
    ["result lower case", "$node-scavenge-completed", `{"nodeId":${a},"completedAt":"${text}","result":"success"}`],
    ["a missing result", "$node-scavenge-completed", `{"nodeId":${a},"completedAt":"${text}"}`],
    ["removed missing", "$cluster-members-changed", `{"added":[]}`],
    ["added holding a non-node", "$cluster-members-changed", `{"added":[1],"removed":[]}`],
    ["a missing requestedAt", "$pause-requested", `{"pausedAt":"${text}"}`]
  ])("%s", (_name, eventType, data) => {
    expect(decodeEvent(eventType, data)).toBeUndefined()
  })
})
