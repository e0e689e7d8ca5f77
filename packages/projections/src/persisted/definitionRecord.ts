/**
 * A projection's definition as the reference persists it: every change (create, new query, new config,
 * enable, disable, reset, delete) appends one `$ProjectionUpdated` JSON event to `$projections-{name}` whose
 * data is the whole definition, indented by two spaces, camelCase, with members at their type's default left
 * out (false and 0 for plain flags and numbers, null for optional ones; an optional flag set to false IS
 * written). Also the registry records of `$projections-$all` and the rule giving a projection its numeric id.
 */
import type { PersistedEvent } from "./PersistedEvent.js"
import { isJsonObject, parseJsonObject } from "./json.js"
import { projectionEventTypes } from "./streamNames.js"

/** The modes a definition names (`AllNonTransient` is only a list filter, never persisted). */
export const projectionModes = ["Transient", "OneTime", "Continuous"] as const
export type ProjectionMode = (typeof projectionModes)[number]
/** The numbers the reference gives the modes (a definition may carry the number instead of the name). */
const modeNumbers: Readonly<Record<number, ProjectionMode>> = { 0: "Transient", 1: "OneTime", 4: "Continuous" }

/** The account a projection runs as. */
export interface RunAs {
  readonly name: string
  readonly roles: ReadonlyArray<string>
}

/** The persisted definition; an optional member left undefined is absent from the record. */
export interface DefinitionRecord {
  readonly handlerType?: string | undefined
  readonly query?: string | undefined
  readonly mode: ProjectionMode
  readonly enabled: boolean
  readonly deleted: boolean
  readonly deleting: boolean
  readonly deleteEmittedStreams: boolean
  readonly deleteCheckpointStream: boolean
  readonly deleteStateStream: boolean
  readonly numberOfPrequisitesMetForDeletion: number
  readonly message?: string | undefined
  /** The source definition the language phase produced, kept as the JSON value it is. */
  readonly sourceDefinition?: unknown
  readonly emitEnabled?: boolean | undefined
  readonly createTempStreams?: boolean | undefined
  readonly checkpointsDisabled?: boolean | undefined
  readonly trackEmittedStreams?: boolean | undefined
  readonly epoch?: number | undefined
  readonly version?: number | undefined
  readonly runAs?: RunAs | undefined
  readonly checkpointHandledThreshold: number
  readonly checkpointAfterMs: number
  readonly checkpointUnhandledBytesThreshold: number
  readonly pendingEventsThreshold: number
  readonly maxWriteBatchLength: number
  readonly maxAllowedWritesInFlight: number
  readonly projectionSubsystemVersion?: number | undefined
  readonly projectionExecutionTimeout?: number | undefined
}

/** The version of the projections subsystem the reference stamps on definitions and positions. */
export const projectionSubsystemVersion = 4

/** A definition with nothing set but what a fresh one carries (the thresholds' defaults). */
export const emptyDefinition: DefinitionRecord = {
  mode: "Transient",
  enabled: false,
  deleted: false,
  deleting: false,
  deleteEmittedStreams: false,
  deleteCheckpointStream: false,
  deleteStateStream: false,
  numberOfPrequisitesMetForDeletion: 0,
  checkpointHandledThreshold: 4000,
  checkpointAfterMs: 0,
  checkpointUnhandledBytesThreshold: 10_000_000,
  pendingEventsThreshold: 5000,
  maxWriteBatchLength: 500,
  maxAllowedWritesInFlight: 0
}

/** The members in the order the reference writes them (its one public field first, then its properties). */
const memberOrder: ReadonlyArray<keyof DefinitionRecord> = [
  "numberOfPrequisitesMetForDeletion",
  "handlerType",
  "query",
  "mode",
  "enabled",
  "deleted",
  "deleting",
  "deleteEmittedStreams",
  "deleteCheckpointStream",
  "deleteStateStream",
  "message",
  "sourceDefinition",
  "emitEnabled",
  "createTempStreams",
  "checkpointsDisabled",
  "trackEmittedStreams",
  "epoch",
  "version",
  "runAs",
  "checkpointHandledThreshold",
  "checkpointAfterMs",
  "checkpointUnhandledBytesThreshold",
  "pendingEventsThreshold",
  "maxWriteBatchLength",
  "maxAllowedWritesInFlight",
  "projectionSubsystemVersion",
  "projectionExecutionTimeout"
]

/** Members whose type has no null (those a fresh definition sets): left out at false / 0 / the first mode. */
const plainMembers: ReadonlySet<string> = new Set(Object.keys(emptyDefinition))

const isOmitted = (member: string, value: unknown): boolean =>
  value === undefined ||
  value === null ||
  (plainMembers.has(member) && (value === false || value === 0 || value === "Transient"))

/** The definition's JSON text, byte for byte as the reference writes it. */
export const encodeDefinition = (definition: DefinitionRecord): string => {
  const out: Record<string, unknown> = {}
  for (const member of memberOrder) {
    const value = definition[member]
    if (isOmitted(member, value)) continue
    out[member] = member === "runAs" ? { name: (value as RunAs).name, roles: [...(value as RunAs).roles] } : value
  }
  return JSON.stringify(out, null, 2)
}

