/**
 * The projections subsystem of a node: every projection, run on the leader (a single node always leads). The
 * HTTP routes and the node's figures use only this interface; `ProjectionsLayer.ts` builds it.
 *
 * On a node that does not lead, every call answers `NotReady` (the HTTP layer sends management requests to
 * the leader first, as the reference does). Commands answer once the transition they ask for is done.
 */
import { Context, type Effect } from "effect"
import type { CheckpointTag } from "../persisted/checkpointTag.js"
import type { ProjectionMode, RunAs } from "../persisted/definitionRecord.js"
import type { RunnerStatistics } from "../engine/ProjectionRunner.js"

/** `--run-projections`: which projections run at all. */
export type RunProjections = "None" | "System" | "All"

export interface ProjectionsSettings {
  readonly runProjections: RunProjections
  /** `--start-standard-projections` (or `--dev`): the system projections are enabled when first created. */
  readonly startStandardProjections: boolean
  /** Milliseconds the top level of a script may take (`--projection-compilation-timeout`, 500). */
  readonly compilationTimeoutMillis: number
  /** Milliseconds each entry into a handler may take (`--projection-execution-timeout`, 250). */
  readonly executionTimeoutMillis: number
  /** State plus result text length above which a projection faults (`--max-projection-state-size`). */
  readonly maxStateSizeBytes: number
  /** A transient query not looked at for this long is deleted (`--projections-query-expiry`, 5 minutes). */
  readonly queryExpiryMillis: number
  /** How often the node's leadership is looked at. */
  readonly leadershipCheckMillis: number
}

export const defaultProjectionsSettings: ProjectionsSettings = {
  runProjections: "System",
  startStandardProjections: false,
  compilationTimeoutMillis: 500,
  executionTimeoutMillis: 250,
  maxStateSizeBytes: 16 * 1024 * 1024,
  queryExpiryMillis: 5 * 60_000,
  leadershipCheckMillis: 250
}

/** Who asks: `operator` = in `$admins` or `$ops` (may manage one-time and continuous projections). */
export interface Requester {
  readonly runAs: RunAs
  readonly operator: boolean
}

/** The list filters of `GET /projections/{mode}`. */
export type ProjectionListFilter = "Any" | "AllNonTransient" | ProjectionMode

/** One projection's statistics, as `GET /projection/{name}` shows it (the HTTP layer adds the URLs). */
export interface ProjectionStatistics {
  readonly name: string
  readonly mode: ProjectionMode
  /** The reference's status text: `Running`, `Stopped`, `Completed`, `Faulted (Enabled)`, `Preparing`, ... */
  readonly status: string
  /** The fault's reason when faulted, else "". */
  readonly stateReason: string
  readonly enabled: boolean
  readonly version: number
  readonly epoch: number
  /** The root result stream when the script names one (`outputTo`, `resultStreamName`), else null. */
  readonly resultStreamName: string | null
  /** The runner's figures; positions rendered by the HTTP layer (`checkpointTagText`). */
  readonly runner: RunnerStatistics
}

/** What a management call ends with; the HTTP layer maps each to the reference's status and body. */
export type ProjectionsOutcome<A> =
  | { readonly _tag: "Ok"; readonly value: A }
  /** 404 `Not Found`. */
  | { readonly _tag: "NotFound" }
  /** 401 `Not authorized`. */
  | { readonly _tag: "NotAuthorized" }
  /** 409 with the reason (`Duplicate projection names : p`). */
  | { readonly _tag: "Conflict"; readonly reason: string }
  /** 400 with the reason (a config body the reference refuses). */
  | { readonly _tag: "BadRequest"; readonly reason: string }
  /** 500 with the reason, as the reference answers (`Cannot delete a projection that hasn't been stopped or faulted.`). */
  | { readonly _tag: "OperationFailed"; readonly reason: string }
  /** 503: this node does not lead, or the subsystem is still starting. */
  | { readonly _tag: "NotReady"; readonly reason: string }

export interface CreateProjection {
  readonly mode: ProjectionMode
  /** Empty for a one-time or transient projection: a random GUID is given. */
  readonly name: string
  readonly query: string
  /** `type=`: only `JS` (any case) is accepted; anything else faults the projection as the reference does. */
  readonly handlerType: string
  readonly enabled: boolean
  readonly emitEnabled: boolean
  readonly checkpointsEnabled: boolean
  readonly trackEmittedStreams: boolean
}

