import { describe, expect, it } from "vitest"
import {
  checkpointStreamMetadata,
  checkpointTagText,
  compareCheckpointTags,
  decodeCheckpointState,
  decodeCheckpointTag,
  encodeCheckpointState,
  encodeCheckpointTag,
  type CheckpointTag
} from "../src/persisted/checkpointTag.js"

const version = { projectionId: 1, epoch: -1, version: 0 }
const position = (commit: number, prepare: number, phase = 0): CheckpointTag => ({
  kind: "position",
  phase,
  commit,
  prepare
})
const streams = (...entries: Array<[string, number]>): CheckpointTag => ({
  kind: "streams",
  phase: 0,
  streams: entries
})

describe("a position's JSON", () => {
  it("is written as the reference writes it for every kind of source", () => {
    expect(encodeCheckpointTag(position(0, -1), version)).toBe('{"$v":"1:-1:0:4","$c":0,"$p":-1}')
    expect(encodeCheckpointTag(streams(["$ce-account", 3]), { projectionId: 7, epoch: 2, version: 5 })).toBe(
      '{"$v":"7:2:5:4","$s":{"$ce-account":3}}'
    )
    expect(encodeCheckpointTag(streams(["a", 1], ["b", -1]), version)).toBe('{"$v":"1:-1:0:4","$s":{"a":1,"b":-1}}')
    expect(
      encodeCheckpointTag(
        {
          kind: "eventTypes",
          phase: 0,
          commit: 100,
          prepare: 50,
          types: [
            ["type1", 2],
            ["type2", 0]
          ]
        },
        version
      )
    ).toBe('{"$v":"1:-1:0:4","$c":100,"$p":50,"$s":{"type1":2,"type2":0}}')
    expect(encodeCheckpointTag({ kind: "phase", phase: 1, completed: true }, version)).toBe(
      '{"$v":"1:-1:0:4","$ph":1,"$cp":true}'
    )
    expect(encodeCheckpointTag({ kind: "preparePosition", phase: 0, prepare: 12 })).toBe('{"$p":12}')
  })

  it("leaves the version stamp out for no registered projection and adds extra members last", () => {
    expect(encodeCheckpointTag(position(5, 4), { projectionId: 0, epoch: 0, version: 0 })).toBe('{"$c":5,"$p":4}')
    expect(encodeCheckpointTag(position(5, 4, 1), version, [["$$a", '"b"']])).toBe(
      '{"$v":"1:-1:0:4","$ph":1,"$c":5,"$p":4,"$$a":"b"}'
    )
  })

  it("reads back every kind with its stamp and extra members", () => {
    const tags: ReadonlyArray<CheckpointTag> = [
      position(0, -1),
      position(7, 7, 1),
      streams(["s", 3]),
      streams(["a", 1], ["b", 2]),
      { kind: "eventTypes", phase: 0, commit: 100, prepare: 50, types: [["a", 1]] },
      { kind: "phase", phase: 1, completed: true },
      { kind: "phase", phase: 0, completed: false },
      { kind: "preparePosition", phase: 0, prepare: 0 }
    ]
    for (const tag of tags) {
      const decoded = decodeCheckpointTag(
        encodeCheckpointTag(tag, { projectionId: 3, epoch: 2, version: 9 }, [["x", "1"]])
      )
      expect(decoded).toEqual({ tag, projectionId: 3, epoch: 2, version: 9, systemVersion: 4, extra: [["x", 1]] })
    }
  })

  it("reads the reference's indented form and its older member names and stamps", () => {
    const indented = '{\n  "$v": "1:-1:3:3",\n  "$c": 269728,\n  "$p": 269728\n}'
    expect(decodeCheckpointTag(indented)).toMatchObject({
      tag: position(269728, 269728),
      projectionId: 1,
      epoch: -1,
      version: 3,
      systemVersion: 3
    })
    expect(decodeCheckpointTag('{"v":"0:5","commitPosition":1,"preparePosition":0}')).toMatchObject({
      tag: position(1, 0),
      projectionId: undefined,
      version: 5
    })
    expect(decodeCheckpointTag('{"$v":2,"streams":{"s":0}}')).toMatchObject({ tag: streams(["s", 0]), version: 2 })
    expect(decodeCheckpointTag("{}")).toMatchObject({ tag: { kind: "phase", phase: 0, completed: false } })
  })

  it("rejects what is no position", () => {
    for (const text of [
      "",
      "x",
      "[]",
      '{"$c":"1","$p":0}',
      '{"$s":{"":1}}',
      '{"$s":{"a":-2}}',
      '{"$v":"a:b:c"}',
      '{"$c":1}',
      '{"$m":"bs"}'
    ])
      expect(decodeCheckpointTag(text), text).toBeUndefined()
  })
})

