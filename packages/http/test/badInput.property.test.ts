/**
 * Bad input never breaks the node, and never changes what it stores.
 *
 * Each run opens a fresh node and sends a few hundred generated requests: random methods, paths, headers
 * and bodies (malformed JSON, wrong media types, non-UUID ids, non-numeric expected versions, bodies over
 * the limits) mixed with valid appends to a handful of model streams (`s-0` … `s-3`). Garbage never
 * addresses a model stream. Checked on every reply: no 5xx at all (the reference's two specified 500s,
 * `Read size too big…` for counts over 4096 and an unknown `?format=`, are 400s here), and on every valid append: the
 * exact status the model predicts (201, idempotent 201 with the original Location, or 400 for a wrong
 * expected version). Afterwards every model stream reads back (over HTTP and from the store) exactly as
 * the model says. Runs × requests ≥ 10,000.
 */
import { describe, it, assert } from "vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { parseTarget } from "../src/requestTarget.js"
import type { Reply } from "../src/index.js"
import { AdminAuth, EventsJson, header, makeTestNode, text, type TestNode } from "./streams-harness.js"

const ModelStreams = ["s-0", "s-1", "s-2", "s-3"]
// CI runs 40 runs of the fixed seed; longer runs: VELLUM_BAD_INPUT_RUNS=400 VELLUM_BAD_INPUT_SEED=7 (README).
const RUNS = Number(process.env["VELLUM_BAD_INPUT_RUNS"] ?? 40)
const SEED = Number(process.env["VELLUM_BAD_INPUT_SEED"] ?? 20251121)
const REQUESTS_PER_RUN = 260

interface ModelEvent {
  readonly id: string
  readonly type: string
  readonly data: string
  readonly isJson: boolean
}
interface Batch {
  readonly stream: string
  readonly first: number
  readonly events: ReadonlyArray<ModelEvent>
  readonly body: string
}

// ---- valid appends ----

type ValidAppend =
  | {
      readonly _tag: "Events"
      readonly stream: string
      readonly objects: ReadonlyArray<Record<string, string | number>>
      readonly version: "any" | "exact" | "wrong"
    }
  | {
      readonly _tag: "RawJson"
      readonly stream: string
      readonly text: string
      readonly version: "any" | "exact" | "wrong"
    }
  | { readonly _tag: "Replay"; readonly pick: number }

const simpleObject = fc.dictionary(
  fc.stringMatching(/^[a-z]{1,5}$/),
  fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.stringMatching(/^[A-Za-z0-9 ]{0,12}$/)),
  { maxKeys: 4 }
)
const version = fc.constantFrom("any" as const, "any" as const, "exact" as const, "wrong" as const)
const stream = fc.constantFrom(...ModelStreams)

const validAppend: fc.Arbitrary<ValidAppend> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      _tag: fc.constant("Events" as const),
      stream,
      objects: fc.array(simpleObject, { minLength: 1, maxLength: 4 }),
      version
    })
  },
  {
    weight: 2,
    arbitrary: fc.record({ _tag: fc.constant("RawJson" as const), stream, text: fc.string({ maxLength: 40 }), version })
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Replay" as const), pick: fc.nat() }) }
)

// ---- garbage ----

const MediaTypes = [
  "application/json",
  "application/vnd.eventstore.events+json",
  "application/vnd.kurrent.events+json",
  "application/vnd.kurrent.event+json",
  "application/vnd.kurrent.atom+json",
  "application/atom+xml",
  "application/vnd.eventstore.events+xml",
  "text/xml",
  "application/xml",
  "application/octet-stream",
  "application/vnd.kurrent.streamdesc+json",
  "text/html",
  "text/plain",
  "image/png",
  "*/*",
  "application/*",
  "application/json; charset=latin1",
  "application/json;q=0",
  "",
  ";;;",
  "garbage"
]

