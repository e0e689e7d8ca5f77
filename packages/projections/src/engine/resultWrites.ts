/**
 * The engine's own writes besides the handler's: results. A continuous projection that produces results (and a
 * query with no fold) writes `Result`/`ResultRemoved` whenever a partition's result text changes — a partition's
 * into its own result stream, linked from the root result stream, and the partition's key into
 * `-partitions` the first time it is seen. A query writes, at the end of its source, one `Result` per partition
 * into the root result stream and then `$Eof`.
 */
import {
  partitionResultStream,
  partitionsStream,
  projectionEventTypes,
  resultStream
} from "../persisted/streamNames.js"
import type { EmittedWrite } from "./ProjectionHandler.js"
import type { RunnerSpec } from "./ProjectionRunner.js"

/** Whether results are written while running (not only at the end of a query). */
export const producesRunningResults = (spec: RunnerSpec): boolean =>
  !spec.system && (spec.stopOnEof ? !spec.definition.options.definesFold : spec.definition.options.producesResults)

const data = (stream: string, eventType: string, isJson: boolean, text: string): EmittedWrite => ({
  stream,
  eventType,
  isJson,
  data: text,
  extraMetadata: []
})

const resultEvent = (stream: string, result: string | null): EmittedWrite =>
  result === null
    ? data(stream, projectionEventTypes.resultRemoved, true, "")
    : data(stream, projectionEventTypes.result, true, result)

/** A partition's result changed (`firstSight`: the partition was never seen before). */
export const runningResultWrites = (
  spec: RunnerSpec,
  partition: string,
  firstSight: boolean,
  resultChanged: boolean,
  result: string | null
): ReadonlyArray<EmittedWrite> => {
  const options = spec.definition.options
  const root = resultStream(spec.name, options.resultStreamName)
  const writes: Array<EmittedWrite> = []
  if (partition !== "" && firstSight)
    writes.push(data(partitionsStream(spec.name), projectionEventTypes.partition, false, partition))
  if (!resultChanged) return writes
  if (partition === "") return [...writes, resultEvent(root, result)]
  const own = partitionResultStream(spec.name, partition, options)
  writes.push(resultEvent(own, result), { ...data(root, projectionEventTypes.link, false, ""), linkToWrittenIn: own })
  return writes
}

/** A query's final writes: each partition's result (none: empty data) unless it wrote them running, then `$Eof`. */
export const queryResultWrites = (
  spec: RunnerSpec,
  results: ReadonlyArray<string | null>
): ReadonlyArray<EmittedWrite> => {
  const root = resultStream(spec.name, spec.definition.options.resultStreamName)
  const final = spec.definition.options.definesFold
    ? results.map((result) => data(root, projectionEventTypes.result, true, result ?? ""))
    : []
  return [...final, data(root, projectionEventTypes.eof, true, "")]
}
