/**
 * The election service: runs the pure state machine (Election.ts) on a node. It keeps the state, feeds it
 * the clock (a tick at the deadline, and at least every heartbeat interval) and the messages that arrive,
 * syncs each vote promise (PromiseFile.ts) before it sends anything the step produced, and sends each
 * message as a one-way request over the `Network`. One step runs at a time.
 */
import { Clock, Effect, Random, Ref, type Scope } from "effect"
import type { NetworkService, PeerAddress } from "@vellum/platform"
import * as Election from "./Election.js"
import type { PromiseFile } from "./PromiseFile.js"

export interface ElectionNode {
  /** How far this node's log reaches now. */
  readonly tip: Effect.Effect<Election.LogTip>
  /** This node's priority rank among the voters (0: the highest priority). */
  readonly priorityRank: Effect.Effect<number>
  /** Whether this node is a new machine that must not vote or stand yet (Election.ElectionContext). */
  readonly newcomer?: Effect.Effect<{ readonly othersHaveEpochs: boolean } | undefined>
  /** Where a voter is reached. */
  readonly addressOf: (voter: string) => PeerAddress
  /** Called once a term is won (the node then writes its epoch), before any other step runs. */
  readonly onElected?: (term: number) => Effect.Effect<void>
  /** Called after every step that changed the view (a plain callback: it runs inside the step). */
  readonly onViewChange?: (view: ElectionView) => void
}

export interface ElectionView {
  readonly term: number
  readonly role: Election.ElectionRole["_tag"]
  /** The leader this node knows of (itself when it leads). */
  readonly leader: string | undefined
}

export interface ElectionService {
  readonly view: Effect.Effect<ElectionView>
  /** A leader steps down and hands the next election to `successor`. */
  readonly resign: (successor: string | undefined) => Effect.Effect<void>
}

const encode = (message: Election.ElectionMessage): Uint8Array => new TextEncoder().encode(JSON.stringify(message))

const decode = (bytes: Uint8Array): Election.ElectionMessage | undefined => {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as { _tag?: unknown; term?: unknown }
    return typeof value._tag === "string" && typeof value.term === "number"
      ? (value as Election.ElectionMessage)
      : undefined
  } catch {
    return undefined
  }
}

const viewOf = (settings: Election.ElectionSettings, state: Election.ElectionState): ElectionView => ({
  term: state.promise.term,
  role: state.role._tag,
  leader: state.role._tag === "Leader" ? settings.self : state.role._tag === "Follower" ? state.role.leader : undefined
})

/** Starts the election service for the scope's life. */
export const make = (
  settings: Election.ElectionSettings,
  network: NetworkService,
  promises: PromiseFile,
  node: ElectionNode
): Effect.Effect<ElectionService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const context = Effect.gen(function* () {
      const draw = yield* Random.next
      const ctx: Election.ElectionContext = {
        now: yield* Clock.currentTimeMillis,
        tip: yield* node.tip,
        priorityRank: yield* node.priorityRank,
        random: () => draw
      }
      const newcomer = node.newcomer === undefined ? undefined : yield* node.newcomer
      return newcomer === undefined ? ctx : { ...ctx, newcomer }
    })
    const state = yield* Ref.make(Election.startElection(settings, promises.promise, yield* context))
    const lock = yield* Effect.makeSemaphore(1)
    const scope = yield* Effect.scope

    /** Runs one step of the machine: the promise synced first, then the messages sent. */
    const run = (decide: (current: Election.ElectionState, ctx: Election.ElectionContext) => Election.ElectionStep) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const step = decide(yield* Ref.get(state), yield* context)
          if (step.persist !== undefined) {
            const kept = yield* Effect.either(promises.keep(step.persist))
            // A promise that is not on disk is not given: the step is dropped, as if never taken.
            if (kept._tag === "Left") return
          }
          const before = viewOf(settings, yield* Ref.get(state))
          yield* Ref.set(state, step.state)
          const after = viewOf(settings, step.state)
          if (
            node.onViewChange !== undefined &&
            (before.term !== after.term || before.role !== after.role || before.leader !== after.leader)
          )
            node.onViewChange(after)
          if (step.elected !== undefined && node.onElected !== undefined) yield* node.onElected(step.elected)
          for (const out of step.send) {
            yield* Effect.forkIn(
              Effect.ignore(network.request(node.addressOf(out.to), encode(out.message), settings.heartbeatMillis * 5)),
              scope
            )
          }
        })
      )

    yield* network
      .serve({
        onRequest: (_from, bytes) => {
          const message = decode(bytes)
          if (message === undefined) return Effect.die("malformed election message")
          return Effect.as(
            run((current, ctx) => Election.receive(settings, current, message, ctx)),
            new Uint8Array(0)
          )
        },
        onChannel: (channel) => channel.close
      })
      .pipe(Effect.orDie)

    // The clock: a tick at the deadline, and at least every heartbeat interval (a deadline moves earlier
    // when the node becomes leader).
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const { deadline } = yield* Ref.get(state)
          yield* Effect.sleep(Math.max(1, Math.min(deadline - now, settings.heartbeatMillis)))
          yield* run((current, ctx) => Election.tick(settings, current, ctx))
        })
      )
    )

    const service: ElectionService = {
      view: Effect.map(Ref.get(state), (s) => viewOf(settings, s)),
      resign: (successor) => run((current, ctx) => Election.resign(settings, current, successor, ctx))
    }
    return service
  })