const segment = fc.oneof(
  fc.constantFrom(
    "streams",
    "junk",
    "head",
    "metadata",
    "incoming",
    "forward",
    "backward",
    "$all",
    "%24all",
    "filtered",
    "%2F",
    "%zz",
    "..",
    "",
    "%00",
    "00000000000000000000000000000000",
    "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
    "health",
    "live"
  ),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
  fc.string({ maxLength: 8 }),
  fc.integer({ min: -5, max: 4096 }).map(String),
  fc.constantFrom("99999999999999999999", "-0", "+1", "1e3", "0x10"),
  fc.uuid()
)

const query = fc.oneof(
  { weight: 4, arbitrary: fc.constant("") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "?embed=body",
      "?embed=rich",
      "?embed=TryHarder",
      "?embed=content",
      "?format=json",
      "?format=xml",
      "?format=atom",
      "?exclude-system-events=true",
      "?exclude-system-events=nope",
      "?context=streamid&type=regex&data=(",
      "?context=eventtype&type=prefix&data=a,b",
      "?x=%zz&&=",
      "?format="
    )
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => `?${s}`) }
)

/** Stream names for garbage: junk streams (some shared, so garbage meets existing streams), odd names, metastreams. */
const junkStream = fc.oneof(
  fc.constantFrom(
    "junk-0",
    "junk-1",
    "junk-2",
    "%24%24junk-0",
    "$$junk-1",
    "a%2Fb",
    "%24settings",
    "%24all",
    "$all",
    "%E2%82%AC",
    "%ED%A0%80",
    "x%00y"
  ),
  fc.string({ minLength: 1, maxLength: 10 }).map((s) => encodeURIComponent(`junk-${s}`))
)

const number = fc.oneof(
  fc.integer({ min: -3, max: 30 }).map(String),
  fc.constantFrom("head", "x", "99999999999999999999", "2147483648", "4096", "4097")
)

/** Paths shaped like the stream routes, with bad parameters in them. */
const streamShaped = fc
  .tuple(
    junkStream,
    fc.oneof(
      fc.constantFrom("", "/", "/metadata", "/metadata/", "/incoming/", "/incoming/nope"),
      fc.uuid().map((u) => `/incoming/${u}`),
      number.map((n) => `/${n}`),
      fc.tuple(number, number).map(([n, c]) => `/${n}/${c}`),
      fc
        .tuple(number, fc.constantFrom("backward", "forward", "sideways"), number)
        .map(([n, d, c]) => `/${n}/${d}/${c}`),
      fc.tuple(number, fc.constantFrom("backward", "forward"), number).map(([n, d, c]) => `/metadata/${n}/${d}/${c}`)
    ),
    query
  )
  .map(([s, suffix, q]) => `/streams/${s}${suffix}${q}`)

/** `$all` paths with good and bad positions and counts. */
const allShaped = fc
  .tuple(
    fc.constantFrom("$all", "%24all", "$all/filtered"),
    fc.constantFrom(
      "head",
      "00000000000000000000000000000000",
      "0000000000000000000000000000000g",
      "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
      "short"
    ),
    fc.constantFrom("backward", "forward"),
    number,
    query
  )
  .map(([all, p, d, c, q]) => `/streams/${all}/${p}/${d}/${c}${q}`)

const routeShaped = fc.oneof({ weight: 4, arbitrary: streamShaped }, { weight: 1, arbitrary: allShaped })

const path = fc.oneof(
  { weight: 4, arbitrary: routeShaped },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.array(segment, { minLength: 1, maxLength: 6 }), query)
      .map(([segments, q]) => `/${segments.join("/")}${q}`)
  }
)

/** Garbage must not address a model stream (decoded segments starting with `s-`) or `$$s-`. */
const touchesModel = (url: string): boolean => {
  const target = parseTarget(url)
  return target._tag === "Invalid" ? false : target.segments.some((s) => /^(\$\$)?s-/.test(s))
}

const headerValue = fc.oneof(
  fc.string({ maxLength: 16 }),
  fc.constantFrom("True", "false", "-1", "-2", "-3", "-4", "0", "7", "abc", "", "00000000-0000-0000-0000-000000000000"),
  fc.uuid()
)

