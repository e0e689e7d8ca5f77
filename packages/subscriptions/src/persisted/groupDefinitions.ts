/**
 * Every group's definition, as one record in the definitions stream (streamNames.ts), in the reference's
 * shape: `{version, updated, updatedBy, entries: [...]}`, each entry naming its stream and group and carrying
 * every setting under the reference's names (`historyBufferSize` for the buffer size, `messageTimeout`,
 * `checkPointAfter`), with default values left out as the reference leaves them out.
 *
 * Groups on `$all` are stored as the reference stores its own: stream `$all`, the start as the text
 * `C:{commit}/P:{prepare}` in `startPosition` (and the lowest long in the legacy `startFrom`), and the filter
 * as `{context, type, data, isAllStream}` (context `eventtype` or `streamid`, type `prefix` or `regex`,
 * several prefixes joined by commas).
 */
import { Either } from "effect"
import { ConsumerStrategies, type ConsumerStrategy, type GroupSettings } from "../config/GroupSettings.js"
import { field, parseObject, writeDotNetJson, type JsonOut } from "./dotNetJson.js"
import type { PersistedEvent } from "./PersistedEvent.js"
import { definitionsEventType } from "./streamNames.js"

export const AllStream = "$all"

/** The filter of a group on `$all`, as the reference records it. */
export interface EventFilterRecord {
  readonly context: string
  readonly type: string
  readonly data: string
  readonly isAllStream: boolean
}

export interface GroupDefinition {
  readonly stream: string
  readonly group: string
  /** Only for a group on `$all` (undefined: every event). */
  readonly filter: EventFilterRecord | undefined
  /**
   * For a group on a stream the start is `startFrom`; for a group on `$all` it is `startPosition`, the text
   * `C:{commit}/P:{prepare}`, and `startFrom` means nothing.
   */
  readonly settings: GroupSettings
}

export interface GroupDefinitions {
  /** "2"; a record of version "1" is upgraded when read. */
  readonly version: string
  /** When the set last changed, as written (see dotNetDate). */
  readonly updated: string
  readonly updatedBy: string | undefined
  readonly entries: ReadonlyArray<GroupDefinition>
}

export const currentVersion = "2"

/** The legacy start number the reference writes for a group on `$all` (the lowest long). */
const noStreamStart = "-9223372036854775808"

const entryJson = (entry: GroupDefinition): JsonOut => {
  const s = entry.settings
  const onAll = entry.stream === AllStream
  const filter = entry.filter
  return {
    members: [
      ["stream", entry.stream],
      ["group", entry.group],
      [
        "filter",
        filter === undefined
          ? undefined
          : {
              members: [
                ["context", filter.context],
                ["type", filter.type],
                ["data", filter.data],
                ["isAllStream", filter.isAllStream]
              ]
            }
      ],
      ["resolveLinkTos", s.resolveLinkTos],
      ["extraStatistics", s.extraStatistics],
      ["messageTimeout", s.messageTimeoutMilliseconds],
      ["startFrom", onAll ? { raw: noStreamStart } : s.startFrom],
      ["startPosition", onAll ? (s.startPosition ?? "C:0/P:0") : String(s.startFrom)],
      ["liveBufferSize", s.liveBufferSize],
      ["historyBufferSize", s.bufferSize],
      ["maxRetryCount", s.maxRetryCount],
      ["readBatchSize", s.readBatchSize],
      ["preferRoundRobin", s.preferRoundRobin],
      ["checkPointAfter", s.checkPointAfterMilliseconds],
      ["minCheckPointCount", s.minCheckPointCount],
      ["maxCheckPointCount", s.maxCheckPointCount],
      ["maxSubscriberCount", s.maxSubscriberCount],
      ["namedConsumerStrategy", s.namedConsumerStrategy]
    ]
  }
}

/** The record to append to the definitions stream for this set of groups. */
export const encodeGroupDefinitions = (definitions: GroupDefinitions): PersistedEvent => ({
  eventType: definitionsEventType,
  isJson: true,
  data: writeDotNetJson({
    members: [
      ["version", definitions.version],
      ["updated", definitions.updated],
      ["updatedBy", definitions.updatedBy],
      ["entries", definitions.entries.map(entryJson)]
    ]
  }),
  metadata: ""
})

/** The definitions stream's metadata: only the last two records are kept. */
export const definitionsStreamMetadata = `{"$maxCount":2}`

