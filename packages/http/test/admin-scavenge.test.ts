// The scavenge admin routes end to end through the generic pipeline (routing, negotiation, first-level
// authorization), over a fake Scavenger that records what it was asked and can hold a stop open.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Ref } from "effect"
import { XMLValidator } from "fast-xml-parser"
import {
  ScavengeAlreadyRunning,
  ScavengeNotFound,
  Scavenger,
  type LastScavenge,
  type ScavengeProgress,
  type ScavengerService,
  type StartScavengeOptions
} from "@vellum/scavenge"
import { AuthenticationFailed, Authenticator, anonymousPrincipal, type Principal } from "@vellum/security"
import { defaultHttpSettings } from "../src/HttpConfig.js"
import { makeHandler } from "../src/pipeline.js"
import { BasicChallenge } from "../src/challenge.js"
import type { Reply } from "../src/Reply.js"
import { scavengeRoutes } from "../src/admin/index.js"

const ID_1 = "6f9619ff-8b86-4011-b42d-00c04fc964ff"
const MERGE_ID = "0d6e2b2c-5a8e-4a8c-9a4e-3f2f1b1c0d0e"
const NO_RUN = "00000000-0000-0000-0000-000000000000"
const XML_NS = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"`

// ---- The fake scavenger ---------------------------------------------------------------------------------

interface FakeState {
  readonly running: { readonly scavengeId: string; readonly progress: ScavengeProgress } | undefined
  readonly last: LastScavenge
  readonly started: ReadonlyArray<StartScavengeOptions>
  readonly stopRequests: ReadonlyArray<string>
  readonly merges: number
}

const initial: FakeState = {
  running: undefined,
  last: { scavengeId: NO_RUN, result: "Unknown" },
  started: [],
  stopRequests: [],
  merges: 0
}

/** A Scavenger whose runs never progress on their own; `stopGate`, when given, holds every stop until opened. */
const makeFake = (stopGate?: Deferred.Deferred<void>) =>
  Effect.gen(function* () {
    const state = yield* Ref.make(initial)
    const service: ScavengerService = {
      start: (options) =>
        Effect.flatten(
          Ref.modify(state, (s): [Effect.Effect<{ scavengeId: string }, ScavengeAlreadyRunning>, FakeState] =>
            s.running !== undefined
              ? [Effect.fail(new ScavengeAlreadyRunning({ scavengeId: s.running.scavengeId })), s]
              : [
                  Effect.succeed({ scavengeId: ID_1 }),
                  {
                    ...s,
                    started: [...s.started, options],
                    running: { scavengeId: ID_1, progress: { phase: "Accumulating", done: 3, total: 10 } },
                    last: { scavengeId: ID_1, result: "InProgress" }
                  }
                ]
          )
        ),
      current: Effect.map(Ref.get(state), (s) => s.running),
      last: Effect.map(Ref.get(state), (s) => s.last),
      checkpointStage: Effect.succeed(undefined),
      stop: (scavengeId) =>
        Effect.gen(function* () {
          yield* Ref.update(state, (s) => ({ ...s, stopRequests: [...s.stopRequests, scavengeId] }))
          const s = yield* Ref.get(state)
          if (s.running === undefined || (scavengeId !== "current" && scavengeId !== s.running.scavengeId)) {
            return yield* Effect.fail(new ScavengeNotFound({ scavengeId }))
          }
          if (stopGate !== undefined) yield* Deferred.await(stopGate)
          const stopped = s.running.scavengeId
          yield* Ref.update(state, (t): FakeState => ({
            ...t,
            running: undefined,
            last: { scavengeId: stopped, result: "Stopped" }
          }))
          return { scavengeId: stopped }
        }),
      mergeIndexes: Effect.as(
        Ref.update(state, (s) => ({ ...s, merges: s.merges + 1 })),
        { mergeIndexesId: MERGE_ID }
      )
    }
    return { service, state }
  })

// ---- Principals and the handler ------------------------------------------------------------------------

