/**
 * The prober: liveness after disk errors, and the operator who frees disk space.
 *
 * A node refuses writes after a failed write until it has recovered on its own (a full disk: until space is
 * freed); it must then take writes again without a restart. Every few client operations the prober:
 *
 * - on a disk with a size limit, waits until the disk refuses a write for lack of space, lets it
 *   stay full for a few more checks, then frees the space (lifts the limit) — and, half the time once the
 *   node took writes again, sets a new limit a little above what is used, so the disk fills up again later;
 * - after freeing space, or when clients hold indeterminate operations, appends to a `probe` stream until
 *   the append is acknowledged, retrying on the simulated clock: no acknowledged append within 60 s
 *   (simulated) fails the run (liveness);
 * - once the probe is acknowledged, every indeterminate operation answered before it began is settled (the
 *   writer handles commands in order and recovers before it takes the next), so it is reconciled with the
 *   store now (`reconcileSettled`) and the clients may use those streams again.
 *
 * Probe events are not JSON, so the `$all` checks take them for what they are: writes of nobody's stream.
 */
import { Clock, Duration, Effect } from "effect"
import type { MemoryDisk, Prng } from "@vellum/platform"
import { randomUuid, type EventStoreService } from "@vellum/storage"
import { reconcileSettled } from "./checkers.js"
import type { Auditor, SimClient } from "./client.js"
import type { OpsTicker } from "./opsTicker.js"

/** How long, in simulated time, the node may take to accept a write once the disk works again. */
export const LivenessDeadlineMillis = 60_000

export interface ProberContext {
  readonly store: EventStoreService
  readonly disk: MemoryDisk
  readonly auditor: Auditor
  readonly clients: ReadonlyArray<SimClient>
  readonly prng: Prng
}

/** What the driver needs to know: a probe is running (the lifetime waits for its verdict). */
export interface ProberState {
  probing: boolean
}

const hasSettledPending = (clients: ReadonlyArray<SimClient>): boolean =>
  clients.some((c) => [...c.pending.values()].some((p) => p.settledBy !== Number.POSITIVE_INFINITY))

/** Appends until acknowledged or past the deadline; then reconciles what the acknowledgement settled. */
const probe = (ctx: ProberContext, state: ProberState, freedSpace: boolean) =>
  Effect.gen(function* () {
    const { auditor } = ctx
    const why = freedSpace ? "after space was freed" : "to settle indeterminate operations"
    state.probing = true
    const settledBefore = auditor.answered
    const start = yield* Clock.currentTimeMillis
    for (;;) {
      const event = {
        eventId: yield* randomUuid,
        eventType: "probe",
        isJson: false,
        data: Buffer.from("probe"),
        metadata: Buffer.alloc(0)
      }
      const answer = yield* Effect.either(ctx.store.append("probe", -2, [event]))
      const waited = (yield* Clock.currentTimeMillis) - start
      if (answer._tag === "Right") {
        auditor.trace(`probe (${why}) acknowledged after ${waited} ms`)
        if (freedSpace) {
          auditor.healed++
          auditor.coverage.hit("disk.full.healed")
        }
        break
      }
      if (waited > LivenessDeadlineMillis) {
        state.probing = false
        return auditor.fail(
          `liveness: no append was acknowledged within ${LivenessDeadlineMillis / 1000} s (simulated) ${why}; the last answer: ${answer.left._tag} ${answer.left.message}`
        )
      }
      yield* Effect.sleep(Duration.millis(250))
    }
    yield* reconcileSettled(ctx.store, auditor, ctx.clients, settledBefore)
    state.probing = false
  })

/** The prober of one lifetime: acts every few client operations until the clients are done. */
export const runProber = (ctx: ProberContext, ticker: OpsTicker, state: ProberState): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { auditor, disk, prng } = ctx
    /** Checks left before an operator frees space on a full disk (undefined: not full yet). */
    let fullFor: number | undefined
    /** The disk's count of writes refused for lack of space, when last looked at. */
    let diskFullErrors = disk.stats.diskFullErrors
    while (!ticker.finished && auditor.failure === undefined) {
      yield* ticker.wait(prng.int(3, 20))
      if (ticker.finished || auditor.failure !== undefined) return
      if (disk.capacityBytes !== undefined) {
        // Full once the disk has refused a write for lack of space (the store may look healthy between two
        // refusals: its recovery needs no space, the next write does).
        const full = disk.stats.diskFullErrors > diskFullErrors
        diskFullErrors = disk.stats.diskFullErrors
        if (fullFor === undefined && !full) continue
        fullFor ??= prng.int(1, 6)
        auditor.trace(`disk full: writes refused (${fullFor} checks to go)`)
        if (fullFor-- > 0) continue
        fullFor = undefined
        disk.capacityBytes = undefined
        auditor.trace("space freed")
        yield* probe(ctx, state, true)
        if (auditor.failure === undefined && prng.chance(0.5)) {
          disk.capacityBytes = disk.totalBytes() + prng.int(2_000, 30_000)
          auditor.trace(`disk limit set again at ${disk.capacityBytes} bytes`)
        }
        continue
      }
      if (hasSettledPending(ctx.clients)) yield* probe(ctx, state, false)
    }
  })
