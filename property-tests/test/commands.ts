/**
 * The commands of the model-based EventStore test (their arguments are resolved against the model at run
 * time, so shrinking keeps them meaningful), the weighted command arbitraries, and `runCommands` to replay
 * an explicit command list (regression tests).
 */
import * as fc from "fast-check"
import { Effect } from "effect"
import * as M from "../../simulation/src/model.js"
import {
  APPEND_STREAMS,
  BASE_STREAMS,
  READ_STREAMS,
  RealStore,
  World,
  checkAll,
  checkEventRead,
  checkEverything,
  checkMetadataRead,
  checkStreamRead,
  judgeAppend,
  judgeDelete,
  storeConfig,
  syncAll,
  tick,
  type PendingCheck,
  type ProposedEvent,
  type StoreOptions,
  type WriteAnswer
} from "./storeHarness.js"

export type Cmd = fc.AsyncCommand<World, RealStore>

// ---------------------------------------------------------------------------------------------------
// Command arguments (resolved against the model at run time, so shrinking keeps them meaningful)

export type EvSpec =
  | { readonly kind: "any" }
  | { readonly kind: "noStream" }
  | { readonly kind: "exists" }
  | { readonly kind: "exact"; readonly n: number }
  | { readonly kind: "cur"; readonly delta: number }

export const evSpecArb: fc.Arbitrary<EvSpec> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: "any" } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: "noStream" } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: "exists" } as const) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 5 }).map((n) => ({ kind: "exact", n }) as const) },
  { weight: 4, arbitrary: fc.integer({ min: -1, max: 1 }).map((delta) => ({ kind: "cur", delta }) as const) }
)

const showEv = (e: EvSpec): string =>
  e.kind === "exact" ? `${e.n}` : e.kind === "cur" ? `cur${e.delta === 0 ? "" : e.delta > 0 ? "+1" : "-1"}` : e.kind

/** The stream's last event number as a client would have seen it (the pre-delete one when hard-deleted). */
const visibleLast = (w: World, stream: string): number => {
  const last = w.model.lastEventNumber(stream)
  return last === M.LongMax ? w.model.eventsOf(stream).length - 1 : last
}

const resolveEv = (w: World, stream: string, e: EvSpec): number => {
  switch (e.kind) {
    case "any":
      return M.ExpectedAny
    case "noStream":
      return M.ExpectedNoStream
    case "exists":
      return M.ExpectedStreamExists
    case "exact":
      return e.n
    case "cur":
      return Math.max(-1, visibleLast(w, stream) + e.delta)
  }
}

export interface Payload {
  readonly eventType: string
  readonly isJson: boolean
  readonly data: Uint8Array
  readonly metadata: Uint8Array
}

export const payloadArb: fc.Arbitrary<Payload> = fc
  .record({
    eventType: fc.constantFrom("Created", "Updated", "$>x"),
    isJson: fc.boolean(),
    n: fc.integer({ min: 0, max: 999 }),
    raw: fc.uint8Array({ maxLength: 400, size: "max" }),
    metadata: fc.uint8Array({ maxLength: 6 })
  })
  .map(({ eventType, isJson, n, raw, metadata }) => ({
    eventType,
    isJson,
    data: isJson ? Buffer.from(JSON.stringify({ n, pad: "x".repeat(raw.length) })) : raw,
    metadata
  }))

/** How a batch's ids are chosen. */
export type IdsSpec =
  | { readonly kind: "fresh"; readonly n: number }
  /** Per event: fresh (null) or an id sent earlier (index modulo the number sent). */
  | { readonly kind: "mixed"; readonly picks: ReadonlyArray<number | null> }
  /** The ids of the target stream's events start…start+len−1 (a retry of part of the stream). */
  | { readonly kind: "slice"; readonly start: number; readonly len: number; readonly atBase: boolean }
  /** One id n times in the batch: fresh (null) or one sent earlier. */
  | { readonly kind: "repeat"; readonly pick: number | null; readonly n: number }

