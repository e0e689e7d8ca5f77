/**
 * Expected-version rules and append results, including the
 * worked examples of the upstream tests, run with the real hash and with every stream colliding.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { ExpectedVersion, type EventStoreService } from "../src/index.js"
import {
  Hashes,
  Reopens,
  ev,
  evs,
  expectWev,
  json,
  openDb,
  readAll,
  streamIds,
  streamNumbers,
  uuid
} from "./streams-harness.js"

const { Any, NoStream, StreamExists } = ExpectedVersion

type Outcome =
  | { readonly kind: "idempotent"; readonly first: number; readonly last: number }
  | { readonly kind: "appended"; readonly first: number; readonly last: number }
  | { readonly kind: "wev"; readonly current: number }

/** Appends and checks the outcome; returns the number of events the stream holds afterwards. */
const attempt = (
  store: EventStoreService,
  stream: string,
  expectedVersion: number,
  ids: ReadonlyArray<number>,
  outcome: Outcome
) =>
  Effect.gen(function* () {
    const events = ids.map((i) => ev(i))
    if (outcome.kind === "wev") {
      yield* expectWev(store.append(stream, expectedVersion, events), outcome.current)
      return
    }
    const result = yield* store.append(stream, expectedVersion, events)
    assert.deepStrictEqual(
      { first: result.firstEventNumber, last: result.lastEventNumber, idempotent: result.idempotent },
      { first: outcome.first, last: outcome.last, idempotent: outcome.kind === "idempotent" }
    )
  })

