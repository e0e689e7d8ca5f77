/**
 * The pure reference model of one node scavenge: accumulate → calculate
 * → execute chunks and the index. Deliberately simple and slow: arrays and
 * maps, every rule a small named function. Cleaning is left out: it only forgets rows whose effect
 * is already complete, so it changes no outcome the model reports.
 */
import { accumulate } from "./accumulate.js"
import { calculate } from "./calculate.js"
import { executeChunks, executeIndex, type RunSettings, type StreamStates } from "./execute.js"
import { indexByStream } from "./logView.js"
import type { ModelInput, ModelOutput, ModelState } from "./types.js"

export type { ModelInput, ModelOutput, ModelState } from "./types.js"

const runSettings = (input: ModelInput): RunSettings => ({
  sp: input.scavengePoint,
  unsafeIgnoreHardDeletes: input.unsafeIgnoreHardDeletes === true
})

export const scavengeModel = (input: ModelInput): ModelOutput => {
  const run = runSettings(input)
  const index = indexByStream(input.records, input.prior?.removedFromIndex ?? new Set())
  const accumulated = accumulate(input, index)
  const weights = accumulated.weights
  const originals = calculate(
    accumulated.originals,
    index,
    input.scavengePoint,
    input.chunkSize,
    accumulated.chunkTimeRanges,
    weights
  )
  const streams: StreamStates = { originals, metastreams: accumulated.metastreams }
  const chunks = executeChunks(input.records, input.chunkSize, streams, run, weights, input.prior, -1)
  const { keptInIndex, removedFromIndex } = executeIndex(input.records, streams, run, input.prior)
  const state: ModelState = {
    scavengePointPosition: input.scavengePoint.position,
    originals,
    metastreams: accumulated.metastreams,
    chunkTimeRanges: accumulated.chunkTimeRanges,
    pendingWeights: chunks.pendingWeights,
    removedFromLog: chunks.removedFromLog,
    removedFromIndex
  }
  return { keptInLog: chunks.keptInLog, keptInIndex, weights, state }
}

export interface ThresholdExecution {
  /** Positions that stay in the chunks. */
  readonly keptInLog: ReadonlySet<number>
  /** `output.state` as it is after executing only those chunks: pass it as `prior` to the next run. */
  readonly state: ModelState
}

/**
 * The run of `output` (computed by `scavengeModel(input)`) when only chunks with weight (carried from
 * `input.prior` + this run's) strictly greater than `threshold` are executed. Defaults to the SP's
 * threshold. The index result does not depend on the threshold.
 */
export const executeWithThreshold = (
  input: ModelInput,
  output: ModelOutput,
  threshold: number = input.scavengePoint.threshold
): ThresholdExecution => {
  const streams: StreamStates = { originals: output.state.originals, metastreams: output.state.metastreams }
  const chunks = executeChunks(
    input.records,
    input.chunkSize,
    streams,
    runSettings(input),
    output.weights,
    input.prior,
    threshold
  )
  return {
    keptInLog: chunks.keptInLog,
    state: { ...output.state, removedFromLog: chunks.removedFromLog, pendingWeights: chunks.pendingWeights }
  }
}

/** Which records survive when only chunks with weight > threshold are executed (threshold 0 / > 0). */
export const keptWithThreshold = (input: ModelInput, output: ModelOutput, threshold: number): ReadonlySet<number> =>
  executeWithThreshold(input, output, threshold).keptInLog
