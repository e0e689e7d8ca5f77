/**
 * Positions ("checkpoint tags"): where a projection is in its source, one shape per kind of source, each within
 * a phase (queries have a second phase writing results). Written as JSON into the metadata of checkpoints and
 * of every event a projection writes, preceded by the version stamp `"$v":"{projectionId}:{epoch}:{version}:4"`
 * when the writer is a registered projection; shown as text in statistics.
 */
import { projectionSubsystemVersion } from "./definitionRecord.js"
import { isJsonObject, parseJson, parseJsonObject } from "./json.js"

/** Ordered (name, event number) pairs: the reference keeps them in the order it first saw them. */
export type StreamPositions = ReadonlyArray<readonly [string, number]>

export type CheckpointTag =
  /** A phase's start (`completed` false) or end. */
  | { readonly kind: "phase"; readonly phase: number; readonly completed: boolean }
  /** A position in `$all`. */
  | { readonly kind: "position"; readonly phase: number; readonly commit: number; readonly prepare: number }
  /** A prepare position alone (a transaction file read without commits). */
  | { readonly kind: "preparePosition"; readonly phase: number; readonly prepare: number }
  /** The last event number read from each source stream (one stream, or several; -1 = none yet). */
  | { readonly kind: "streams"; readonly phase: number; readonly streams: StreamPositions }
  /** `$all` read through the event-type index streams: the `$all` position plus each type's event number. */
  | {
      readonly kind: "eventTypes"
      readonly phase: number
      readonly commit: number
      readonly prepare: number
      readonly types: StreamPositions
    }

/** Which projection, in which epoch and version of its definition, wrote a position. */
export interface ProjectionVersion {
  readonly projectionId: number
  readonly epoch: number
  readonly version: number
}

/** The `$v` stamp: `{id}:{epoch}:{version}:{subsystem version}`. */
export const versionStamp = (version: ProjectionVersion): string =>
  `${version.projectionId}:${version.epoch}:${version.version}:${projectionSubsystemVersion}`

const streamsJson = (streams: StreamPositions): string =>
  "{" + streams.map(([name, number]) => `${JSON.stringify(name)}:${number}`).join(",") + "}"

/**
 * A position's JSON as the reference writes it: `$v` (only for a registered projection, id > 0), `$ph` (only
 * past phase 0), the position's members, then the extra members (name and JSON text) in their order.
 */
export const encodeCheckpointTag = (
  tag: CheckpointTag,
  version?: ProjectionVersion,
  extra: ReadonlyArray<readonly [string, string]> = []
): string => {
  const members: Array<string> = []
  if (version !== undefined && version.projectionId > 0) members.push(`"$v":${JSON.stringify(versionStamp(version))}`)
  if (tag.phase !== 0) members.push(`"$ph":${tag.phase}`)
  switch (tag.kind) {
    case "phase":
      members.push(`"$cp":${tag.completed}`)
      break
    case "position":
      members.push(`"$c":${tag.commit}`, `"$p":${tag.prepare}`)
      break
    case "eventTypes":
      members.push(`"$c":${tag.commit}`, `"$p":${tag.prepare}`, `"$s":${streamsJson(tag.types)}`)
      break
    case "preparePosition":
      members.push(`"$p":${tag.prepare}`)
      break
    case "streams":
      members.push(`"$s":${streamsJson(tag.streams)}`)
      break
  }
  for (const [name, json] of extra) members.push(`${JSON.stringify(name)}:${json}`)
  return "{" + members.join(",") + "}"
}

/** A position read back: the tag, the version stamp's parts, and the members that are not the position's. */
export interface DecodedCheckpointTag {
  readonly tag: CheckpointTag
  /** Undefined when the JSON carries no `$v` (the reader then assumes its own projection wrote it). */
  readonly projectionId: number | undefined
  readonly epoch: number
  readonly version: number
  readonly systemVersion: number
  /** Every other member, name and value, in order. */
  readonly extra: ReadonlyArray<readonly [string, unknown]>
}

const isEventNumber = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= -1
const isInteger = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value)

const parseStreams = (value: unknown): StreamPositions | undefined => {
  if (!isJsonObject(value)) return undefined
  const entries = Object.entries(value)
  if (!entries.every(([name, number]) => name !== "" && isEventNumber(number))) return undefined
  return entries as Array<[string, number]>
}

