/**
 * The category of a stream id, for `$by_category` and `$stream_by_category`. Their query text names the
 * rule: one character (split at its last occurrence), or two lines, `first`/`last` and the separator.
 */
import { Either } from "effect"
import { isSystemStream } from "@vellum/storage"

export type CategoryOf = (streamId: string) => string | undefined

const prefix = "Cannot initialize categorization projection handler.  "
const format = "Configuration format is: \r\nfirst|last\r\nseparator"

export const CategoryConfigFaults = {
  missing: `${prefix}One symbol separator or configuration must be supplied in the source.  ${format}`,
  notTwoLines: `${prefix}Invalid configuration  ${format}`,
  direction: `${prefix}Invalid direction specifier.  Expected 'first' or 'last'. ${format}`,
  separator: `${prefix}Single separator expected. ${format}`
} as const

const splitAt =
  (separator: string, last: boolean): CategoryOf =>
  (streamId) => {
    if (isSystemStream(streamId)) return undefined
    const at = last ? streamId.lastIndexOf(separator) : streamId.indexOf(separator)
    // A separator at index 0 leaves an empty category: none.
    return at > 0 ? streamId.slice(0, at) : undefined
  }

/** The categorisation rule a query text names, or the fault message it earns. */
export const parseCategoryConfig = (query: string): Either.Either<CategoryOf, string> => {
  if (query.length === 0) return Either.left(CategoryConfigFaults.missing)
  const trimmed = query.trim()
  if (trimmed.length === 1) return Either.right(splitAt(trimmed, true))
  const lines = trimmed.split("\n")
  if (lines.length !== 2) return Either.left(CategoryConfigFaults.notTwoLines)
  const direction = lines[0].toLowerCase().trim()
  if (direction !== "first" && direction !== "last") return Either.left(CategoryConfigFaults.direction)
  // The separator line is not trimmed: " -" is two characters.
  if (lines[1].length !== 1) return Either.left(CategoryConfigFaults.separator)
  return Either.right(splitAt(lines[1], direction === "last"))
}