const basic = (login: string) => `Basic ${Buffer.from(`${login}:pw`).toString("base64")}`
const principals: Record<string, Principal> = {
  admin: { name: "admin", groups: ["$admins"], anonymous: false },
  ops: { name: "ops", groups: [], anonymous: false },
  jo: { name: "jo", groups: ["$ops"], anonymous: false },
  reader: { name: "reader", groups: ["readers"], anonymous: false }
}
const ADMIN = basic("admin")
const READER = basic("reader")

const authenticatorLayer = Layer.succeed(Authenticator, {
  authenticate: (headers) => {
    const auth = headers["authorization"]
    if (auth === undefined) return Effect.succeed(anonymousPrincipal)
    const login = Object.keys(principals).find((name) => basic(name) === auth)
    return login !== undefined
      ? Effect.succeed(principals[login]!)
      : Effect.fail(new AuthenticationFailed({ message: "bad credentials" }))
  }
})

const handle = makeHandler(scavengeRoutes, defaultHttpSettings)

/** Builds a fake and a `send` over the pipeline with it provided. */
const setup = (stopGate?: Deferred.Deferred<void>) =>
  Effect.gen(function* () {
    const fake = yield* makeFake(stopGate)
    const send = (method: string, url: string, headers: Record<string, string> = { authorization: ADMIN }) =>
      handle({ method, url, headers: { host: "127.0.0.1:2113", ...headers }, body: undefined }).pipe(
        Effect.provideService(Scavenger, fake.service),
        Effect.provide(authenticatorLayer)
      )
    return { ...fake, send }
  })

const text = (r: Reply) => (typeof r.body === "string" ? r.body : Buffer.from(r.body ?? []).toString("utf8"))
const json = (r: Reply) => JSON.parse(text(r))
const as = (accept: string) => ({ authorization: ADMIN, accept })

// ---- Tests ---------------------------------------------------------------------------------------------

describe("scavenge admin routes table", () => {
  it("declares the reference's routes, ops-only, with the admin codecs (text first)", () => {
    expect(scavengeRoutes.map((r) => `${r.method} ${r.path} ${r.access} ${r.responseCodecs.join(",")}`)).toEqual([
      "POST /admin/scavenge ops text/plain,application/json,text/xml,application/xml",
      "GET /admin/scavenge/current ops text/plain,application/json,text/xml,application/xml",
      "GET /admin/scavenge/last ops text/plain,application/json,text/xml,application/xml",
      "DELETE /admin/scavenge/{scavengeId} ops text/plain,application/json,text/xml,application/xml",
      "POST /admin/mergeindexes ops text/plain,application/json,text/xml,application/xml"
    ])
    expect(scavengeRoutes.every((r) => r.requestCodecs === undefined)).toBe(true)
  })
})

describe("authorization", () => {
  const calls: ReadonlyArray<[string, string]> = [
    ["POST", "/admin/scavenge"],
    ["GET", "/admin/scavenge/current"],
    ["GET", "/admin/scavenge/last"],
    ["DELETE", "/admin/scavenge/current"],
    ["POST", "/admin/mergeindexes"]
  ]

  it.effect("anonymous callers and users outside $ops/$admins get the bare 401, and nothing happens", () =>
    Effect.gen(function* () {
      const { send, state } = yield* setup()
      for (const [method, url] of calls) {
        for (const headers of [{}, { authorization: READER }] as ReadonlyArray<Record<string, string>>) {
          const r = yield* send(method, url, headers)
          expect([method, url, r.status, r.reason, r.body ?? ""]).toEqual([method, url, 401, "Unauthorized", ""])
          // Without credentials the 401 challenges for Basic (docs/decisions.md); a user who lacks the role gets none.
          expect(r.headers["WWW-Authenticate"]).toEqual(
            headers.authorization === undefined ? BasicChallenge : undefined
          )
        }
      }
      expect(yield* Ref.get(state)).toEqual(initial)
    })
  )

  it.effect("$admins, the $ops group and the ops login pass", () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      for (const login of ["admin", "ops", "jo"]) {
        expect((yield* send("GET", "/admin/scavenge/last", { authorization: basic(login) })).status).toBe(200)
      }
    })
  )
})