const ControlHeaders = [
  "ES-ExpectedVersion",
  "Kurrent-ExpectedVersion",
  "ES-EventId",
  "Kurrent-EventId",
  "ES-EventType",
  "ES-HardDelete",
  "ES-ResolveLinkTos",
  "ES-RequireMaster",
  "Kurrent-RequireLeader",
  "If-None-Match",
  "Accept-Encoding"
]

/** `arb` in `percent`% of the cases, otherwise absent. */
const sometimes = <A>(arb: fc.Arbitrary<A>, percent: number): fc.Arbitrary<A | undefined> =>
  fc.oneof({ weight: 100 - percent, arbitrary: fc.constant(undefined) }, { weight: percent, arbitrary: arb })

const garbageHeaders = fc
  .record({
    contentType: sometimes(
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(EventsJson, "application/json") },
        { weight: 2, arbitrary: fc.constantFrom(...MediaTypes) }
      ),
      85
    ),
    accept: sometimes(
      fc.constantFrom(...MediaTypes, "application/json, text/plain, */*", "text/xml;q=0.1, application/json;q=0.9"),
      60
    ),
    control: fc.array(fc.tuple(fc.constantFrom(...ControlHeaders), headerValue), { maxLength: 3 }),
    // Only malformed long polls: a valid one would wait for real.
    longPoll: sometimes(fc.constantFrom("0", "-1", "abc", ""), 10),
    authorization: sometimes(fc.constantFrom(AdminAuth, "Basic !!!", "Basic YTpi", "Bearer x", ""), 12),
    forwarded: sometimes(
      fc.record({
        "X-Forwarded-Host": fc.constantFrom("proxy:1", "bad host\r\n", "[::1]:9", ""),
        "X-Forwarded-Prefix": fc.constantFrom("p", "/a/b/", "?#", "")
      }),
      10
    ),
    host: sometimes(fc.constantFrom("", "evil.example:99999", "h\u00e9", "[::1]"), 10)
  })
  .map((h) => {
    const out: Record<string, string> = {}
    if (h.contentType !== undefined) out["Content-Type"] = h.contentType
    if (h.accept !== undefined) out["Accept"] = h.accept
    for (const [name, value] of h.control) out[name] = value
    if (h.longPoll !== undefined) out["ES-LongPoll"] = h.longPoll
    if (h.authorization !== undefined) out["Authorization"] = h.authorization
    if (h.forwarded !== undefined) Object.assign(out, h.forwarded)
    if (h.host !== undefined) out["Host"] = h.host
    return out
  })

/** Event arrays that are often valid, with odd payloads (links, metadata-looking data). */
const randomEvents = fc
  .array(
    fc.record(
      {
        eventId: fc.oneof({ weight: 4, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }),
        eventType: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom("T", "$>", "$metadata", "Other") },
          { weight: 1, arbitrary: fc.string({ maxLength: 6 }) }
        ),
        data: fc.oneof(
          fc.jsonValue(),
          fc.constantFrom(
            "0@junk-0",
            "1@junk-1",
            "x@y",
            "-1@junk-2",
            '{"$maxCount":1}',
            '{"$tb":2}',
            '{"$acl":{"$r":"nobody"}}'
          )
        ),
        metadata: fc.jsonValue()
      },
      { requiredKeys: ["eventId", "eventType"] }
    ),
    { minLength: 1, maxLength: 3 }
  )
  .map((a) => JSON.stringify(a))

