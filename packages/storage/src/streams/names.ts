/** Stream and event-type names with special meaning. */
export const AllStream = "$all"
export const SettingsStream = "$settings"
export const ScavengePointsStream = "$scavengePoints"
export const EpochInformationStream = "$epoch-information"

export const EventTypes = {
  Metadata: "$metadata",
  StreamDeleted: "$streamDeleted",
  LinkTo: "$>",
  StreamReference: "$@",
  ScavengePoint: "$scavengePoint",
  EpochInformation: "$epoch-information",
  Settings: "$settings"
} as const

/** Event number reserved for the hard-delete tombstone (the reference's long.MaxValue). */
export const DeletedStreamNumber = Number.MAX_SAFE_INTEGER

/** The wire value of the tombstone's event number and of `$tb` for a soft delete (long.MaxValue). */
export const LongMaxValueText = "9223372036854775807"

export const ExpectedVersion = { Any: -2, NoStream: -1, StreamExists: -4 } as const

export const isMetastream = (stream: string): boolean => stream.startsWith("$$")
export const isSystemStream = (stream: string): boolean => stream.startsWith("$")
export const metastreamOf = (stream: string): string => `$$${stream}`
export const originalStreamOf = (metastream: string): string => metastream.slice(2)

/**
 * True when a string has no lone UTF-16 surrogate. Names are stored as UTF-8, where a lone surrogate
 * becomes U+FFFD — the name would silently change after a restart — so such names are refused.
 */
export const isWellFormedText = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      i++
    } else if (c >= 0xdc00 && c <= 0xdfff) return false
  }
  return true
}

/** Why a stream name cannot be written to, or undefined when it can. */
export const invalidStreamName = (stream: string): string | undefined => {
  if (stream.length === 0) return "the stream name is empty"
  if (!isWellFormedText(stream)) return "the stream name is not well-formed Unicode (it has a lone surrogate)"
  if (stream === "$$") return "'$$' is not a valid stream name"
  if (stream === AllStream) return "'$all' cannot be written to"
  return undefined
}
