/**
 * A source definition as the definition record keeps it (`sourceDefinition`) and `?config=yes` shows it: the
 * reference's member order, false, zero and null members left out, the three lists always written, `options`
 * always present.
 */
import { Either, Schema } from "effect"
import { SourceDefinition } from "../language/SourceDefinition.js"

type JsonObject = Record<string, unknown>

const withoutDefaults = (members: ReadonlyArray<readonly [string, unknown]>): JsonObject => {
  const out: JsonObject = {}
  for (const [name, value] of members) {
    if (value === false || value === 0 || value === null || value === undefined) continue
    out[name] = value
  }
  return out
}

/** The JSON value kept for `definition`. */
export const sourceDefinitionJson = (definition: SourceDefinition): JsonObject => {
  const o = definition.options
  return {
    ...withoutDefaults([
      ["allEvents", definition.allEvents],
      ["allStreams", definition.allStreams],
      ["byStream", definition.byStream],
      ["byCustomPartitions", definition.byCustomPartitions]
    ]),
    categories: [...definition.categories],
    events: [...definition.events],
    streams: [...definition.streams],
    options: withoutDefaults([
      ["resultStreamName", o.resultStreamName],
      ["partitionResultStreamNamePattern", o.partitionResultStreamNamePattern],
      ["reorderEvents", o.reorderEvents],
      ["processingLag", o.processingLag],
      ["isBiState", o.isBiState],
      ["definesStateTransform", o.definesStateTransform],
      ["producesResults", o.producesResults],
      ["definesFold", o.definesFold],
      ["handlesDeletedNotifications", o.handlesDeletedNotifications],
      ["includeLinks", o.includeLinks]
    ])
  }
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : []

/** A kept definition read back (left-out members at their defaults); undefined when it is no object. */
export const sourceDefinitionOf = (json: unknown): SourceDefinition | undefined => {
  if (!isObject(json)) return undefined
  const o = isObject(json["options"]) ? json["options"] : {}
  const flag = (from: JsonObject, name: string) => from[name] === true
  const text = (name: string) => (typeof o[name] === "string" ? (o[name] as string) : null)
  const decoded = Schema.decodeUnknownEither(SourceDefinition)({
    allEvents: flag(json, "allEvents"),
    allStreams: flag(json, "allStreams"),
    byStream: flag(json, "byStream"),
    byCustomPartitions: flag(json, "byCustomPartitions"),
    categories: strings(json["categories"]),
    events: strings(json["events"]),
    streams: strings(json["streams"]),
    options: {
      resultStreamName: text("resultStreamName"),
      partitionResultStreamNamePattern: text("partitionResultStreamNamePattern"),
      reorderEvents: flag(o, "reorderEvents"),
      processingLag: typeof o["processingLag"] === "number" ? o["processingLag"] : 0,
      isBiState: flag(o, "isBiState"),
      definesStateTransform: flag(o, "definesStateTransform"),
      producesResults: flag(o, "producesResults"),
      definesFold: flag(o, "definesFold"),
      handlesDeletedNotifications: flag(o, "handlesDeletedNotifications"),
      includeLinks: flag(o, "includeLinks")
    }
  })
  return Either.getOrUndefined(decoded)
}