const garbageBody = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.string({ maxLength: 60 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 60 }) },
  { weight: 2, arbitrary: fc.json() },
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      "[",
      "[{]",
      "[{}]",
      "[]",
      "{}",
      "[1,2]",
      "[null]",
      "<Events><Event>",
      "<a/>",
      "\u0000",
      '[{"eventId":"nope","eventType":"T"}]',
      '[{"eventId":"00000000-0000-0000-0000-000000000000","eventType":"T"}]',
      '[{"eventId":"11111111-1111-1111-1111-111111111111"}]',
      "<Events><Event><eventId>nope</eventId><eventType>T</eventType></Event></Events>",
      '{"$maxCount": "x", "$acl": 5}'
    )
  },
  { weight: 5, arbitrary: randomEvents },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 3 }).map((i) => "[".repeat(2000 + i) + "]".repeat(2000)) },
  {
    weight: 1,
    arbitrary: fc.constant(
      JSON.stringify([{ eventId: "22222222-2222-2222-2222-222222222222", eventType: "Big", data: "y".repeat(30_000) }])
    )
  },
  { weight: 1, arbitrary: fc.constant("x".repeat(120_000)) }
)

const garbage = fc
  .record({
    method: fc.oneof(
      { weight: 5, arbitrary: fc.constant("GET") },
      { weight: 5, arbitrary: fc.constant("POST") },
      { weight: 1, arbitrary: fc.constant("DELETE") },
      { weight: 1, arbitrary: fc.constantFrom("PUT", "OPTIONS", "HEAD", "PATCH", "get", "BREW") }
    ),
    url: path,
    headers: garbageHeaders,
    body: garbageBody
  })
  .filter((g) => !touchesModel(g.url))

interface GarbageRequest {
  readonly method: string
  readonly url: string
  readonly headers: Partial<Record<string, string>>
  readonly body: unknown
}

type Command =
  | { readonly _tag: "Valid"; readonly append: ValidAppend }
  | { readonly _tag: "Garbage"; readonly request: GarbageRequest }

/** Appends to junk streams that usually succeed, so garbage reads meet streams with odd contents. */
const junkAppend: fc.Arbitrary<GarbageRequest> = fc.record({
  method: fc.constant("POST"),
  url: fc.constantFrom(
    "/streams/junk-0",
    "/streams/junk-1",
    "/streams/junk-2",
    "/streams/%24%24junk-0",
    "/streams/junk-0/metadata"
  ),
  headers: fc.constantFrom<Record<string, string>>(
    { "Content-Type": EventsJson },
    { "Content-Type": EventsJson, "ES-ExpectedVersion": "-4" }
  ),
  body: randomEvents
})

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 2, arbitrary: validAppend.map((append) => ({ _tag: "Valid" as const, append })) },
  { weight: 3, arbitrary: garbage.map((request) => ({ _tag: "Garbage" as const, request })) },
  { weight: 1, arbitrary: junkAppend.map((request) => ({ _tag: "Garbage" as const, request })) }
)

// ---- the run ----

/**
 * No crafted request gets a 5xx (even the two the reference answers with 500 are 400s here), except the
 * 501 of a route family not built yet.
 */
const assertNoUnexpected5xx = (reply: Reply, what: string) => {
  if (reply.status === 501 && /not implemented in Vellum yet$/.test(reply.reason ?? "")) return
  assert.isBelow(reply.status, 500, `${what} → ${reply.status} ${reply.reason}`)
}

