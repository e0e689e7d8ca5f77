/**
 * How the management service gets running projections without knowing the sandbox, the sources or the engine:
 * it prepares a query (compile and validate, for create, update and `?config=yes`) and starts runners. The
 * node's factory (`liveRunnerFactory.ts`) puts the pieces together; the service's tests give a fake.
 */
import type { Effect, Scope } from "effect"
import type { ProjectionRunner, PartitionView, RunnerSpec } from "../engine/ProjectionRunner.js"
import type { SourceDefinition } from "../language/SourceDefinition.js"
import type { ReadEventsRequest, ReadEventsResult } from "./Projections.js"

/** Why a projection cannot run: the reason `stateReason` shows (a compile or start fault's message). */
export interface PrepareFault {
  readonly _tag: "PrepareFault"
  readonly reason: string
}

/** What a projection's query is, for a system projection (its name) or a user script. */
export interface QuerySpec {
  readonly name: string
  readonly query: string
  /** `JS` for user scripts; system projections give their `native:` type. */
  readonly handlerType: string
  /** One of the five system projections: its query is a config text, and it runs natively. */
  readonly system: boolean
  /** The execution timeout in milliseconds for this projection. */
  readonly executionTimeoutMillis: number
}

export interface RunnerFactory {
  /** Compiles (in a sandbox freed at once) and validates: the source definition, or the fault. */
  readonly prepare: (query: QuerySpec) => Effect.Effect<SourceDefinition, PrepareFault>
  /**
   * Compiles again, validates, and starts the runner in `scope`'s lifetime (closing the scope frees the
   * sandbox). `spec.definition` is the one `prepare` gave.
   */
  readonly start: (query: QuerySpec, spec: RunnerSpec) => Effect.Effect<ProjectionRunner, PrepareFault, Scope.Scope>
  /** A stopped projection's partition state, read from its checkpoint streams. */
  readonly storedPartition: (spec: RunnerSpec, partition: string) => Effect.Effect<PartitionView>
  /** `POST /projections/read-events`; a definition or position that cannot be read is a `PrepareFault`. */
  readonly readEvents: (request: ReadEventsRequest) => Effect.Effect<ReadEventsResult, PrepareFault>
}