/** The config document of `GET/PUT /projection/{name}/config` (every field; the HTTP layer omits defaults). */
export interface ProjectionConfig {
  readonly emitEnabled: boolean
  readonly trackEmittedStreams: boolean
  readonly checkpointAfterMs: number
  readonly checkpointHandledThreshold: number
  readonly checkpointUnhandledBytesThreshold: number
  readonly pendingEventsThreshold: number
  readonly maxWriteBatchLength: number
  readonly maxAllowedWritesInFlight: number
  /** null: the server's `--projection-execution-timeout`. */
  readonly projectionExecutionTimeout: number | null
}

/** `GET /projection/{name}/query`, with or without `?config=yes`. */
export interface ProjectionQuery {
  readonly name: string
  readonly query: string
  readonly mode: ProjectionMode
  readonly emitEnabled: boolean
  readonly trackEmittedStreams: boolean
  readonly checkpointsEnabled: boolean
  /** The source definition JSON value; undefined when the script faulted before it had one. */
  readonly definition: unknown
  /** The effective root result stream ("" when there is no definition). */
  readonly resultStreamName: string
}

export interface StateView {
  /** The text to answer with ("" when none). */
  readonly text: string
  /** For the `Kurrent-Position`/`ES-Position` headers; undefined when none is to be sent. */
  readonly position: CheckpointTag | undefined
}

export type ProjectionCommand = "enable" | "disable" | "reset" | "abort"

export interface DeleteOptions {
  readonly deleteStateStream: boolean
  readonly deleteCheckpointStream: boolean
  readonly deleteEmittedStreams: boolean
}

/** `POST /projections/read-events`. */
export interface ReadEventsRequest {
  /** A source definition (the `definition` of a query's config). */
  readonly query: unknown
  /** Position JSON (`{"$c":0,"$p":-1}`, `{"$s":{"stream":-1}}`, older names accepted). */
  readonly position: unknown
  readonly maxEvents: number
}

export interface ReadEventsItem {
  readonly eventStreamId: string
  readonly eventNumber: number
  readonly eventType: string
  readonly data: string
  readonly metadata: string
  readonly linkMetadata: string
  readonly isJson: boolean
  readonly readerPosition: CheckpointTag
}

export interface ReadEventsResult {
  readonly readerPosition: CheckpointTag
  readonly events: ReadonlyArray<ReadEventsItem>
}

export interface ProjectionsService {
  /** Whether the subsystem runs on this node at all (`--run-projections` is not `None`); `/info` shows it. */
  readonly enabled: boolean
  readonly list: (
    filter: ProjectionListFilter
  ) => Effect.Effect<ProjectionsOutcome<ReadonlyArray<ProjectionStatistics>>>
  readonly statistics: (name: string) => Effect.Effect<ProjectionsOutcome<ProjectionStatistics>>
  /** The created projection's name (201 also when its script faulted: it then exists as `Faulted`). */
  readonly create: (request: CreateProjection, by: Requester) => Effect.Effect<ProjectionsOutcome<string>>
  readonly command: (
    name: string,
    command: ProjectionCommand,
    by: Requester
  ) => Effect.Effect<ProjectionsOutcome<string>>
  readonly query: (name: string) => Effect.Effect<ProjectionsOutcome<ProjectionQuery>>
  /** `emitEnabled` undefined: left as it is. */
  readonly updateQuery: (
    name: string,
    query: string,
    emitEnabled: boolean | undefined,
    by: Requester
  ) => Effect.Effect<ProjectionsOutcome<string>>
  readonly config: (name: string, by: Requester) => Effect.Effect<ProjectionsOutcome<ProjectionConfig>>
  readonly updateConfig: (
    name: string,
    config: ProjectionConfig,
    by: Requester
  ) => Effect.Effect<ProjectionsOutcome<string>>
  readonly delete: (name: string, options: DeleteOptions, by: Requester) => Effect.Effect<ProjectionsOutcome<string>>
  /** `partition` "" is the root (the shared state for bi-state). */
  readonly state: (name: string, partition: string) => Effect.Effect<ProjectionsOutcome<StateView>>
  readonly result: (name: string, partition: string) => Effect.Effect<ProjectionsOutcome<StateView>>
  readonly readEvents: (
    request: ReadEventsRequest,
    by: Requester
  ) => Effect.Effect<ProjectionsOutcome<ReadEventsResult>>
  /** `POST /projections/restart`: stops every projection and starts the subsystem again. */
  readonly restart: (by: Requester) => Effect.Effect<ProjectionsOutcome<void>>
  /** Figures for `/stats` and `/metrics` without going through the outcome (empty on a node that does not lead). */
  readonly snapshot: () => ReadonlyArray<ProjectionStatistics>
}

export class Projections extends Context.Tag("@vellum/projections/Projections")<Projections, ProjectionsService>() {}
