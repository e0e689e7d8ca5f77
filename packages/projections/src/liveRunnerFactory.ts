/**
 * The node's runner factory: it puts the pieces together. A user script is compiled in its own sandbox
 * (`execution/`), a system projection gets its native handler (`engine/systemHandler`); either is read by a
 * source reader (`sources/`) and run by the engine's runner, which writes through the exactly-once output
 * writer (`engine/output/`).
 */
import { Effect, Either, Layer, type Scope } from "effect"
import { EventStore, type EventStoreService } from "@vellum/storage"
import { readStoredPartition } from "./engine/checkpointStreams.js"
import { makeOutputWriter } from "./engine/output/makeOutputWriter.js"
import { startProjectionRunner } from "./engine/startProjectionRunner.js"
import { systemProjectionHandler, systemSourceDefinition } from "./engine/systemHandler.js"
import { loadScriptProjection } from "./execution/loadScriptProjection.js"
import type { SourceDefinition } from "./language/SourceDefinition.js"
import { makeSourceReader } from "./sources/makeSourceReader.js"
import { readEvents } from "./sources/readEvents.js"
import { SystemProjections } from "./system/index.js"
import type { ProjectionsSettings } from "./service/Projections.js"
import { ProjectionRunnerFactory } from "./service/ProjectionRunnerFactory.js"
import type { PrepareFault, QuerySpec, RunnerFactory } from "./service/RunnerFactory.js"
import type { ProjectionHandler } from "./engine/ProjectionHandler.js"

const fault = (reason: string): PrepareFault => ({ _tag: "PrepareFault", reason })

/** The reference accepts only JavaScript for user projections (`type=JS`, any case). */
const unsupportedType = (query: QuerySpec): PrepareFault | undefined =>
  query.system || query.handlerType.toUpperCase() === "JS"
    ? undefined
    : fault(`'${query.handlerType}' handler type is not supported`)

interface Loaded {
  readonly definition: SourceDefinition
  readonly handler: ProjectionHandler
  /** System projections read every event as it lies; user projections never see invalid JSON. */
  readonly validateContent: boolean
}

export const makeLiveRunnerFactory = (store: EventStoreService, settings: ProjectionsSettings): RunnerFactory => {
  const writer = store.leaderOnly ?? store
  const output = makeOutputWriter({ store, writer })

  const load = (query: QuerySpec): Effect.Effect<Loaded, PrepareFault, Scope.Scope> =>
    Effect.suspend((): Effect.Effect<Loaded, PrepareFault, Scope.Scope> => {
      const refused = unsupportedType(query)
      if (refused !== undefined) return Effect.fail(refused)
      if (query.system) {
        const system = SystemProjections.find((p) => p.name === query.name)
        if (system === undefined) return Effect.fail(fault(`'${query.name}' is not a system projection`))
        const handler = systemProjectionHandler(system, query.query)
        return Either.isLeft(handler)
          ? Effect.fail(fault(handler.left))
          : Effect.succeed({
              definition: systemSourceDefinition(system),
              handler: handler.right,
              validateContent: false
            })
      }
      return Effect.mapBoth(
        loadScriptProjection(query.name, query.query, {
          compilationTimeoutMillis: settings.compilationTimeoutMillis,
          executionTimeoutMillis: query.executionTimeoutMillis
        }),
        {
          onFailure: (error) => fault(error.message),
          onSuccess: ({ definition, handler }): Loaded => ({ definition, handler, validateContent: true })
        }
      )
    })

  return {
    prepare: (query) => Effect.scoped(Effect.map(load(query), (loaded) => loaded.definition)),
    start: (query, spec) =>
      Effect.gen(function* () {
        const loaded = yield* load(query)
        const source = makeSourceReader(store, loaded.definition, {
          validateContent: loaded.validateContent,
          deletions: loaded.definition.byStream && loaded.definition.options.handlesDeletedNotifications
        })
        return yield* startProjectionRunner(spec, { store, writer, source, handler: loaded.handler, output })
      }),
    storedPartition: (spec, partition) => readStoredPartition(store, spec, partition),
    // A read that fails on the disk is reported as the request's fault, with the store's reason.
    readEvents: (request) =>
      Effect.mapError(readEvents(store, request), (error) =>
        error._tag === "PrepareFault" ? error : fault(`The events could not be read: ${error.message}`)
      )
  }
}

/** The factory over the node's store, for `ProjectionsLayer.layer`. */
export const liveRunnerFactoryLayer = (
  settings: ProjectionsSettings
): Layer.Layer<ProjectionRunnerFactory, never, EventStore> =>
  Layer.effect(
    ProjectionRunnerFactory,
    Effect.map(EventStore, (store) => makeLiveRunnerFactory(store, settings))
  )