const idsSpecArb: fc.Arbitrary<IdsSpec> = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 0, max: 3 }).map((n) => ({ kind: "fresh", n }) as const) },
  {
    weight: 2,
    arbitrary: fc
      .array(fc.option(fc.nat(50), { nil: null }), { minLength: 1, maxLength: 3 })
      .map((picks) => ({ kind: "mixed", picks }) as const)
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ start: fc.nat(5), len: fc.integer({ min: 1, max: 3 }), atBase: fc.boolean() })
      .map((s) => ({ kind: "slice", ...s }) as const)
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ pick: fc.option(fc.nat(50), { nil: null }), n: fc.integer({ min: 2, max: 3 }) })
      .map((s) => ({ kind: "repeat", ...s }) as const)
  }
)

const showIds = (s: IdsSpec): string =>
  s.kind === "fresh"
    ? `${s.n} fresh`
    : s.kind === "mixed"
      ? `[${s.picks.map((p) => (p === null ? "fresh" : `sent[${p}]`)).join(",")}]`
      : s.kind === "slice"
        ? `slice(${s.start},${s.len}${s.atBase ? ",ev=start-1" : ""})`
        : `${s.n}×${s.pick === null ? "fresh" : `sent[${s.pick}]`}`

/** Resolves ids (and, for a slice at its base, the expected version). */
const resolveIds = (w: World, stream: string, s: IdsSpec): { ids: Array<string>; evOverride: number | undefined } => {
  switch (s.kind) {
    case "fresh":
      return { ids: Array.from({ length: s.n }, () => w.freshId()), evOverride: undefined }
    case "mixed":
      return {
        ids: s.picks.map((p) =>
          p === null || w.sentIds.length === 0 ? w.freshId() : w.sentIds[p % w.sentIds.length]!
        ),
        evOverride: undefined
      }
    case "slice": {
      const events = w.model.eventsOf(stream)
      const start = events.length === 0 ? 0 : s.start % events.length
      const ids = events
        .slice(start, start + s.len)
        .map((e) => e.eventId)
        .filter((id): id is string => id !== undefined)
      if (ids.length === 0) return { ids: [w.freshId()], evOverride: undefined }
      return { ids, evOverride: s.atBase ? start - 1 : undefined }
    }
    case "repeat": {
      const id = s.pick === null || w.sentIds.length === 0 ? w.freshId() : w.sentIds[s.pick % w.sentIds.length]!
      return { ids: Array.from({ length: s.n }, () => id), evOverride: undefined }
    }
  }
}

const proposed = (ids: ReadonlyArray<string>, payloads: ReadonlyArray<Payload>): Array<ProposedEvent> =>
  ids.map((eventId, i) => ({ eventId, ...payloads[i % payloads.length]! }))

export interface AppendSpec {
  readonly stream: string
  readonly ev: EvSpec
  readonly ids: IdsSpec
  readonly payloads: ReadonlyArray<Payload>
}

export const appendSpecArb: fc.Arbitrary<AppendSpec> = fc.record({
  stream: fc.constantFrom(...APPEND_STREAMS),
  ev: evSpecArb,
  ids: idsSpecArb,
  payloads: fc.array(payloadArb, { minLength: 3, maxLength: 3 })
})

const showAppend = (s: AppendSpec) => `append(${s.stream}, ev=${showEv(s.ev)}, ${showIds(s.ids)})`

/** Resolves an append against the model (ids, expected version, events). */
const prepareAppend = (w: World, s: AppendSpec) => {
  const { ids, evOverride } = resolveIds(w, s.stream, s.ids)
  const expected = evOverride ?? resolveEv(w, s.stream, s.ev)
  const events = proposed(ids, s.payloads)
  w.remember(ids)
  w.lastAppend = { stream: s.stream, expected, events }
  return { stream: s.stream, expected, events }
}

const describeAppend = (stream: string, expected: number, events: ReadonlyArray<ProposedEvent>) =>
  `append(${stream}, ${expected}, [${events.map((e) => e.eventId.slice(-4)).join(",")}])`

// ---------------------------------------------------------------------------------------------------
// Metadata bodies

export interface MetaSpec {
  readonly text: string
  readonly isJson: boolean
}

const metaTextArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .record({
        maxCount: fc.option(fc.integer({ min: -1, max: 4 }), { nil: undefined }),
        tb: fc.option(fc.oneof(fc.integer({ min: -1, max: 6 }), fc.constant(M.LongMax)), { nil: undefined }),
        custom: fc.option(fc.constantFrom("alice", "bob"), { nil: undefined })
      })
      .map(({ maxCount, tb, custom }) => {
        const parts: Array<string> = []
        if (custom !== undefined) parts.push(`"owner":"${custom}"`)
        if (maxCount !== undefined) parts.push(`"$maxCount":${maxCount}`)
        if (tb !== undefined) parts.push(`"$tb":${tb === M.LongMax ? M.LongMaxText : tb}`)
        return `{${parts.join(",")}}`
      })
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(`{"$maxCount":`, `[1,2]`, `"text"`, `{"$maxCount":"2"}`, `{"$tb":1.5}`, ``, `not json`)
  }
)