describe("streams: expected versions", () => {
  // The stream holds e0..e5 (cur = 5). e_i has id uuid(i).
  const workedExamples: ReadonlyArray<{
    name: string
    retries: ReadonlyArray<{ ev: number; ids: Array<number>; outcome: Outcome }>
    count: number
  }> = [
    {
      name: "[e0] with -1 is idempotent",
      retries: [{ ev: NoStream, ids: [0], outcome: { kind: "idempotent", first: 0, last: 0 } }],
      count: 6
    },
    {
      name: "[e0] with Any is idempotent",
      retries: [{ ev: Any, ids: [0], outcome: { kind: "idempotent", first: 0, last: 0 } }],
      count: 6
    },
    {
      name: "[e0] with 5 is appended again as #6",
      retries: [{ ev: 5, ids: [0], outcome: { kind: "appended", first: 6, last: 6 } }],
      count: 7
    },
    { name: "[e0] with 6 is WEV", retries: [{ ev: 6, ids: [0], outcome: { kind: "wev", current: 5 } }], count: 6 },
    {
      name: "[e0] with 4 is WEV (event #5 is e5)",
      retries: [{ ev: 4, ids: [0], outcome: { kind: "wev", current: 5 } }],
      count: 6
    },
    {
      name: "[e1] with Any twice is idempotent both times",
      retries: [
        { ev: Any, ids: [1], outcome: { kind: "idempotent", first: 1, last: 1 } },
        { ev: Any, ids: [1], outcome: { kind: "idempotent", first: 1, last: 1 } }
      ],
      count: 6
    },
    {
      name: "[e0..e5] with -1 is idempotent",
      retries: [{ ev: NoStream, ids: [0, 1, 2, 3, 4, 5], outcome: { kind: "idempotent", first: 0, last: 5 } }],
      count: 6
    },
    {
      name: "[e2, e3] with 1 is idempotent",
      retries: [{ ev: 1, ids: [2, 3], outcome: { kind: "idempotent", first: 2, last: 3 } }],
      count: 6
    },
    {
      name: "[e3, e4] with Any is idempotent",
      retries: [{ ev: Any, ids: [3, 4], outcome: { kind: "idempotent", first: 3, last: 4 } }],
      count: 6
    },
    {
      name: "[e5] with StreamExists is idempotent",
      retries: [{ ev: StreamExists, ids: [5], outcome: { kind: "idempotent", first: 5, last: 5 } }],
      count: 6
    },
    {
      name: "[e4, e5, e6] with 3 is WEV (runs past the end)",
      retries: [{ ev: 3, ids: [4, 5, 6], outcome: { kind: "wev", current: 5 } }],
      count: 6
    },
    {
      name: "[e2, e9] with 1 is WEV (corrupted idempotency)",
      retries: [{ ev: 1, ids: [2, 9], outcome: { kind: "wev", current: 5 } }],
      count: 6
    },
    {
      name: "[e2, e9] with Any is WEV (corrupted idempotency)",
      retries: [{ ev: Any, ids: [2, 9], outcome: { kind: "wev", current: 5 } }],
      count: 6
    },
    {
      name: "[e1, e0] with -1 is WEV (first mismatch)",
      retries: [{ ev: NoStream, ids: [1, 0], outcome: { kind: "wev", current: 5 } }],
      count: 6
    },
    {
      name: "[e9] with -1 is WEV",
      retries: [{ ev: NoStream, ids: [9], outcome: { kind: "wev", current: 5 } }],
      count: 6
    },
    {
      name: "[e9] with StreamExists is appended",
      retries: [{ ev: StreamExists, ids: [9], outcome: { kind: "appended", first: 6, last: 6 } }],
      count: 7
    }
  ]

  for (const hash of Hashes) {
    for (const written of ["one append with -1", "one append per event"] as const) {
      describe(`${hash.name}, e0..e5 written in ${written}`, () => {
        for (const example of workedExamples) {
          it.scoped(example.name, () =>
            Effect.gen(function* () {
              const db = yield* openDb(hash.overrides)
              // A neighbour stream, so colliding hashes have someone to collide with.
              yield* db.store.append("other", Any, evs(100, 10))
              if (written === "one append with -1") yield* db.store.append("s", NoStream, evs(0, 6))
              else for (let i = 0; i < 6; i++) yield* db.store.append("s", i - 1, [ev(i)])
              yield* db.store.append("other", Any, evs(110, 10))
              for (const retry of example.retries) yield* attempt(db.store, "s", retry.ev, retry.ids, retry.outcome)
              assert.strictEqual((yield* streamNumbers(db.store, "s")).length, example.count)
              assert.strictEqual((yield* streamNumbers(db.store, "other")).length, 20)
            })
          )
        }
      })
    }

    describe(`${hash.name}, a stream holding [e0, e1] from one append with -1`, () => {
      const cases: ReadonlyArray<{ name: string; ev: number; ids: Array<number>; outcome: Outcome }> = [
        {
          name: "[e0] with -1 is idempotent",
          ev: NoStream,
          ids: [0],
          outcome: { kind: "idempotent", first: 0, last: 0 }
        },
        { name: "[e1] with 0 is idempotent", ev: 0, ids: [1], outcome: { kind: "idempotent", first: 1, last: 1 } },
        { name: "[e0] with Any is idempotent", ev: Any, ids: [0], outcome: { kind: "idempotent", first: 0, last: 0 } },
        {
          name: "[e0, e1] with Any is idempotent",
          ev: Any,
          ids: [0, 1],
          outcome: { kind: "idempotent", first: 0, last: 1 }
        },
        {
          name: "[e0, e1, e2] with -1 is WEV (partial overlap)",
          ev: NoStream,
          ids: [0, 1, 2],
          outcome: { kind: "wev", current: 1 }
        },
        {
          name: "[e0, e1, e2] with Any is WEV (corrupted idempotency)",
          ev: Any,
          ids: [0, 1, 2],
          outcome: { kind: "wev", current: 1 }
        }
      ]
      for (const c of cases) {
        it.scoped(c.name, () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* db.store.append("s", NoStream, evs(0, 2))
            yield* attempt(db.store, "s", c.ev, c.ids, c.outcome)
            assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [0, 1])
          })
        )
      }
    })

    describe(`${hash.name}, other rules`, () => {
      it.scoped("e0 written: a retry with 0 appends a duplicate, with 1 is WEV", () =>
        Effect.gen(function* () {
          const db = yield* openDb(hash.overrides)
          yield* db.store.append("s", NoStream, [ev(0)])
          yield* attempt(db.store, "s", 1, [0], { kind: "wev", current: 0 })
          yield* attempt(db.store, "s", 0, [0], { kind: "appended", first: 1, last: 1 })
          assert.deepStrictEqual(yield* streamIds(db.store, "s"), [uuid(0), uuid(0)])
        })
      )

      it.scoped("StreamExists on a new stream is WEV; on a stream with only metadata it appends at 0", () =>
        Effect.gen(function* () {
          const db = yield* openDb(hash.overrides)
          yield* expectWev(db.store.append("s", StreamExists, [ev(0)]), -1)
          yield* db.store.setStreamMetadata("s", NoStream, json({ custom: 1 }))
          yield* expectWev(db.store.append("t", StreamExists, [ev(1)]), -1)
          yield* attempt(db.store, "s", StreamExists, [0], { kind: "appended", first: 0, last: 0 })
          yield* attempt(db.store, "s", StreamExists, [2], { kind: "appended", first: 1, last: 1 })
        })
      )

      it.scoped("a new stream: Any and NoStream succeed, explicit versions are WEV", () =>
        Effect.gen(function* () {
          const db = yield* openDb(hash.overrides)
          yield* expectWev(db.store.append("a", 0, [ev(0)]), -1)
          yield* expectWev(db.store.append("a", 3, [ev(0)]), -1)
          yield* attempt(db.store, "a", NoStream, [0], { kind: "appended", first: 0, last: 0 })
          yield* attempt(db.store, "b", Any, [1], { kind: "appended", first: 0, last: 0 })
        })
      )

      it.scoped("N > cur is WEV carrying the current version; N == cur appends", () =>
        Effect.gen(function* () {
          const db = yield* openDb(hash.overrides)
          yield* db.store.append("s", NoStream, evs(0, 3))
          for (const n of [3, 4, 100]) yield* expectWev(db.store.append("s", n, [ev(10)]), 2)
          yield* attempt(db.store, "s", 2, [10, 11], { kind: "appended", first: 3, last: 4 })
          yield* expectWev(db.store.append("s", 2, [ev(12)]), 4)
        })
      )

      it.scoped("N == cur with ids already in the stream appends them again", () =>
        Effect.gen(function* () {
          const db = yield* openDb(hash.overrides)
          yield* db.store.append("s", NoStream, evs(0, 2))
          yield* attempt(db.store, "s", 1, [0, 1], { kind: "appended", first: 2, last: 3 })
          assert.deepStrictEqual(yield* streamIds(db.store, "s"), [uuid(0), uuid(1), uuid(0), uuid(1)])
          // The originals still match at their own numbers.
          yield* attempt(db.store, "s", NoStream, [0, 1], { kind: "idempotent", first: 0, last: 1 })
          yield* attempt(db.store, "s", 1, [0, 1], { kind: "idempotent", first: 2, last: 3 })
        })
      )

      it.scoped("Any with ids written to another stream appends", () =>
        Effect.gen(function* () {
          const db = yield* openDb(hash.overrides)
          yield* db.store.append("a", NoStream, evs(0, 2))
          yield* attempt(db.store, "b", Any, [0, 1], { kind: "appended", first: 0, last: 1 })
          yield* attempt(db.store, "b", Any, [0, 1], { kind: "idempotent", first: 0, last: 1 })
        })
      )

      it.scoped(
        "empty batches: Ok for Any / NoStream / N == cur, WEV for N < cur, N > cur and StreamExists on a new stream; nothing is written",
        () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            const before = yield* db.store.committedPosition
            const empty = yield* db.store.append("s", Any, [])
            assert.strictEqual(empty.lastEventNumber, -1)
            assert.isFalse(empty.idempotent)
            yield* db.store.append("s", NoStream, [])
            yield* expectWev(db.store.append("s", StreamExists, []), -1)
            yield* expectWev(db.store.append("s", 0, []), -1)
            assert.strictEqual(yield* db.store.committedPosition, before, "an empty append writes nothing")
            yield* db.store.append("s", NoStream, evs(0, 2))
            const afterWrite = yield* db.store.committedPosition
            yield* expectWev(db.store.append("s", NoStream, []), 1)
            yield* expectWev(db.store.append("s", 0, []), 1)
            yield* expectWev(db.store.append("s", 5, []), 1)
            assert.strictEqual((yield* db.store.append("s", 1, [])).lastEventNumber, 1)
            assert.strictEqual((yield* db.store.append("s", Any, [])).lastEventNumber, 1)
            assert.strictEqual((yield* db.store.append("s", StreamExists, [])).lastEventNumber, 1)
            assert.strictEqual(yield* db.store.committedPosition, afterWrite)
            assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [0, 1])
          })
      )

      it.scoped("a failed append writes nothing", () =>
        Effect.gen(function* () {
          const db = yield* openDb(hash.overrides)
          yield* db.store.append("s", NoStream, evs(0, 2))
          const before = (yield* readAll(db.store)).length
          yield* expectWev(db.store.append("s", 7, evs(10, 3)), 1)
          yield* expectWev(db.store.append("s", NoStream, evs(10, 3)), 1)
          assert.strictEqual((yield* readAll(db.store)).length, before)
        })
      )
    })
  }
})