describe("POST /admin/scavenge", () => {
  it.effect("starts with the defaults and answers 200 ScavengeId in text by default, with no Location", () =>
    Effect.gen(function* () {
      const { send, state } = yield* setup()
      const r = yield* send("POST", "/admin/scavenge")
      expect(r.status).toBe(200)
      expect(r.reason).toBe("OK")
      expect(r.headers["Content-Type"]).toBe("text/plain; charset=utf-8")
      expect(r.headers["Location"]).toBeUndefined()
      expect(text(r)).toBe(`ScavengeId: ${ID_1}`)
      expect((yield* Ref.get(state)).started).toEqual([
        { threads: 1, threshold: undefined, throttlePercent: 100, syncOnly: false, startFromChunk: 0 }
      ])
    })
  )

  it.effect("answers in JSON for ?format=json or Accept: application/json, and text for */*", () =>
    Effect.gen(function* () {
      const { send, state } = yield* setup()
      const viaFormat = yield* send("POST", "/admin/scavenge?format=json")
      expect(viaFormat.headers["Content-Type"]).toBe("application/json; charset=utf-8")
      expect(text(viaFormat)).toBe(`{\n  "scavengeId": "${ID_1}"\n}`)
      yield* Ref.update(state, (s) => ({ ...s, running: undefined }))
      const viaAccept = yield* send("POST", "/admin/scavenge", as("application/json"))
      expect(json(viaAccept)).toEqual({ scavengeId: ID_1 })
      yield* Ref.update(state, (s) => ({ ...s, running: undefined }))
      expect(text(yield* send("POST", "/admin/scavenge", as("*/*")))).toBe(`ScavengeId: ${ID_1}`)
    })
  )

  it.effect("answers in XML as XmlSerializer writes ScavengeResultDto (text/xml and application/xml)", () =>
    Effect.gen(function* () {
      const { send, state } = yield* setup()
      for (const type of ["text/xml", "application/xml"]) {
        yield* Ref.update(state, (s) => ({ ...s, running: undefined }))
        const r = yield* send("POST", "/admin/scavenge", as(type))
        expect(r.headers["Content-Type"]).toBe(`${type}; charset=utf-8`)
        expect(text(r)).toBe(
          `<?xml version="1.0" encoding="utf-8"?><ScavengeResultDto ${XML_NS}><ScavengeId>${ID_1}</ScavengeId></ScavengeResultDto>`
        )
        expect(XMLValidator.validate(text(r))).toBe(true)
      }
    })
  )

  it.effect("passes the parsed, clamped options to the scavenger", () =>
    Effect.gen(function* () {
      const { send, state } = yield* setup()
      expect(
        (yield* send("POST", "/admin/scavenge?threads=10&threshold=-1&syncOnly=True&startFromChunk=%2B3")).status
      ).toBe(200)
      expect((yield* Ref.get(state)).started).toEqual([
        { threads: 4, threshold: -1, throttlePercent: 100, syncOnly: true, startFromChunk: 3 }
      ])
    })
  )

  it.effect(
    "refuses bad parameters with the reference's message (text/plain, no charset) before starting anything",
    () =>
      Effect.gen(function* () {
        const { send, state } = yield* setup()
        const cases: ReadonlyArray<[string, string]> = [
          ["startFromChunk=-1&threads=0", "startFromChunk must be a positive integer"],
          ["threads=0&threshold=x", "threads must be a 1 or above"],
          ["threshold=x&throttlePercent=0", "threshold must be an integer"],
          ["throttlePercent=101&syncOnly=x", "throttlePercent must be between 1 and 100 inclusive"],
          ["throttlePercent=50&threads=2&syncOnly=x", "throttlePercent must be 100 for a multi-threaded scavenge"],
          ["syncOnly=yes", "syncOnly must be a boolean"]
        ]
        for (const [query, message] of cases) {
          const r = yield* send("POST", `/admin/scavenge?${query}&format=json`)
          expect([query, r.status, r.reason, r.headers["Content-Type"], text(r)]).toEqual([
            query,
            400,
            "Bad Request",
            "text/plain",
            message
          ])
        }
        expect((yield* Ref.get(state)).started).toEqual([])
      })
  )

  it.effect("while a scavenge runs: 400 `Scavenge is already running` in text/plain whatever was asked", () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      expect((yield* send("POST", "/admin/scavenge")).status).toBe(200)
      const r = yield* send("POST", "/admin/scavenge?format=json")
      expect([r.status, r.reason, r.headers["Content-Type"], text(r)]).toEqual([
        400,
        "Bad Request",
        "text/plain; charset=utf-8",
        "Scavenge is already running"
      ])
    })
  )
})

