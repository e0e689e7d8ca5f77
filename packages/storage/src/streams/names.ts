/** Stream and event-type names with special meaning (spec/storage-and-cluster.md §3.6). */
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

/** Why a stream name cannot be written to, or undefined when it can. */
export const invalidStreamName = (stream: string): string | undefined => {
  if (stream.length === 0) return "the stream name is empty"
  if (stream === "$$") return "'$$' is not a valid stream name"
  if (stream === AllStream) return "'$all' cannot be written to"
  return undefined
}
