/**
 * A test double of the projections management service for the HTTP routes' tests: every call is recorded
 * with its arguments, and each operation answers what the test set for it (`answers`), or a plausible
 * success: the name it was given, a sample projection's statistics, query, config, state and read.
 */
import { Effect } from "effect"
import type { RunnerStatistics } from "../src/engine/ProjectionRunner.js"
import { emptyDefinition } from "./languageSupport.js"
import type {
  ProjectionConfig,
  ProjectionQuery,
  ProjectionStatistics,
  ProjectionsOutcome,
  ProjectionsService,
  ReadEventsResult,
  StateView
} from "../src/service/Projections.js"

export const runnerStatistics = (overrides: Partial<RunnerStatistics> = {}): RunnerStatistics => ({
  status: "Running",
  paused: false,
  writingResults: false,
  position: { kind: "position", phase: 0, commit: 1200, prepare: 1100 },
  lastCheckpoint: { kind: "position", phase: 0, commit: 800, prepare: 700 },
  progress: 100,
  eventsProcessedAfterRestart: 42,
  partitionsCached: 3,
  bufferedEvents: 4,
  readsInProgress: 1,
  writesInProgress: 2,
  writePendingEventsBeforeCheckpoint: 5,
  writePendingEventsAfterCheckpoint: 6,
  checkpointStatus: "",
  coreProcessingTime: 17,
  lagBytes: 900,
  lagEvents: 7,
  lagMilliseconds: 250,
  stateBytes: 33,
  faultReason: undefined,
  ...overrides
})

export const sampleStatistics = (
  name = "orders",
  overrides: Partial<Omit<ProjectionStatistics, "runner">> = {},
  runner: Partial<RunnerStatistics> = {}
): ProjectionStatistics => ({
  name,
  mode: "Continuous",
  status: "Running",
  stateReason: "",
  enabled: true,
  version: 3,
  epoch: -1,
  resultStreamName: null,
  runner: runnerStatistics(runner),
  ...overrides
})

export const sampleQuery = (overrides: Partial<ProjectionQuery> = {}): ProjectionQuery => ({
  name: "orders",
  query: "fromAll().when({$any: function (s, e) { return s }})\n",
  mode: "Continuous",
  emitEnabled: true,
  trackEmittedStreams: false,
  checkpointsEnabled: true,
  // `fromAll().when({…})`
  definition: { ...emptyDefinition, allStreams: true, options: { ...emptyDefinition.options, definesFold: true } },
  resultStreamName: "$projections-orders-result",
  ...overrides
})

export const sampleConfig = (overrides: Partial<ProjectionConfig> = {}): ProjectionConfig => ({
  emitEnabled: true,
  trackEmittedStreams: false,
  checkpointAfterMs: 0,
  checkpointHandledThreshold: 4000,
  checkpointUnhandledBytesThreshold: 10_000_000,
  pendingEventsThreshold: 5000,
  maxWriteBatchLength: 500,
  maxAllowedWritesInFlight: 0,
  projectionExecutionTimeout: null,
  ...overrides
})

export const sampleState: StateView = {
  text: '{"count":2}',
  position: { kind: "streams", phase: 0, streams: [["orders-1", 4]] }
}

export const sampleRead: ReadEventsResult = {
  readerPosition: { kind: "position", phase: 0, commit: 300, prepare: 200 },
  events: []
}

type Operation = Exclude<keyof ProjectionsService, "enabled" | "snapshot">
type Answer<K extends Operation> = ReturnType<ProjectionsService[K]> extends Effect.Effect<infer A> ? A : never

export interface RecordedCall {
  readonly op: Operation
  readonly args: ReadonlyArray<unknown>
}

export interface FakeProjections {
  readonly service: ProjectionsService
  readonly calls: Array<RecordedCall>
  /** What an operation answers next (until changed); unset: a success. */
  readonly answers: { [K in Operation]?: Answer<K> }
  /** The arguments of the only call made. */
  readonly onlyCall: () => RecordedCall
}

const ok = <A>(value: A): ProjectionsOutcome<A> => ({ _tag: "Ok", value })

export const makeFakeProjections = (): FakeProjections => {
  const calls: Array<RecordedCall> = []
  const answers: FakeProjections["answers"] = {}
  const call =
    <K extends Operation>(op: K, fallback: (...args: ReadonlyArray<any>) => Answer<K>) =>
    (...args: ReadonlyArray<any>) =>
      Effect.sync(() => {
        calls.push({ op, args })
        return answers[op] ?? fallback(...args)
      })
  const service = {
    enabled: true,
    list: call("list", () => ok([sampleStatistics()])),
    statistics: call("statistics", (name: string) => ok(sampleStatistics(name))),
    create: call("create", (request: { name: string }) => ok(request.name === "" ? "generated-name" : request.name)),
    command: call("command", (name: string) => ok(name)),
    query: call("query", (name: string) => ok(sampleQuery({ name }))),
    updateQuery: call("updateQuery", (name: string) => ok(name)),
    config: call("config", () => ok(sampleConfig())),
    updateConfig: call("updateConfig", (name: string) => ok(name)),
    delete: call("delete", (name: string) => ok(name)),
    state: call("state", () => ok(sampleState)),
    result: call("result", () => ok(sampleState)),
    readEvents: call("readEvents", () => ok(sampleRead)),
    restart: call("restart", () => ok(undefined)),
    snapshot: () => []
  } as unknown as ProjectionsService
  return {
    service,
    calls,
    answers,
    onlyCall: () => {
      if (calls.length !== 1) throw new Error(`expected one call, got ${calls.map((c) => c.op).join(", ") || "none"}`)
      return calls[0]!
    }
  }
}
