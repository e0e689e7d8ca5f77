/** The reference model's vocabulary: expected-version constants, long.MaxValue, system event types, metastreams. */

export const ExpectedAny = -2
export const ExpectedNoStream = -1
export const ExpectedStreamExists = -4

/** The port's in-memory representation of long.MaxValue. */
export const LongMax = Number.MAX_SAFE_INTEGER
/** long.MaxValue as it appears in metadata JSON. */
export const LongMaxText = "9223372036854775807"

export const MetadataEventType = "$metadata"
export const StreamDeletedEventType = "$streamDeleted"

export const isMetastream = (stream: string): boolean => stream.startsWith("$$")
export const metastreamOf = (stream: string): string => `$$${stream}`
export const originalStreamOf = (metastream: string): string => metastream.slice(2)