export const metaSpecArb: fc.Arbitrary<MetaSpec> = fc.record({
  text: metaTextArb,
  isJson: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) })
})

// ---------------------------------------------------------------------------------------------------
// Commands

/** Runs a write command: judge the answer, sync `$all`, then the position checks. */
const afterWrites = async (w: World, r: RealStore, label: string, checks: ReadonlyArray<PendingCheck>) => {
  await syncAll(w, r, label)
  for (const c of checks) c.afterSync()
}

export class AppendCmd implements Cmd {
  constructor(readonly spec: AppendSpec) {}
  check = () => true
  async run(w: World, r: RealStore) {
    const now = tick(w, r)
    const { stream, expected, events } = prepareAppend(w, this.spec)
    const label = describeAppend(stream, expected, events)
    const answer = await r.write(r.store.append(stream, expected, events))
    await afterWrites(w, r, label, [judgeAppend(w, label, stream, expected, events, answer, now)])
  }
  toString = () => showAppend(this.spec)
}

/** The last append again, same ids and stream, with the same or another expected version (a client retry). */
export class RetryCmd implements Cmd {
  constructor(readonly ev: EvSpec | "same") {}
  check = (w: Readonly<World>) => w.lastAppend !== undefined
  async run(w: World, r: RealStore) {
    const now = tick(w, r)
    const last = w.lastAppend!
    const expected = this.ev === "same" ? last.expected : resolveEv(w, last.stream, this.ev)
    const label = `retry ${describeAppend(last.stream, expected, last.events)}`
    const answer = await r.write(r.store.append(last.stream, expected, last.events))
    await afterWrites(w, r, label, [judgeAppend(w, label, last.stream, expected, last.events, answer, now)])
  }
  toString = () => `retry(ev=${this.ev === "same" ? "same" : showEv(this.ev)})`
}

/**
 * 2–4 appends submitted at once, judged in submission order. Which of them share a writer round is up to
 * the writer (an idle writer takes the first alone; the ones queued meanwhile form the next round).
 */
export class ConcurrentCmd implements Cmd {
  constructor(readonly specs: ReadonlyArray<AppendSpec>) {}
  check = () => true
  async run(w: World, r: RealStore) {
    const now = tick(w, r)
    const prepared = this.specs.map((s) => prepareAppend(w, s))
    const answers = await r.run(
      Effect.all(
        prepared.map((p) => Effect.promise(() => r.write(r.store.append(p.stream, p.expected, p.events)))),
        { concurrency: "unbounded" }
      )
    )
    const checks = prepared.map((p, i) =>
      judgeAppend(
        w,
        `concurrent #${i} ${describeAppend(p.stream, p.expected, p.events)}`,
        p.stream,
        p.expected,
        p.events,
        answers[i]!,
        now
      )
    )
    await afterWrites(w, r, "concurrent appends", checks)
  }
  toString = () => `concurrent[${this.specs.map(showAppend).join("; ")}]`
}

export class SetMetadataCmd implements Cmd {
  constructor(
    readonly stream: string,
    readonly ev: EvSpec,
    readonly meta: MetaSpec,
    readonly reuse: number | null
  ) {}
  check = () => true
  async run(w: World, r: RealStore) {
    const now = tick(w, r)
    const metastream = M.metastreamOf(this.stream)
    const expected = resolveEv(w, metastream, this.ev)
    const eventId =
      this.reuse === null || w.sentIds.length === 0 ? w.freshId() : w.sentIds[this.reuse % w.sentIds.length]!
    w.remember([eventId])
    const data = Buffer.from(this.meta.text, "utf8")
    const events: Array<ProposedEvent> = [
      { eventId, eventType: M.MetadataEventType, isJson: this.meta.isJson, data, metadata: new Uint8Array(0) }
    ]
    w.lastAppend = { stream: metastream, expected, events }
    const label = `setMetadata(${this.stream}, ${expected}, ${this.meta.isJson ? "json" : "raw"} ${this.meta.text}, id ${eventId.slice(-4)})`
    const answer: WriteAnswer<import("@vellum/storage").AppendResult> = await r.write(
      r.store.setStreamMetadata(this.stream, expected, data, { eventId, isJson: this.meta.isJson })
    )
    await afterWrites(w, r, label, [judgeAppend(w, label, metastream, expected, events, answer, now)])
  }
  toString = () =>
    `setMetadata(${this.stream}, ev=${showEv(this.ev)}, ${this.meta.isJson ? "json" : "raw"} ${JSON.stringify(this.meta.text)}${this.reuse === null ? "" : `, id=sent[${this.reuse}]`})`
}

