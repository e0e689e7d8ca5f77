/**
 * Shared helpers for the security tests: a real EventStore on a fresh in-memory disk (tiny chunks so the
 * log rolls over inside tests), and the Users service over it with cheap password hashes.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import { MemoryDisk } from "@vellum/platform"
import {
  defaultStorageConfig,
  EventStore,
  make as makeEventStore,
  type EventStoreService,
  type StorageConfig
} from "@vellum/storage"
import { makeUsers, testSecurityConfig, Users, type SecurityConfig, type UsersService } from "../src/index.js"

export const storageConfig: StorageConfig = {
  ...defaultStorageConfig("/db"),
  chunkSize: 64 * 1024,
  memtableMaxEntries: 64,
  preallocateChunks: false
}

/** EventStore on a fresh in-memory disk. */
export const storeLayer: Layer.Layer<EventStore> = EventStore.layer(storageConfig).pipe(
  Layer.provide(MemoryDisk.layer()),
  Layer.orDie
)

/** EventStore + Users (cheap hashes unless overridden). */
export const usersStack = (config: Partial<SecurityConfig> = {}): Layer.Layer<Users | EventStore> =>
  Layer.provideMerge(Layer.orDie(Users.layer({ ...testSecurityConfig, ...config })), storeLayer)

export interface Node {
  readonly store: EventStoreService
  readonly users: UsersService
  /** Closes the store and the users service and opens both again on the same disk. */
  readonly restart: Effect.Effect<void>
}

/** A store and its Users service on one in-memory disk that can be restarted. */
export const openNode = (config: Partial<SecurityConfig> = {}): Effect.Effect<Node, never, Scope.Scope> =>
  Effect.gen(function* () {
    const disk = new MemoryDisk()
    const open = Effect.gen(function* () {
      const scope = yield* Scope.make()
      const store = yield* makeEventStore(storageConfig).pipe(
        Effect.provide(MemoryDisk.layer(disk)),
        Scope.extend(scope),
        Effect.orDie
      )
      const users = yield* makeUsers({ ...testSecurityConfig, ...config }).pipe(
        Effect.provideService(EventStore, store),
        Scope.extend(scope),
        Effect.orDie
      )
      return { scope, store, users }
    })
    let current = yield* open
    yield* Effect.addFinalizer(() => Scope.close(current.scope, Exit.void))
    return {
      get store() {
        return current.store
      },
      get users() {
        return current.users
      },
      restart: Effect.gen(function* () {
        yield* Scope.close(current.scope, Exit.void)
        current = yield* open
      })
    }
  })

export const uuid = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

export const jsonEvent = (n: number, type: string, value: unknown) => ({
  eventId: uuid(n),
  eventType: type,
  isJson: true,
  data: Buffer.from(JSON.stringify(value)),
  metadata: new Uint8Array(0)
})

/** The tag of a failed effect's error ("Success" when it succeeded). */
export const outcome = <A, E extends { readonly _tag: string }, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<string, never, R> => Effect.match(effect, { onFailure: (e) => e._tag, onSuccess: () => "Success" })