describe("GET /admin/scavenge/current", () => {
  it.effect("idle: empty id and link in every format", () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      expect(text(yield* send("GET", "/admin/scavenge/current"))).toBe("ScavengeId: , ScavengeLink: ")
      expect(text(yield* send("GET", "/admin/scavenge/current?format=json"))).toBe(
        `{\n  "scavengeId": "",\n  "scavengeLink": ""\n}`
      )
      expect(text(yield* send("GET", "/admin/scavenge/current?format=xml"))).toBe(
        `<?xml version="1.0" encoding="utf-8"?><ScavengeGetCurrentResultDto ${XML_NS}><ScavengeId /><ScavengeLink /></ScavengeGetCurrentResultDto>`
      )
    })
  )

  it.effect("running: id and link, plus phase and progress in JSON and XML (text keeps the reference's form)", () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      yield* send("POST", "/admin/scavenge")
      const r = yield* send("GET", "/admin/scavenge/current", as("application/json"))
      expect(r.status).toBe(200)
      expect(json(r)).toEqual({
        scavengeId: ID_1,
        scavengeLink: `/admin/scavenge/${ID_1}`,
        phase: "Accumulating",
        progress: { done: 3, total: 10 }
      })
      expect(Object.keys(json(r))).toEqual(["scavengeId", "scavengeLink", "phase", "progress"])
      expect(text(yield* send("GET", "/admin/scavenge/current"))).toBe(
        `ScavengeId: ${ID_1}, ScavengeLink: /admin/scavenge/${ID_1}`
      )
      const xml = text(yield* send("GET", "/admin/scavenge/current", as("application/xml")))
      expect(xml).toBe(
        `<?xml version="1.0" encoding="utf-8"?><ScavengeGetCurrentResultDto ${XML_NS}><ScavengeId>${ID_1}</ScavengeId>` +
          `<ScavengeLink>/admin/scavenge/${ID_1}</ScavengeLink><Phase>Accumulating</Phase>` +
          `<Progress><Done>3</Done><Total>10</Total></Progress></ScavengeGetCurrentResultDto>`
      )
    })
  )
})

describe("GET /admin/scavenge/last", () => {
  it.effect("before any run: the all-zero id, no link, Unknown", () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      expect(json(yield* send("GET", "/admin/scavenge/last?format=json"))).toEqual({
        scavengeId: NO_RUN,
        scavengeLink: "",
        scavengeResult: "Unknown"
      })
      expect(text(yield* send("GET", "/admin/scavenge/last"))).toBe(
        `ScavengeId: ${NO_RUN}, ScavengeLink: , ScavengeResult: Unknown`
      )
      expect(text(yield* send("GET", "/admin/scavenge/last", as("text/xml")))).toBe(
        `<?xml version="1.0" encoding="utf-8"?><ScavengeGetLastResultDto ${XML_NS}><ScavengeId>${NO_RUN}</ScavengeId>` +
          `<ScavengeLink /><ScavengeResult>Unknown</ScavengeResult></ScavengeGetLastResultDto>`
      )
    })
  )

  it.effect("after a run: its id, link and result", () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      yield* send("POST", "/admin/scavenge")
      expect(json(yield* send("GET", "/admin/scavenge/last?format=json"))).toEqual({
        scavengeId: ID_1,
        scavengeLink: `/admin/scavenge/${ID_1}`,
        scavengeResult: "InProgress"
      })
      yield* send("DELETE", "/admin/scavenge/current")
      expect(text(yield* send("GET", "/admin/scavenge/last"))).toBe(
        `ScavengeId: ${ID_1}, ScavengeLink: /admin/scavenge/${ID_1}, ScavengeResult: Stopped`
      )
    })
  )
})

