/**
 * The ceiling of the closed-loop append benchmark without any storage: `appenders` fibers, each building
 * its events as the storage benchmark does and waiting for one `Effect.async` answered by a batching fiber
 * (one event-loop turn per round, no I/O, no planning, no encoding). This is what Effect's fiber hand-off
 * and the benchmark's own loop cost per append on this machine, measured in the same run: the storage
 * figure at 64 × 1 cannot exceed it.
 */
import { Effect, Fiber } from "effect"
import { now } from "./benchSupport.js"

export const handOffCeiling = (appenders: number, appendsPerAppender: number, makeEvents: (i: number) => unknown) =>
  Effect.gen(function* () {
    let queue: Array<() => void> = []
    let wake: (() => void) | undefined
    const take = Effect.async<Array<() => void>>((resume) => {
      const go = () => {
        const batch = queue
        queue = []
        resume(Effect.succeed(batch))
      }
      if (queue.length > 0) go()
      else
        wake = () => {
          wake = undefined
          go()
        }
    })
    // One event-loop turn per round stands in for the durable write.
    const turn = Effect.async<void>((resume) => {
      setImmediate(() => resume(Effect.void))
    })
    const batcher = yield* Effect.fork(
      Effect.forever(
        Effect.gen(function* () {
          const batch = yield* take
          yield* turn
          for (const answer of batch) answer()
        })
      )
    )
    const handOff = (_stream: string, _events: unknown) =>
      Effect.async<number>((resume) => {
        queue.push(() => resume(Effect.succeed(0)))
        if (wake !== undefined) wake()
      })
    const start = now()
    yield* Effect.forEach(
      Array.from({ length: appenders }, (_, a) => a),
      (a) =>
        Effect.gen(function* () {
          for (let k = 0; k < appendsPerAppender; k++)
            yield* handOff(`stream-${a}-${k % 100}`, makeEvents(a * appendsPerAppender + k))
        }),
      { concurrency: "unbounded", discard: true }
    )
    const secs = now() - start
    yield* Fiber.interrupt(batcher)
    return (appenders * appendsPerAppender) / secs
  })