/** The `$v` stamp's parts; a bare number or `a:b` is an older form carrying only the version. */
const parseVersion = (
  value: unknown
): { projectionId?: number; epoch: number; version: number; systemVersion: number } | undefined => {
  if (typeof value === "number") return { epoch: 0, version: value > 0 ? value : 0, systemVersion: 0 }
  if (typeof value !== "string") return undefined
  const parts = value.split(":").map((part) => (/^-?\d+$/.test(part) ? Number(part) : Number.NaN))
  if (parts.some((part) => !Number.isSafeInteger(part))) return undefined
  if (parts.length === 2) return { epoch: 0, version: parts[1]!, systemVersion: 0 }
  if (parts.length < 3) return undefined
  return { projectionId: parts[0]!, epoch: parts[1]!, version: parts[2]!, systemVersion: parts[3] ?? 0 }
}

const positionMembers: Readonly<Record<string, "cp" | "v" | "c" | "p" | "s" | "ph">> = {
  $cp: "cp",
  $v: "v",
  v: "v",
  $c: "c",
  c: "c",
  commitPosition: "c",
  $p: "p",
  p: "p",
  preparePosition: "p",
  $s: "s",
  s: "s",
  streams: "s",
  $ph: "ph"
}

/**
 * A position's JSON read back as the reference reads it (also its older member names `c`, `p`, `s`, `v`,
 * `commitPosition`, `preparePosition`, `streams`). Undefined when the text is no JSON object or a member has
 * the wrong type; a position "by stream" (`$m`) is not supported.
 */
export const decodeCheckpointTag = (text: string): DecodedCheckpointTag | undefined => {
  const parsed = parseJsonObject(text)
  if (parsed === undefined) return undefined
  let completed: boolean | undefined
  let commit: number | undefined
  let prepare: number | undefined
  let streams: StreamPositions | undefined
  let phase = 0
  let version: ReturnType<typeof parseVersion> = { epoch: 0, version: 0, systemVersion: 0 }
  const extra: Array<readonly [string, unknown]> = []
  for (const [name, value] of Object.entries(parsed)) {
    switch (positionMembers[name]) {
      case "cp":
        if (typeof value !== "boolean") return undefined
        completed = value
        break
      case "v":
        version = parseVersion(value)
        if (version === undefined) return undefined
        break
      case "c":
        if (!isInteger(value)) return undefined
        commit = value
        break
      case "p":
        if (!isInteger(value)) return undefined
        prepare = value
        break
      case "s":
        streams = parseStreams(value)
        if (streams === undefined) return undefined
        break
      case "ph":
        if (!isInteger(value)) return undefined
        phase = value
        break
      default:
        if (name === "$m") return undefined
        extra.push([name, value])
    }
  }
  const tag = tagOf(phase, completed, commit, prepare, streams)
  if (tag === undefined) return undefined
  return {
    tag,
    projectionId: version.projectionId,
    epoch: version.epoch,
    version: version.version,
    systemVersion: version.systemVersion,
    extra
  }
}

/** The shape the members read make up (the reference infers it the same way). */
const tagOf = (
  phase: number,
  completed: boolean | undefined,
  commit: number | undefined,
  prepare: number | undefined,
  streams: StreamPositions | undefined
): CheckpointTag | undefined => {
  if (streams !== undefined && streams.length > 0) {
    if (commit === undefined && prepare === undefined) return { kind: "streams", phase, streams }
    if (commit === undefined || prepare === undefined) return undefined
    return { kind: "eventTypes", phase, commit, prepare, types: streams }
  }
  if (completed !== undefined) return { kind: "phase", phase, completed }
  if (commit === undefined && prepare === undefined) return { kind: "phase", phase, completed: false }
  if (commit === undefined) return { kind: "preparePosition", phase, prepare: prepare! }
  if (prepare === undefined) return undefined
  return { kind: "position", phase, commit, prepare }
}