const execute = (commands: ReadonlyArray<Command>) =>
  Effect.gen(function* () {
    const node: TestNode = yield* makeTestNode({
      settings: { maxRequestBodyBytes: 100_000, maxAppendEventBytes: 20_000 }
    })
    const model = new Map<string, Array<ModelEvent>>(ModelStreams.map((s) => [s, []]))
    const batches: Array<Batch> = []
    let nextId = 1
    const freshId = () => `aaaaaaaa-0000-4000-8000-${(nextId++).toString(16).padStart(12, "0")}`
    const expectedHeader = (s: string, v: "any" | "exact" | "wrong"): Record<string, string> => {
      const last = model.get(s)!.length - 1
      return v === "any" ? {} : { "ES-ExpectedVersion": String(v === "exact" ? last : last + 2) }
    }

    for (const cmd of commands) {
      if (cmd._tag === "Garbage") {
        const { method, url, headers, body } = cmd.request
        const reply = yield* node.request(method, url, { headers: headers as Record<string, string>, body })
        assertNoUnexpected5xx(reply, `${method} ${url}`)
        continue
      }
      const append = cmd.append
      if (append._tag === "Replay") {
        if (batches.length === 0) continue
        const batch = batches[append.pick % batches.length]!
        const reply = yield* node.request("POST", `/streams/${batch.stream}`, {
          headers: { "Content-Type": EventsJson },
          body: batch.body
        })
        assert.strictEqual(reply.status, 201, "replay")
        assert.strictEqual(header(reply, "Location"), `http://localhost:2113/streams/${batch.stream}/${batch.first}`)
        continue
      }
      const events: Array<ModelEvent> =
        append._tag === "Events"
          ? append.objects.map((o) => ({ id: freshId(), type: "T", data: JSON.stringify(o, null, 2), isJson: true }))
          : [{ id: freshId(), type: "Raw", data: append.text, isJson: true }]
      const body =
        append._tag === "Events"
          ? JSON.stringify(events.map((e, i) => ({ eventId: e.id, eventType: e.type, data: append.objects[i] })))
          : append.text
      const headers =
        append._tag === "Events"
          ? { "Content-Type": EventsJson, ...expectedHeader(append.stream, append.version) }
          : {
              "Content-Type": "application/json",
              "ES-EventId": events[0]!.id,
              "ES-EventType": "Raw",
              ...expectedHeader(append.stream, append.version)
            }
      const reply = yield* node.request("POST", `/streams/${append.stream}`, { headers, body })
      const current = model.get(append.stream)!
      if (append.version === "wrong") {
        assert.strictEqual(reply.status, 400, "wrong expected version")
        assert.strictEqual(header(reply, "ES-CurrentVersion"), String(current.length - 1))
        continue
      }
      assert.strictEqual(reply.status, 201, `append ${text(reply)}`)
      assert.strictEqual(header(reply, "Location"), `http://localhost:2113/streams/${append.stream}/${current.length}`)
      if (append._tag === "Events") batches.push({ stream: append.stream, first: current.length, events, body })
      current.push(...events)
    }

    // Every model stream reads back as the model says: ids and types over HTTP, bytes from the store.
    for (const [s, expected] of model) {
      const reply = yield* node.request("GET", `/streams/${s}/0/forward/4096?embed=rich`, {
        headers: { Accept: "application/json" }
      })
      if (expected.length === 0) {
        assert.strictEqual(reply.status, 404, s)
        continue
      }
      const entries = (JSON.parse(text(reply)).entries as Array<{ eventId: string; eventType: string }>)
        .slice()
        .reverse()
      assert.deepStrictEqual(
        entries.map((e) => [e.eventId, e.eventType]),
        expected.map((e) => [e.id, e.type]),
        s
      )
      const read = yield* node.store.readStreamForward(s, 0, 4096)
      assert.strictEqual(read._tag, "Success")
      if (read._tag === "Success") {
        const actual = read.events.map((r) => ({
          data: r.event!.data.toString("utf8"),
          isJson: (r.event!.flags & 1) === 1
        }))
        assert.deepStrictEqual(
          actual,
          expected.map((e) => ({ data: e.data, isJson: e.isJson })),
          s
        )
      }
    }
    return commands.length
  })

describe("bad input (property)", () => {
  it("random requests never get an unspecified 5xx, and never change the model streams", async () => {
    let total = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: REQUESTS_PER_RUN, maxLength: REQUESTS_PER_RUN }),
        async (commands) => {
          total += await Effect.runPromise(Effect.scoped(execute(commands)))
        }
      ),
      { numRuns: RUNS, seed: SEED, endOnFailure: true }
    )
    assert.strictEqual(total, RUNS * REQUESTS_PER_RUN)
    // The floor for CI (a shorter run asked for through the environment is the caller's choice).
    if (process.env["VELLUM_BAD_INPUT_RUNS"] === undefined) assert.isAtLeast(total, 10_000)
  })
})