describe("streams: append results", () => {
  for (const hash of Hashes) {
    it.scoped(`${hash.name}: first/last numbers and the position of the last event; retries return the originals`, () =>
      Effect.gen(function* () {
        const db = yield* openDb(hash.overrides)
        const results = []
        for (let i = 0; i < 30; i++) {
          results.push(yield* db.store.append(`s-${i % 3}`, Any, evs(i * 4, 1 + (i % 4))))
        }
        const all = yield* readAll(db.store)
        for (let i = 0; i < 30; i++) {
          const r = results[i]!
          const stream = `s-${i % 3}`
          const last = yield* db.store.readEvent(stream, r.lastEventNumber)
          assert.strictEqual(last._tag, "Success")
          if (last._tag === "Success") {
            assert.strictEqual(r.position, last.event.event!.logPosition)
            assert.strictEqual(last.event.event!.eventId, uuid(i * 4 + (i % 4)))
          }
          assert.strictEqual(r.lastEventNumber - r.firstEventNumber + 1, 1 + (i % 4))
          assert.isTrue(all.some((e) => e.logPosition === r.position && e.stream === stream))
        }
        // Consecutive appends to a stream continue its numbering.
        for (let i = 3; i < 30; i++)
          assert.strictEqual(results[i]!.firstEventNumber, results[i - 3]!.lastEventNumber + 1)
        // Retries, with Any and with the original expected version, answer the original numbers and position.
        for (const i of [0, 7, 13, 29]) {
          const original = results[i]!
          const ids = evs(i * 4, 1 + (i % 4))
          const viaAny = yield* db.store.append(`s-${i % 3}`, Any, ids)
          const viaVersion = yield* db.store.append(`s-${i % 3}`, original.firstEventNumber - 1, ids)
          for (const retry of [viaAny, viaVersion]) {
            assert.deepStrictEqual(retry, { ...original, idempotent: true })
          }
        }
        assert.strictEqual((yield* readAll(db.store)).length, all.length, "retries wrote nothing")
      })
    )
  }
})