export class DeleteCmd implements Cmd {
  constructor(
    readonly stream: string,
    readonly ev: EvSpec,
    readonly hard: boolean
  ) {}
  check = () => true
  async run(w: World, r: RealStore) {
    const now = tick(w, r)
    const expected = resolveEv(w, this.stream, this.ev)
    const label = `${this.hard ? "hard" : "soft"}Delete(${this.stream}, ${expected})`
    const answer = await r.write(r.store.deleteStream(this.stream, expected, this.hard))
    const model = this.hard
      ? w.model.hardDelete(this.stream, expected, now)
      : w.model.softDelete(this.stream, expected, now)
    await afterWrites(w, r, label, [judgeDelete(label, model, answer)])
  }
  toString = () => `${this.hard ? "hard" : "soft"}Delete(${this.stream}, ev=${showEv(this.ev)})`
}

export class ReadForwardCmd implements Cmd {
  constructor(
    readonly stream: string,
    readonly from: number,
    readonly count: number
  ) {}
  check = () => true
  async run(w: World, r: RealStore) {
    tick(w, r)
    const label = `readForward(${this.stream}, ${this.from}, ${this.count})`
    checkStreamRead(
      w.model,
      await r.run(r.store.readStreamForward(this.stream, this.from, this.count)),
      w.model.readForward(this.stream, this.from, this.count),
      label
    )
  }
  toString = () => `readForward(${this.stream}, ${this.from}, ${this.count})`
}

export class ReadBackwardCmd implements Cmd {
  constructor(
    readonly stream: string,
    readonly from: number,
    readonly count: number
  ) {}
  check = () => true
  async run(w: World, r: RealStore) {
    tick(w, r)
    const label = `readBackward(${this.stream}, ${this.from}, ${this.count})`
    checkStreamRead(
      w.model,
      await r.run(r.store.readStreamBackward(this.stream, this.from, this.count)),
      w.model.readBackward(this.stream, this.from, this.count),
      label
    )
  }
  toString = () => `readBackward(${this.stream}, ${this.from}, ${this.count})`
}

export class ReadEventCmd implements Cmd {
  constructor(
    readonly stream: string,
    readonly n: number
  ) {}
  check = () => true
  async run(w: World, r: RealStore) {
    tick(w, r)
    const label = `readEvent(${this.stream}, ${this.n})`
    checkEventRead(
      w.model,
      await r.run(r.store.readEvent(this.stream, this.n)),
      w.model.readEvent(this.stream, this.n),
      label
    )
  }
  toString = () => `readEvent(${this.stream}, ${this.n})`
}

export class ReadMetadataCmd implements Cmd {
  constructor(readonly stream: string) {}
  check = () => true
  async run(w: World, r: RealStore) {
    tick(w, r)
    checkMetadataRead(
      await r.run(r.store.getStreamMetadata(this.stream)),
      w.model.readMetadata(this.stream),
      `getMetadata(${this.stream})`
    )
  }
  toString = () => `getMetadata(${this.stream})`
}

export class ReadAllCmd implements Cmd {
  constructor(readonly page: number) {}
  check = () => true
  async run(w: World, r: RealStore) {
    tick(w, r)
    await checkAll(w, r, `readAll(page ${this.page})`, this.page)
  }
  toString = () => `readAll(page ${this.page})`
}

export class RestartCmd implements Cmd {
  check = () => true
  async run(w: World, r: RealStore) {
    tick(w, r)
    await r.restart()
    w.model.restart()
    await syncAll(w, r, "after restart")
    await checkEverything(w, r, "after restart")
  }
  toString = () => "restart"
}

