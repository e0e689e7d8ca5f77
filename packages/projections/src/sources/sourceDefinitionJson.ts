/**
 * A source definition given as JSON (the `definition` a query's config shows, posted back to read events):
 * read leniently, as the reference's JSON reader does — member names in any case, absent or null members
 * at their defaults, unknown members ignored. A member of the wrong type is refused with a reason.
 */
import type { SourceDefinition, SourceDefinitionOptions } from "../language/SourceDefinition.js"
import { isJsonObject, parseJsonObject } from "../persisted/json.js"

type Members = ReadonlyMap<string, unknown>

/** The object's members by lower-case name (the first of two names differing only in case wins). */
const membersOf = (object: Record<string, unknown>): Members => {
  const members = new Map<string, unknown>()
  for (const [name, value] of Object.entries(object)) {
    const key = name.toLowerCase()
    if (!members.has(key)) members.set(key, value)
  }
  return members
}

class Refused {
  constructor(readonly reason: string) {}
}

const boolean = (members: Members, name: string): boolean => {
  const value = members.get(name.toLowerCase())
  if (value === undefined || value === null) return false
  if (typeof value !== "boolean") throw new Refused(`'${name}' must be true or false`)
  return value
}

const strings = (members: Members, name: string): Array<string> => {
  const value = members.get(name.toLowerCase())
  if (value === undefined || value === null) return []
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === "string"))
    throw new Refused(`'${name}' must be a list of strings`)
  return value
}

const text = (members: Members, name: string): string | null => {
  const value = members.get(name.toLowerCase())
  if (value === undefined || value === null) return null
  if (typeof value !== "string") throw new Refused(`'${name}' must be a string`)
  return value
}

const number = (members: Members, name: string): number => {
  const value = members.get(name.toLowerCase())
  if (value === undefined || value === null) return 0
  if (typeof value !== "number" || !Number.isSafeInteger(value)) throw new Refused(`'${name}' must be an integer`)
  return value
}

const optionsOf = (members: Members): SourceDefinitionOptions => {
  const value = members.get("options")
  if (value !== undefined && value !== null && !isJsonObject(value)) throw new Refused("'options' must be an object")
  const options = membersOf(value ?? {})
  return {
    resultStreamName: text(options, "resultStreamName"),
    partitionResultStreamNamePattern: text(options, "partitionResultStreamNamePattern"),
    reorderEvents: boolean(options, "reorderEvents"),
    processingLag: number(options, "processingLag"),
    isBiState: boolean(options, "isBiState"),
    definesStateTransform: boolean(options, "definesStateTransform"),
    producesResults: boolean(options, "producesResults"),
    definesFold: boolean(options, "definesFold"),
    handlesDeletedNotifications: boolean(options, "handlesDeletedNotifications"),
    includeLinks: boolean(options, "includeLinks")
  }
}

/** The definition in `value` (a JSON object, or its text), or why it is none. */
export const parseSourceDefinitionJson = (
  value: unknown
): { readonly definition: SourceDefinition } | { readonly reason: string } => {
  const object = typeof value === "string" ? parseJsonObject(value) : isJsonObject(value) ? value : undefined
  if (object === undefined) return { reason: "the query must be a source definition (a JSON object)" }
  const members = membersOf(object)
  try {
    return {
      definition: {
        allEvents: boolean(members, "allEvents"),
        allStreams: boolean(members, "allStreams"),
        byStream: boolean(members, "byStream"),
        byCustomPartitions: boolean(members, "byCustomPartitions"),
        categories: strings(members, "categories"),
        events: strings(members, "events"),
        streams: strings(members, "streams"),
        options: optionsOf(members)
      }
    }
  } catch (error) {
    if (error instanceof Refused) return { reason: `the source definition is not valid: ${error.reason}` }
    throw error
  }
}