describe("streams: the committed-events cache bounds Any idempotency (observed quirk)", () => {
  it.scoped(
    "an Any retry of an event evicted from the cache is appended again; an explicit version still matches the log",
    () =>
      Effect.gen(function* () {
        const db = yield* openDb({ eventIdCacheCapacity: 2 })
        for (let i = 0; i < 4; i++) yield* db.store.append("s", Any, [ev(i)])
        const explicit = yield* db.store.append("s", NoStream, [ev(0)])
        assert.deepStrictEqual([explicit.firstEventNumber, explicit.idempotent], [0, true])
        const recent = yield* db.store.append("s", Any, [ev(3)])
        assert.deepStrictEqual([recent.firstEventNumber, recent.idempotent], [3, true])
        const evicted = yield* db.store.append("s", Any, [ev(0)])
        assert.deepStrictEqual([evicted.firstEventNumber, evicted.idempotent], [4, false])
        assert.deepStrictEqual(yield* streamIds(db.store, "s"), [uuid(0), uuid(1), uuid(2), uuid(3), uuid(0)])
      })
  )

  it.scoped(
    "after a restart with the index persisted, an Any retry is still idempotent (the cache is refilled from the log's tail)",
    () =>
      Effect.gen(function* () {
        const db = yield* openDb()
        yield* db.store.append("s", NoStream, evs(0, 2))
        yield* db.store.flushIndex
        yield* db.restart
        const explicit = yield* db.store.append("s", NoStream, evs(0, 2))
        assert.deepStrictEqual([explicit.firstEventNumber, explicit.lastEventNumber, explicit.idempotent], [0, 1, true])
        const any = yield* db.store.append("s", Any, evs(0, 2))
        assert.deepStrictEqual([any.firstEventNumber, any.lastEventNumber, any.idempotent], [0, 1, true])
      })
  )
})

describe("streams: explicit expected versions stay idempotent across restarts", () => {
  for (const hash of Hashes) {
    for (const reopen of Reopens.filter((r) => r !== "none")) {
      it.scoped(`${hash.name}, ${reopen}`, () =>
        Effect.gen(function* () {
          const db = yield* openDb(hash.overrides)
          // Enough events that part of the index is in tables and part is replayed from the log.
          const originals = []
          for (let i = 0; i < 12; i++) originals.push(yield* db.store.append("s", i * 3 - 1, evs(i * 3, 3)))
          for (let i = 0; i < 12; i++) yield* db.store.append(`noise-${i % 2}`, Any, evs(1000 + i, 1))
          yield* db.reopen(reopen)
          for (const i of [0, 5, 11]) {
            const retry = yield* db.store.append("s", i * 3 - 1, evs(i * 3, 3))
            assert.deepStrictEqual(retry, { ...originals[i]!, idempotent: true })
          }
          // Partial retries from the middle of an original batch, and the whole stream at once.
          const middle = yield* db.store.append("s", 3 * 4, evs(13, 2))
          assert.deepStrictEqual([middle.firstEventNumber, middle.lastEventNumber, middle.idempotent], [13, 14, true])
          const whole = yield* db.store.append("s", NoStream, evs(0, 36))
          assert.deepStrictEqual([whole.firstEventNumber, whole.lastEventNumber, whole.idempotent], [0, 35, true])
          yield* expectWev(db.store.append("s", NoStream, evs(0, 37)), 35)
          yield* expectWev(db.store.append("s", 10, [ev(999)]), 35)
          yield* expectWev(db.store.append("s", 36, [ev(999)]), 35)
          assert.deepStrictEqual(
            yield* streamNumbers(db.store, "s"),
            Array.from({ length: 36 }, (_, i) => i)
          )
          const next = yield* db.store.append("s", 35, [ev(999)])
          assert.deepStrictEqual([next.firstEventNumber, next.idempotent], [36, false])
        })
      )
    }
  }
})