/** Power loss; acknowledged writes were synced, so the model is unchanged whatever the crash mode keeps. */
export class CrashCmd implements Cmd {
  constructor(
    readonly seed: number,
    readonly mode: "strict" | "random" = "strict"
  ) {}
  check = () => true
  async run(w: World, r: RealStore) {
    tick(w, r)
    await r.crash(this.seed, this.mode)
    w.model.restart()
    await syncAll(w, r, "after crash")
    await checkEverything(w, r, "after crash")
  }
  toString = () => `crash(${this.seed}${this.mode === "strict" ? "" : `, ${this.mode}`})`
}

/** Each command arbitrary with its weight (fc.commands picks uniformly among the entries, so weights repeat). */
export const weightedCommands: ReadonlyArray<readonly [name: string, weight: number, arbitrary: fc.Arbitrary<Cmd>]> = [
  ["append", 10, appendSpecArb.map((s) => new AppendCmd(s))],
  ["retry", 3, fc.oneof(fc.constant("same" as const), evSpecArb).map((ev) => new RetryCmd(ev))],
  ["concurrent", 2, fc.array(appendSpecArb, { minLength: 2, maxLength: 4 }).map((specs) => new ConcurrentCmd(specs))],
  [
    "setMetadata",
    3,
    fc
      .tuple(fc.constantFrom(...BASE_STREAMS), evSpecArb, metaSpecArb, fc.option(fc.nat(50), { nil: null }))
      .map(([s, ev, meta, reuse]) => new SetMetadataCmd(s, ev, meta, reuse))
  ],
  [
    "softDelete",
    2,
    fc.tuple(fc.constantFrom(...BASE_STREAMS), evSpecArb).map(([s, ev]) => new DeleteCmd(s, ev, false))
  ],
  ["hardDelete", 1, fc.tuple(fc.constantFrom(...BASE_STREAMS), evSpecArb).map(([s, ev]) => new DeleteCmd(s, ev, true))],
  [
    "readForward",
    2,
    fc
      .tuple(fc.constantFrom(...READ_STREAMS), fc.nat(9), fc.integer({ min: 1, max: 5 }))
      .map(([s, from, count]) => new ReadForwardCmd(s, from, count))
  ],
  [
    "readBackward",
    2,
    fc
      .tuple(fc.constantFrom(...READ_STREAMS), fc.integer({ min: -1, max: 9 }), fc.integer({ min: 1, max: 5 }))
      .map(([s, from, count]) => new ReadBackwardCmd(s, from, count))
  ],
  [
    "readEvent",
    2,
    fc.tuple(fc.constantFrom(...READ_STREAMS), fc.integer({ min: -1, max: 9 })).map(([s, n]) => new ReadEventCmd(s, n))
  ],
  ["getMetadata", 1, fc.constantFrom(...BASE_STREAMS).map((s) => new ReadMetadataCmd(s))],
  ["readAll", 1, fc.integer({ min: 1, max: 7 }).map((page) => new ReadAllCmd(page))],
  ["restart", 1, fc.constant(new RestartCmd())],
  ["crash", 1, fc.nat().map((seed) => new CrashCmd(seed, "strict"))],
  ["crashRandom", 1, fc.nat().map((seed) => new CrashCmd(seed, "random"))]
]

/** The command arbitraries for `fc.commands` (a `names` filter keeps only those commands). */
export const commandArbsOf = (names?: ReadonlyArray<string>): Array<fc.Arbitrary<Cmd>> =>
  weightedCommands
    .filter(([name]) => names === undefined || names.includes(name))
    .flatMap(([, weight, arb]) => Array.from({ length: weight }, () => arb))

export const commandArbs: Array<fc.Arbitrary<Cmd>> = commandArbsOf()

/** Runs an explicit command list on a fresh store, then checks everything (what a property run does). */
export const runCommands = async (options: StoreOptions, seed: number, cmds: ReadonlyArray<Cmd>): Promise<void> => {
  const real = new RealStore(storeConfig(options), seed)
  await real.open()
  const world = new World()
  try {
    await syncAll(world, real, "open")
    for (const cmd of cmds) if (cmd.check(world)) await cmd.run(world, real)
    await checkEverything(world, real, "end of run", 3)
  } finally {
    await real.dispose().catch(() => undefined)
  }
}