const text = (record: Record<string, unknown>, name: string): string | undefined => {
  const value = field(record, name)
  return typeof value === "string" ? value : undefined
}
/** A number member; absent means the type's default, 0 (the writer leaves zeros out). */
const int = (record: Record<string, unknown>, name: string): number => {
  const value = field(record, name)
  return typeof value === "number" && Number.isSafeInteger(value) ? value : 0
}
const flag = (record: Record<string, unknown>, name: string): boolean => field(record, name) === true

const filterOf = (value: unknown): EventFilterRecord | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const record = value as Record<string, unknown>
  return {
    context: text(record, "context") ?? "",
    type: text(record, "type") ?? "",
    data: text(record, "data") ?? "",
    isAllStream: flag(record, "isAllStream")
  }
}

const isStrategy = (name: string): name is ConsumerStrategy =>
  (ConsumerStrategies as ReadonlyArray<string>).includes(name)

/** One entry, or why it is left out (the reference skips such an entry and loads the others). */
const entryOf = (record: Record<string, unknown>, version: string): Either.Either<GroupDefinition, string> => {
  const stream = text(record, "stream") ?? ""
  const group = text(record, "group") ?? ""
  const preferRoundRobin = flag(record, "preferRoundRobin")
  let strategy = text(record, "namedConsumerStrategy") ?? ""
  // Version 1 had no strategies: the flag chose between the two it knew.
  if (version === "1" && strategy === "") strategy = preferRoundRobin ? "RoundRobin" : "DispatchToSingle"
  if (!isStrategy(strategy)) return Either.left(`group ${stream}::${group}: unknown consumer strategy '${strategy}'`)
  const onAll = stream === AllStream
  const startText = text(record, "startPosition")
  let startFrom = 0
  if (!onAll) {
    const start =
      startText === undefined ? int(record, "startFrom") : /^-?\d+$/.test(startText) ? Number(startText) : NaN
    if (!Number.isSafeInteger(start)) return Either.left(`group ${stream}::${group}: bad start '${startText}'`)
    startFrom = start
  }
  return Either.right({
    stream,
    group,
    filter: filterOf(field(record, "filter")),
    settings: {
      resolveLinkTos: flag(record, "resolveLinkTos"),
      startFrom,
      startPosition: onAll ? startText : undefined,
      messageTimeoutMilliseconds: int(record, "messageTimeout"),
      extraStatistics: flag(record, "extraStatistics"),
      maxRetryCount: int(record, "maxRetryCount"),
      liveBufferSize: int(record, "liveBufferSize"),
      bufferSize: int(record, "historyBufferSize"),
      readBatchSize: int(record, "readBatchSize"),
      preferRoundRobin,
      checkPointAfterMilliseconds: int(record, "checkPointAfter"),
      minCheckPointCount: int(record, "minCheckPointCount"),
      maxCheckPointCount: int(record, "maxCheckPointCount"),
      maxSubscriberCount: int(record, "maxSubscriberCount"),
      namedConsumerStrategy: strategy
    }
  })
}

export interface DecodedGroupDefinitions {
  readonly definitions: GroupDefinitions
  /** Why each entry left out was left out. */
  readonly skipped: ReadonlyArray<string>
}

/** A definitions record's data, or why it is no such record (no object, no version). */
export const decodeGroupDefinitions = (data: string): Either.Either<DecodedGroupDefinitions, string> => {
  const record = parseObject(data)
  if (record === undefined) return Either.left("the definitions record is not a JSON object")
  const version = text(record, "version")
  if (version === undefined) return Either.left("the definitions record has no version")
  const rawEntries = field(record, "entries")
  const entries: Array<GroupDefinition> = []
  const skipped: Array<string> = []
  for (const raw of Array.isArray(rawEntries) ? (rawEntries as ReadonlyArray<unknown>) : []) {
    if (typeof raw !== "object" || raw === null) {
      skipped.push("an entry that is not an object")
      continue
    }
    const entry = entryOf(raw as Record<string, unknown>, version)
    if (Either.isLeft(entry)) skipped.push(entry.left)
    else entries.push(entry.right)
  }
  return Either.right({
    definitions: {
      version: version === "1" ? currentVersion : version,
      updated: text(record, "updated") ?? "",
      updatedBy: text(record, "updatedBy"),
      entries
    },
    skipped
  })
}