/** The text statistics show: `C:{commit}/P:{prepare}`, `{stream}: {n}`, `a: 1; b: 3; `, phases prefixed. */
export const checkpointTagText = (tag: CheckpointTag): string => {
  if (tag.kind === "phase") return `Phase: ${tag.phase}${tag.completed ? " (completed)" : ""}`
  const list = (streams: StreamPositions): string => streams.map(([name, number]) => `${name}: ${number}; `).join("")
  const text =
    tag.kind === "position"
      ? `C:${tag.commit}/P:${tag.prepare}`
      : tag.kind === "preparePosition"
        ? String(tag.prepare)
        : tag.kind === "eventTypes"
          ? `C:${tag.commit}/P:${tag.prepare}; ${list(tag.types)}`
          : tag.streams.length === 1
            ? `${tag.streams[0]![0]}: ${tag.streams[0]![1]}`
            : list(tag.streams)
  return tag.phase === 0 ? text : `(${tag.phase}) ${text}`
}

const sign = (difference: number): -1 | 0 | 1 => (difference > 0 ? 1 : difference < 0 ? -1 : 0)

const compareStreams = (left: StreamPositions, right: StreamPositions): -1 | 0 | 1 | undefined => {
  const rightMap = new Map(right)
  const leftMap = new Map(left)
  const anyLeftAhead = left.some(([name, number]) => !rightMap.has(name) || number > rightMap.get(name)!)
  const anyRightAhead = right.some(([name, number]) => !leftMap.has(name) || number > leftMap.get(name)!)
  if (anyLeftAhead && anyRightAhead) return undefined
  return anyLeftAhead ? 1 : anyRightAhead ? -1 : 0
}

const $allPosition = (tag: CheckpointTag): readonly [number, number] | undefined =>
  tag.kind === "position" || tag.kind === "eventTypes" ? [tag.commit, tag.prepare] : undefined

/**
 * Orders two positions as the reference does: a later phase is further; within a phase positions of the same
 * kind compare (`$all` by commit then prepare, also for event-type positions; streams by every stream's
 * number). Undefined when they cannot be ordered: different kinds, one stream against another, or stream
 * maps each ahead in some stream.
 */
export const compareCheckpointTags = (left: CheckpointTag, right: CheckpointTag): -1 | 0 | 1 | undefined => {
  if (left.phase !== right.phase) return sign(left.phase - right.phase)
  const leftAll = $allPosition(left)
  const rightAll = $allPosition(right)
  if (leftAll !== undefined && rightAll !== undefined)
    return sign(leftAll[0] - rightAll[0]) || sign(leftAll[1] - rightAll[1])
  if (left.kind === "phase" && right.kind === "phase") return sign(Number(left.completed) - Number(right.completed))
  if (left.kind === "preparePosition" && right.kind === "preparePosition") return sign(left.prepare - right.prepare)
  if (left.kind === "streams" && right.kind === "streams") {
    if (left.streams.length === 1 && right.streams.length === 1) {
      if (left.streams[0]![0] !== right.streams[0]![0]) return undefined
      return sign(left.streams[0]![1] - right.streams[0]![1])
    }
    return compareStreams(left.streams, right.streams)
  }
  return undefined
}

/** The data of a `$ProjectionCheckpoint` or `$Checkpoint` event: `[state]`, or `[state,result]` with a result. */
export const encodeCheckpointState = (state: string, result?: string | null): string =>
  result === undefined || result === null ? `[${state}]` : `[${state},${result}]`

/**
 * A checkpoint's data read back: an array gives the state (first) and the result (second, when there are
 * exactly two); a bare object is a state alone. Both as compact JSON text, "" for no state.
 */
export const decodeCheckpointState = (
  data: string
): { readonly state: string; readonly result: string | undefined } | undefined => {
  if (data === "") return { state: "", result: undefined }
  const json = parseJson(data)
  if (json === undefined) return undefined
  const parsed = json.value
  if (Array.isArray(parsed)) {
    if (parsed.length === 0) return { state: "", result: undefined }
    return { state: JSON.stringify(parsed[0]), result: parsed.length === 2 ? JSON.stringify(parsed[1]) : undefined }
  }
  if (isJsonObject(parsed)) return { state: JSON.stringify(parsed), result: undefined }
  return { state: "", result: undefined }
}

/** The metadata of a checkpoint stream, written before its first checkpoint: two records kept, admins only. */
export const checkpointStreamMetadata = `{"$maxCount":2,"$acl":{"$r":"$admins","$w":"$admins","$d":"$admins","$mr":"$all","$mw":"$admins"}}`
