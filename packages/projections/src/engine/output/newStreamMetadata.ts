/**
 * The stream metadata a projection writes before its first event of a new logical stream: a stream that has
 * no event yet, or whose events belong to an older epoch of the projection. Older output is truncated with
 * `$tb` (the next event number), and a `$`-stream is made readable by all, as the reference does
 * (`$r` and `$mr` of `$all`); the stream's other metadata members are kept.
 */

/** The ACL the reference gives a `$`-stream a projection starts: everyone may read it and its metadata. */
export const systemStreamReadableAcl = { $r: "$all", $mr: "$all" } as const

/**
 * The metadata JSON to write, or undefined when the existing metadata already says it all.
 * `truncateBefore`: the first event number of the new logical stream (0 keeps no `$tb`).
 */
export const newLogicalStreamMetadata = (
  stream: string,
  existing: Readonly<Record<string, unknown>> | undefined,
  truncateBefore: number
): string | undefined => {
  const members: Record<string, unknown> = { ...existing }
  let changed = false
  if (truncateBefore > 0 && members["$tb"] !== truncateBefore) {
    members["$tb"] = truncateBefore
    changed = true
  }
  if (stream.startsWith("$") && JSON.stringify(members["$acl"]) !== JSON.stringify(systemStreamReadableAcl)) {
    members["$acl"] = systemStreamReadableAcl
    changed = true
  }
  return changed ? JSON.stringify(members) : undefined
}
