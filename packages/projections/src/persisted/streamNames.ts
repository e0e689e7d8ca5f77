/**
 * The names of the streams a projection owns and of the event types written to them, as the reference lays them
 * out, so that a reader of our log finds a projection's records where the reference keeps them. Every stream of
 * projection `{name}` starts with `$projections-{name}`; the registry of all projections is `$projections-$all`.
 */
import { assert } from "@vellum/platform"

/** The prefix of every stream a projection owns. */
export const projectionsStreamPrefix = "$projections-"
/** The registry: `$ProjectionsInitialized`, then one `$ProjectionCreated`/`$ProjectionDeleted` per change. */
export const registryStream = "$projections-$all"

/** The event types of the registry, the definition stream, checkpoints, results and bookkeeping streams. */
export const projectionEventTypes = {
  initialized: "$ProjectionsInitialized",
  created: "$ProjectionCreated",
  deleted: "$ProjectionDeleted",
  updated: "$ProjectionUpdated",
  projectionCheckpoint: "$ProjectionCheckpoint",
  partitionCheckpoint: "$Checkpoint",
  result: "Result",
  resultRemoved: "ResultRemoved",
  eof: "$Eof",
  partition: "$partition",
  streamTracked: "$StreamTracked",
  link: "$>",
  metadata: "$metadata"
} as const

/** `$projections-{name}`: the definition stream, one `$ProjectionUpdated` per persisted change. */
export const definitionStream = (name: string): string => `${projectionsStreamPrefix}${name}`

/** `$projections-{name}-checkpoint`: the root state and position at each checkpoint. */
export const checkpointStream = (name: string): string => `${projectionsStreamPrefix}${name}-checkpoint`

/** `$projections-{name}-{partition}-checkpoint`: a partition's state snapshots (the root partition has none). */
export const partitionCheckpointStream = (name: string, partition: string): string => {
  assert(partition !== "", "the root partition has no partition checkpoint stream")
  return `${projectionsStreamPrefix}${name}-${partition}-checkpoint`
}

/** `$projections-{name}-result`, unless the source definition names its own result stream. */
export const resultStream = (name: string, resultStreamName?: string | null): string =>
  resultStreamName ?? `${projectionsStreamPrefix}${name}-result`

/** The pattern of partition result streams: the definition's own, or `$projections-{name}-{0}-result`. */
export const partitionResultStreamPattern = (name: string, pattern?: string | null): string =>
  pattern ?? `${projectionsStreamPrefix}${name}-{0}-result`

/**
 * The result stream of a partition: the pattern with every `{0}` replaced by the partition (as .NET's
 * String.Format does); the root partition (empty) writes to the result stream itself.
 */
export const partitionResultStream = (
  name: string,
  partition: string,
  options: { readonly resultStreamName?: string | null; readonly partitionResultStreamNamePattern?: string | null } = {}
): string =>
  partition === ""
    ? resultStream(name, options.resultStreamName)
    : partitionResultStreamPattern(name, options.partitionResultStreamNamePattern).split("{0}").join(partition)

/** `$projections-{name}-partitions`: one `$partition` event the first time a partition is seen. */
export const partitionsStream = (name: string): string => `${projectionsStreamPrefix}${name}-partitions`

/** `$projections-{name}-emittedstreams`: one `$StreamTracked` per stream the projection wrote to. */
export const emittedStreamsStream = (name: string): string => `${projectionsStreamPrefix}${name}-emittedstreams`

/** `$projections-{name}-emittedstreams-checkpoint`: how far deleting the tracked streams has come. */
export const emittedStreamsCheckpointStream = (name: string): string =>
  `${projectionsStreamPrefix}${name}-emittedstreams-checkpoint`

/** `$projections-{name}-order`: links recording the processing order of a multi-stream source. */
export const orderStream = (name: string): string => `${projectionsStreamPrefix}${name}-order`