/** The `$ProjectionUpdated` event carrying a definition. */
export const encodeDefinitionEvent = (definition: DefinitionRecord): PersistedEvent => ({
  eventType: projectionEventTypes.updated,
  isJson: true,
  data: encodeDefinition(definition),
  metadata: ""
})

const lowerCaseKeys = (record: Record<string, unknown>): Map<string, unknown> =>
  new Map(Object.entries(record).map(([key, value]) => [key.toLowerCase(), value]))

const asInteger = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) ? value : undefined

const asMode = (value: unknown): ProjectionMode | undefined => {
  if (typeof value === "number") return modeNumbers[value]
  if (typeof value !== "string") return undefined
  return projectionModes.find((mode) => mode.toLowerCase() === value.toLowerCase())
}

const asRunAs = (value: unknown): RunAs | undefined => {
  if (!isJsonObject(value)) return undefined
  const members = lowerCaseKeys(value)
  const name = members.get("name")
  const roles = members.get("roles")
  if (typeof name !== "string") return undefined
  return { name, roles: Array.isArray(roles) ? roles.filter((role): role is string => typeof role === "string") : [] }
}

/**
 * A definition read back as the reference reads it: member names in any case, a missing member at its
 * default, a mode given by name or number. A member of the wrong type counts as missing; undefined only when
 * the text is no JSON object.
 */
export const decodeDefinition = (text: string): DefinitionRecord | undefined => {
  const parsed = parseJsonObject(text)
  if (parsed === undefined) return undefined
  const members = lowerCaseKeys(parsed)
  const get = (name: string): unknown => members.get(name.toLowerCase())
  const text_ = (name: string): string | undefined => {
    const value = get(name)
    return typeof value === "string" ? value : undefined
  }
  const flag = (name: string): boolean | undefined => {
    const value = get(name)
    return typeof value === "boolean" ? value : undefined
  }
  const number = (name: keyof DefinitionRecord): number => asInteger(get(name)) ?? (emptyDefinition[name] as number)
  const sourceDefinition = get("sourceDefinition")
  return {
    handlerType: text_("handlerType"),
    query: text_("query"),
    mode: asMode(get("mode")) ?? "Transient",
    enabled: flag("enabled") ?? false,
    deleted: flag("deleted") ?? false,
    deleting: flag("deleting") ?? false,
    deleteEmittedStreams: flag("deleteEmittedStreams") ?? false,
    deleteCheckpointStream: flag("deleteCheckpointStream") ?? false,
    deleteStateStream: flag("deleteStateStream") ?? false,
    numberOfPrequisitesMetForDeletion: number("numberOfPrequisitesMetForDeletion"),
    message: text_("message"),
    sourceDefinition: sourceDefinition === null ? undefined : sourceDefinition,
    emitEnabled: flag("emitEnabled"),
    createTempStreams: flag("createTempStreams"),
    checkpointsDisabled: flag("checkpointsDisabled"),
    trackEmittedStreams: flag("trackEmittedStreams"),
    epoch: asInteger(get("epoch")),
    version: asInteger(get("version")),
    runAs: asRunAs(get("runAs")),
    checkpointHandledThreshold: number("checkpointHandledThreshold"),
    checkpointAfterMs: number("checkpointAfterMs"),
    checkpointUnhandledBytesThreshold: number("checkpointUnhandledBytesThreshold"),
    pendingEventsThreshold: number("pendingEventsThreshold"),
    maxWriteBatchLength: number("maxWriteBatchLength"),
    maxAllowedWritesInFlight: number("maxAllowedWritesInFlight"),
    projectionSubsystemVersion: asInteger(get("projectionSubsystemVersion")),
    projectionExecutionTimeout: asInteger(get("projectionExecutionTimeout"))
  }
}

/** The registry's first event (empty, not JSON). */
export const registryInitializedEvent: PersistedEvent = {
  eventType: projectionEventTypes.initialized,
  isJson: false,
  data: "",
  metadata: ""
}

/** The registry event recording a created projection: its name as plain text. */
export const projectionCreatedEvent = (name: string): PersistedEvent => ({
  eventType: projectionEventTypes.created,
  isJson: false,
  data: name,
  metadata: ""
})

/** The registry event recording a deleted projection: its name as plain text. */
export const projectionDeletedEvent = (name: string): PersistedEvent => ({
  eventType: projectionEventTypes.deleted,
  isJson: false,
  data: name,
  metadata: ""
})

/**
 * A projection's numeric id: the number of its `$ProjectionCreated` event in the registry, except that
 * number 0 (only possible without the `$ProjectionsInitialized` first event) maps to 2147483646, since 0
 * means "no projection" in a position's version stamp.
 */
export const projectionIdOf = (createdEventNumber: number): number =>
  createdEventNumber === 0 ? 2_147_483_646 : createdEventNumber
