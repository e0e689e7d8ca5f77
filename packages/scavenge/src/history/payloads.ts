/**
 * The scavenge history's stream names, event types and exact payload bytes.
 *
 * The reference writes each payload from a dictionary with Newtonsoft, indented and camelCase: members in
 * insertion order, nulls included, enums as strings, TimeSpans in the "c" format. `JSON.stringify` with a
 * two-space indent produces the same layout (`"name": value`, one member per line, `\n` line breaks as on
 * the reference's Linux builds); the only difference left is that Newtonsoft also escapes U+0085, U+2028
 * and U+2029 inside strings.
 */
import type { ScavengeResult } from "../Scavenger.js"
import { formatTimeSpan } from "./timeSpan.js"

export const ScavengesStream = "$scavenges"

/** `$scavenges-{scavengeId}`: one run's detail events. */
export const runStreamOf = (scavengeId: string): string => `${ScavengesStream}-${scavengeId}`

export const HistoryEventTypes = {
  Started: "$scavengeStarted",
  ChunksCompleted: "$scavengeChunksCompleted",
  MergeCompleted: "$scavengeMergeCompleted",
  IndexCompleted: "$scavengeIndexCompleted",
  Completed: "$scavengeCompleted"
} as const

/** The role allowed to read the history streams. */
export const HistoryReadRole = "$ops"

const SecondsPerDay = 86_400

/**
 * The `$metadata` of every history stream: `$maxAge` in whole seconds and a read ACL of `$ops` only. The
 * reference's StreamMetadata writer is compact and writes a one-role list as a bare string.
 */
export const historyMetadataText = (historyMaxAgeDays: number): string =>
  `{"$maxAge":${Math.trunc(historyMaxAgeDays * SecondsPerDay)},"$acl":{"$r":"${HistoryReadRole}","$w":[],"$d":[],"$mr":[],"$mw":[]}}`

/** The data of the `$>` link in `$scavenges` to event `eventNumber` of a run's stream. */
export const linkText = (eventNumber: number, scavengeId: string): string => `${eventNumber}@${runStreamOf(scavengeId)}`

type JsonScalar = string | number | boolean | null

const NewtonsoftExtraEscapes = /[\u0085\u2028\u2029]/g

/** Newtonsoft's indented text of a flat object whose members are already in order. */
export const indentedJson = (members: Readonly<Record<string, JsonScalar>>): string =>
  JSON.stringify(members, null, 2).replace(
    NewtonsoftExtraEscapes,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
  )

/** Who wrote a history event: every payload names the run and the node. */
export interface RunIdentity {
  /** Lowercase hyphenated GUID. */
  readonly scavengeId: string
  /** `"<advertised http host>:<port>"`. */
  readonly nodeEndpoint: string
}

export interface ChunksCompleted extends RunIdentity {
  readonly chunkStartNumber: number
  readonly chunkEndNumber: number
  readonly timeTakenMillis: number
  /** True for the new scavenger; false (with spaceSaved 0 and a message) only in the old one's failure form. */
  readonly wasScavenged: boolean
  /** Old size − new size, in bytes. */
  readonly spaceSaved: number
  /** "" when the chunks were scavenged. */
  readonly errorMessage: string
}

export interface MergeCompleted extends RunIdentity {
  readonly chunkStartNumber: number
  readonly chunkEndNumber: number
  readonly timeTakenMillis: number
  readonly spaceSaved: number
  readonly wasMerged: boolean
  readonly errorMessage: string
}

/** A table's index scavenge; on failure or cancellation level and index are -1 and nothing was deleted. */
export interface IndexCompleted extends RunIdentity {
  readonly level: number
  readonly index: number
  readonly timeTakenMillis: number
  readonly entriesDeleted: number
  readonly entriesKept: number
  readonly spaceSaved: number
  readonly wasScavenged: boolean
  /** "" on success, "Scavenge cancelled" or the failure's message otherwise. */
  readonly errorMessage: string
}

export interface Completed extends RunIdentity {
  readonly result: ScavengeResult
  /** null on success or stop; "Error while scavenging DB: …" on error; "The node was restarted." when interrupted. */
  readonly error: string | null
  readonly timeTakenMillis: number
  /** Chunks + merges + index tables, in bytes. */
  readonly spaceSaved: number
  /** Highest chunkEndNumber executed; 0 if none. */
  readonly maxChunkScavenged: number
}

export const startedPayload = (e: RunIdentity): string =>
  indentedJson({ scavengeId: e.scavengeId, nodeEndpoint: e.nodeEndpoint })

export const chunksCompletedPayload = (e: ChunksCompleted): string =>
  indentedJson({
    scavengeId: e.scavengeId,
    chunkStartNumber: e.chunkStartNumber,
    chunkEndNumber: e.chunkEndNumber,
    timeTaken: formatTimeSpan(e.timeTakenMillis),
    wasScavenged: e.wasScavenged,
    spaceSaved: e.spaceSaved,
    nodeEndpoint: e.nodeEndpoint,
    errorMessage: e.errorMessage
  })

export const mergeCompletedPayload = (e: MergeCompleted): string =>
  indentedJson({
    scavengeId: e.scavengeId,
    chunkStartNumber: e.chunkStartNumber,
    chunkEndNumber: e.chunkEndNumber,
    timeTaken: formatTimeSpan(e.timeTakenMillis),
    spaceSaved: e.spaceSaved,
    wasMerged: e.wasMerged,
    nodeEndpoint: e.nodeEndpoint,
    errorMessage: e.errorMessage
  })

export const indexCompletedPayload = (e: IndexCompleted): string =>
  indentedJson({
    scavengeId: e.scavengeId,
    level: e.level,
    index: e.index,
    timeTaken: formatTimeSpan(e.timeTakenMillis),
    entriesDeleted: e.entriesDeleted,
    entriesKept: e.entriesKept,
    spaceSaved: e.spaceSaved,
    wasScavenged: e.wasScavenged,
    nodeEndpoint: e.nodeEndpoint,
    errorMessage: e.errorMessage
  })

export const completedPayload = (e: Completed): string =>
  indentedJson({
    scavengeId: e.scavengeId,
    nodeEndpoint: e.nodeEndpoint,
    result: e.result,
    error: e.error,
    timeTaken: formatTimeSpan(e.timeTakenMillis),
    spaceSaved: e.spaceSaved,
    maxChunkScavenged: e.maxChunkScavenged
  })