describe("DELETE /admin/scavenge/{scavengeId}", () => {
  it.effect("`current` stops the running scavenge; the id comes back as raw text, a JSON string or <string>", () =>
    Effect.gen(function* () {
      const { send, state } = yield* setup()
      yield* send("POST", "/admin/scavenge")
      const r = yield* send("DELETE", "/admin/scavenge/current")
      expect([r.status, r.reason, r.headers["Content-Type"], text(r)]).toEqual([
        200,
        "OK",
        "text/plain; charset=utf-8",
        ID_1
      ])
      expect((yield* Ref.get(state)).running).toBeUndefined()
      yield* send("POST", "/admin/scavenge")
      expect(text(yield* send("DELETE", "/admin/scavenge/current?format=json"))).toBe(`"${ID_1}"`)
      yield* send("POST", "/admin/scavenge")
      expect(text(yield* send("DELETE", "/admin/scavenge/current?format=xml"))).toBe(
        `<?xml version="1.0" encoding="utf-8"?><string>${ID_1}</string>`
      )
    })
  )

  it.effect("stops by id; an unknown id or nothing running is 404 `Scavenge Id does not exist`", () =>
    Effect.gen(function* () {
      const { send, state } = yield* setup()
      const idle = yield* send("DELETE", "/admin/scavenge/current", as("application/json"))
      expect([idle.status, idle.reason, idle.headers["Content-Type"], text(idle)]).toEqual([
        404,
        "Not Found",
        "text/plain; charset=utf-8",
        "Scavenge Id does not exist"
      ])
      yield* send("POST", "/admin/scavenge")
      const other = yield* send("DELETE", "/admin/scavenge/11111111-2222-4333-8444-555555555555")
      expect([other.status, text(other)]).toEqual([404, "Scavenge Id does not exist"])
      expect((yield* Ref.get(state)).running?.scavengeId).toBe(ID_1)
      expect(text(yield* send("DELETE", `/admin/scavenge/${ID_1}`))).toBe(ID_1)
      expect((yield* Ref.get(state)).stopRequests).toEqual(["current", "11111111-2222-4333-8444-555555555555", ID_1])
    })
  )

  it.effect("answers only after the scavenger reports the run stopped", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const { send, state } = yield* setup(gate)
      yield* send("POST", "/admin/scavenge")
      const pending = yield* Effect.fork(send("DELETE", "/admin/scavenge/current"))
      // Let the request reach the scavenger (and wait there) before looking at it.
      for (let i = 0; i < 100 && (yield* Ref.get(state)).stopRequests.length === 0; i++) yield* Effect.yieldNow()
      expect((yield* Ref.get(state)).stopRequests).toEqual(["current"])
      yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(pending))).toBe(true)
      yield* Deferred.succeed(gate, undefined)
      const r = yield* Fiber.join(pending)
      expect([r.status, text(r)]).toEqual([200, ID_1])
    })
  )

  it.effect("GET /admin/scavenge/{id} is not a route upstream: 405, DELETE allowed", () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      const r = yield* send("GET", `/admin/scavenge/${ID_1}`)
      expect(r.status).toBe(405)
      expect(r.headers["Access-Control-Allow-Methods"]).toBe("DELETE, OPTIONS")
    })
  )
})

describe("POST /admin/mergeindexes", () => {
  it.effect("starts a merge and answers its id in text, JSON and XML", () =>
    Effect.gen(function* () {
      const { send, state } = yield* setup()
      const r = yield* send("POST", "/admin/mergeindexes")
      expect([r.status, r.reason, r.headers["Content-Type"], text(r)]).toEqual([
        200,
        "OK",
        "text/plain; charset=utf-8",
        `MergeIndexesId: ${MERGE_ID}`
      ])
      expect(json(yield* send("POST", "/admin/mergeindexes?format=json"))).toEqual({ mergeIndexesId: MERGE_ID })
      expect(text(yield* send("POST", "/admin/mergeindexes", as("text/xml")))).toBe(
        `<?xml version="1.0" encoding="utf-8"?><MergeIndexesResultDto ${XML_NS}><MergeIndexesId>${MERGE_ID}</MergeIndexesId></MergeIndexesResultDto>`
      )
      expect((yield* Ref.get(state)).merges).toBe(3)
    })
  )
})