describe("a position's text", () => {
  it("is what statistics show", () => {
    expect(checkpointTagText(position(0, -1))).toBe("C:0/P:-1")
    expect(checkpointTagText(streams(["$ce-account", 3]))).toBe("$ce-account: 3")
    expect(checkpointTagText(streams(["a", 1], ["b", 3]))).toBe("a: 1; b: 3; ")
    expect(
      checkpointTagText({
        kind: "eventTypes",
        phase: 0,
        commit: 9,
        prepare: 8,
        types: [
          ["t1", 1],
          ["t2", 2]
        ]
      })
    ).toBe("C:9/P:8; t1: 1; t2: 2; ")
    expect(checkpointTagText({ kind: "phase", phase: 1, completed: true })).toBe("Phase: 1 (completed)")
    expect(checkpointTagText({ kind: "phase", phase: 0, completed: false })).toBe("Phase: 0")
    expect(checkpointTagText(position(4, 3, 1))).toBe("(1) C:4/P:3")
    expect(checkpointTagText({ kind: "preparePosition", phase: 0, prepare: 12 })).toBe("12")
  })
})

describe("ordering positions", () => {
  it("puts a later phase after any position of an earlier one", () => {
    expect(compareCheckpointTags(position(100, 100), { kind: "phase", phase: 1, completed: false })).toBe(-1)
    expect(
      compareCheckpointTags({ kind: "phase", phase: 1, completed: true }, { kind: "phase", phase: 1, completed: false })
    ).toBe(1)
  })

  it("orders $all positions by commit then prepare, event-type positions with them", () => {
    expect(compareCheckpointTags(position(10, 5), position(10, 6))).toBe(-1)
    expect(compareCheckpointTags(position(11, 0), position(10, 6))).toBe(1)
    expect(compareCheckpointTags(position(10, 6), position(10, 6))).toBe(0)
    expect(
      compareCheckpointTags(
        { kind: "eventTypes", phase: 0, commit: 20, prepare: 20, types: [["a", 0]] },
        position(10, 6)
      )
    ).toBe(1)
  })

  it("orders stream positions stream by stream and refuses what cannot be ordered", () => {
    expect(compareCheckpointTags(streams(["s", 2]), streams(["s", 3]))).toBe(-1)
    expect(compareCheckpointTags(streams(["s", 2]), streams(["t", 3]))).toBeUndefined()
    expect(compareCheckpointTags(streams(["a", 1], ["b", 2]), streams(["a", 1], ["b", 3]))).toBe(-1)
    expect(compareCheckpointTags(streams(["a", 2], ["b", 2]), streams(["a", 1], ["b", 2]))).toBe(1)
    expect(compareCheckpointTags(streams(["a", 2], ["b", 1]), streams(["a", 1], ["b", 2]))).toBeUndefined()
    expect(compareCheckpointTags(streams(["a", 1]), streams(["a", 1], ["b", 0]))).toBe(-1)
    expect(compareCheckpointTags(streams(["a", 1]), position(1, 1))).toBeUndefined()
  })
})

describe("a checkpoint's data", () => {
  it("is [state] or [state,result]", () => {
    expect(encodeCheckpointState('{"count":1}')).toBe('[{"count":1}]')
    expect(encodeCheckpointState('{"count":1}', '{"total":1}')).toBe('[{"count":1},{"total":1}]')
    expect(encodeCheckpointState("")).toBe("[]")
  })

  it("reads back state and result, a bare object as a state, and nothing as no state", () => {
    expect(decodeCheckpointState('[{"count":1},{"total":1}]')).toEqual({ state: '{"count":1}', result: '{"total":1}' })
    expect(decodeCheckpointState('[ {"count" : 1} ]')).toEqual({ state: '{"count":1}', result: undefined })
    expect(decodeCheckpointState('{"count":1}')).toEqual({ state: '{"count":1}', result: undefined })
    expect(decodeCheckpointState("[]")).toEqual({ state: "", result: undefined })
    expect(decodeCheckpointState("")).toEqual({ state: "", result: undefined })
    expect(decodeCheckpointState("{")).toBeUndefined()
  })

  it("lives in a stream keeping two records, for admins only", () => {
    expect(JSON.parse(checkpointStreamMetadata)).toEqual({
      $maxCount: 2,
      $acl: { $r: "$admins", $w: "$admins", $d: "$admins", $mr: "$all", $mw: "$admins" }
    })
  })
})
