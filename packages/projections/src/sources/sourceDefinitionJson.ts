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

/** Reads typed members, remembering the first one of the wrong type (absent or null: the default). */
class MemberReader {
  problem: string | undefined

  private member<A>(
    members: Members,
    name: string,
    fallback: A,
    read: (value: unknown) => A | undefined,
    kind: string
  ) {
    const value = members.get(name.toLowerCase())
    if (value === undefined || value === null) return fallback
    const result = read(value)
    if (result !== undefined) return result
    this.problem ??= `'${name}' must be ${kind}`
    return fallback
  }

  boolean = (members: Members, name: string): boolean =>
    this.member(members, name, false, (value) => (typeof value === "boolean" ? value : undefined), "true or false")

  strings = (members: Members, name: string): Array<string> =>
    this.member<Array<string>>(
      members,
      name,
      [],
      (value) =>
        Array.isArray(value) && value.every((item): item is string => typeof item === "string") ? value : undefined,
      "a list of strings"
    )

  text = (members: Members, name: string): string | null =>
    this.member<string | null>(
      members,
      name,
      null,
      (value) => (typeof value === "string" ? value : undefined),
      "a string"
    )

  integer = (members: Members, name: string): number =>
    this.member(
      members,
      name,
      0,
      (value) => (typeof value === "number" && Number.isSafeInteger(value) ? value : undefined),
      "an integer"
    )

  object = (members: Members, name: string): Members =>
    membersOf(this.member(members, name, {}, (value) => (isJsonObject(value) ? value : undefined), "an object"))
}

const optionsOf = (read: MemberReader, members: Members): SourceDefinitionOptions => {
  const options = read.object(members, "options")
  return {
    resultStreamName: read.text(options, "resultStreamName"),
    partitionResultStreamNamePattern: read.text(options, "partitionResultStreamNamePattern"),
    reorderEvents: read.boolean(options, "reorderEvents"),
    processingLag: read.integer(options, "processingLag"),
    isBiState: read.boolean(options, "isBiState"),
    definesStateTransform: read.boolean(options, "definesStateTransform"),
    producesResults: read.boolean(options, "producesResults"),
    definesFold: read.boolean(options, "definesFold"),
    handlesDeletedNotifications: read.boolean(options, "handlesDeletedNotifications"),
    includeLinks: read.boolean(options, "includeLinks")
  }
}

/** The definition in `value` (a JSON object, or its text), or why it is none. */
export const parseSourceDefinitionJson = (
  value: unknown
): { readonly definition: SourceDefinition } | { readonly reason: string } => {
  const object = typeof value === "string" ? parseJsonObject(value) : isJsonObject(value) ? value : undefined
  if (object === undefined) return { reason: "the query must be a source definition (a JSON object)" }
  const members = membersOf(object)
  const read = new MemberReader()
  const definition: SourceDefinition = {
    allEvents: read.boolean(members, "allEvents"),
    allStreams: read.boolean(members, "allStreams"),
    byStream: read.boolean(members, "byStream"),
    byCustomPartitions: read.boolean(members, "byCustomPartitions"),
    categories: read.strings(members, "categories"),
    events: read.strings(members, "events"),
    streams: read.strings(members, "streams"),
    options: optionsOf(read, members)
  }
  return read.problem === undefined ? { definition } : { reason: `the source definition is not valid: ${read.problem}` }
}
