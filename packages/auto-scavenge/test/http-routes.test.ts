// The /auto-scavenge/* routes end to end through the generic pipeline (routing, authentication, the
// handler's own role checks), over a fake AutoScavenge that records the commands it gets and answers
// with whatever reply the test sets.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import { defaultHttpSettings, makeHandler, type Reply } from "@vellum/http"
import { AuthenticationFailed, Authenticator, anonymousPrincipal, type Principal } from "@vellum/security"
import { AutoScavenge, autoScavengeRoutes, type AutoScavengeReply, type UserCommand } from "../src/index.js"
import { INVALID_CRON, INVALID_PAYLOAD, MISSING_SCHEDULE, SCHEDULE_NOT_STRING } from "../src/http/configureBody.js"

// The fake authenticator takes the Authorization header as a login name; none is anonymous, an unknown one a 401.
const principals: Record<string, Principal> = {
  admin: { name: "admin", groups: ["$admins"], anonymous: false },
  ops: { name: "ops", groups: [], anonymous: false },
  jo: { name: "jo", groups: ["$ops"], anonymous: false },
  reader: { name: "reader", groups: ["readers"], anonymous: false }
}
const ADMIN = "admin"
const READER = "reader"

const authenticatorLayer = Layer.succeed(Authenticator, {
  authenticate: (headers) => {
    const login = headers["authorization"]
    if (login === undefined) return Effect.succeed(anonymousPrincipal)
    const principal = principals[login]
    return principal === undefined
      ? Effect.fail(new AuthenticationFailed({ message: "bad credentials" }))
      : Effect.succeed(principal)
  }
})

const STATUS: AutoScavengeReply = {
  _tag: "Status",
  body: { state: "Waiting", schedule: "0 6 * * 6", timeUntilNextCycle: "1.13:14:32.6299115" }
}

/** A fake service answering every command with `answer` (or STATUS for GetStatus), recording what it got. */
const setup = (answer: AutoScavengeReply = { _tag: "Done" }, settings = defaultHttpSettings) =>
  Effect.gen(function* () {
    const commands = yield* Ref.make<ReadonlyArray<UserCommand>>([])
    const service = {
      execute: (command: UserCommand) =>
        Effect.as(
          Ref.update(commands, (all) => [...all, command]),
          command._tag === "GetStatus" && answer._tag === "Done" ? STATUS : answer
        ),
      figures: Effect.die("not used by the routes")
    }
    const handle = makeHandler(autoScavengeRoutes, settings)
    const send = (
      method: string,
      path: string,
      options: { headers?: Record<string, string>; body?: string; login?: string | null } = {}
    ): Effect.Effect<Reply> => {
      const login = options.login === undefined ? ADMIN : options.login
      return handle({
        method,
        url: `/auto-scavenge/${path}`,
        headers: { host: "127.0.0.1:2113", ...(login === null ? {} : { authorization: login }), ...options.headers },
        body: options.body === undefined ? undefined : new TextEncoder().encode(options.body)
      }).pipe(Effect.provideService(AutoScavenge, service), Effect.provide(authenticatorLayer))
    }
    return { send, commands: Ref.get(commands) }
  })

const text = (r: Reply) => (typeof r.body === "string" ? r.body : Buffer.from(r.body ?? []).toString("utf8"))
const JSON_UTF8 = "application/json; charset=utf-8"

/** A configure request's body and Content-Type (null: none). */
const configure = (
  body: string | undefined,
  contentType: string | null = "application/json"
): { headers: Record<string, string>; body?: string } => ({
  headers: contentType === null ? {} : { "content-type": contentType },
  ...(body === undefined ? {} : { body })
})

describe("the route table", () => {
  it("serves the reference's five paths", () => {
    expect(autoScavengeRoutes.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /auto-scavenge/enabled",
      "GET /auto-scavenge/status",
      "POST /auto-scavenge/configure",
      "POST /auto-scavenge/pause",
      "POST /auto-scavenge/resume"
    ])
  })
})

describe("authentication and roles", () => {
  const all: ReadonlyArray<[string, string]> = [
    ["GET", "enabled"],
    ["GET", "status"],
    ["POST", "configure"],
    ["POST", "pause"],
    ["POST", "resume"]
  ]
  const commands: ReadonlyArray<[string, string]> = all.slice(2)

  it.effect("anonymous callers get 401 on every route, even when anonymous endpoint access is allowed", () =>
    Effect.gen(function* () {
      for (const allowAnonymousEndpointAccess of [false, true]) {
        const { send, commands: sent } = yield* setup(
          { _tag: "Done" },
          {
            ...defaultHttpSettings,
            allowAnonymousEndpointAccess
          }
        )
        for (const [method, path] of all) {
          const r = yield* send(method, path, { login: null, ...configure('{"schedule":"* * * * *"}') })
          expect([method, path, r.status, text(r)]).toEqual([method, path, 401, ""])
        }
        expect(yield* sent).toEqual([])
      }
    })
  )

  it.effect("a user outside $ops/$admins gets 403 on the commands and nothing is executed", () =>
    Effect.gen(function* () {
      const { send, commands: sent } = yield* setup()
      for (const [method, path] of commands) {
        const r = yield* send(method, path, { login: READER, ...configure('{"schedule":"* * * * *"}') })
        expect([path, r.status, r.reason, text(r)]).toEqual([path, 403, "Forbidden", ""])
      }
      expect(yield* sent).toEqual([])
    })
  )

  it.effect("any authenticated user reads enabled and status", () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      for (const path of ["enabled", "status"]) {
        expect((yield* send("GET", path, { login: READER })).status).toBe(200)
      }
    })
  )

  it.effect("$admins, the $ops group and the ops login may pause", () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      for (const login of ["admin", "ops", "jo"]) {
        expect((yield* send("POST", "pause", { login })).status).toBe(200)
      }
    })
  )
})

describe("GET /auto-scavenge/enabled", () => {
  it.effect('answers 200 {"enabled":true} in JSON, whatever Accept asks for', () =>
    Effect.gen(function* () {
      const { send, commands } = yield* setup()
      for (const accept of [undefined, "text/xml", "application/json"]) {
        const r = yield* send("GET", "enabled", { headers: accept === undefined ? {} : { accept } })
        expect([r.status, r.headers["Content-Type"], text(r)]).toEqual([200, JSON_UTF8, '{"enabled":true}'])
      }
      expect(yield* commands).toEqual([])
    })
  )
})

describe("GET /auto-scavenge/status", () => {
  it.effect("executes GetStatus and answers the status document as JSON", () =>
    Effect.gen(function* () {
      const { send, commands } = yield* setup()
      const r = yield* send("GET", "status")
      expect([r.status, r.headers["Content-Type"]]).toEqual([200, JSON_UTF8])
      expect(text(r)).toBe('{"state":"Waiting","schedule":"0 6 * * 6","timeUntilNextCycle":"1.13:14:32.6299115"}')
      expect(yield* commands).toEqual([{ _tag: "GetStatus" }])
    })
  )

  it.effect("a failure is a 500 problem+json with the detail", () =>
    Effect.gen(function* () {
      const { send } = yield* setup({ _tag: "Failed", detail: "No leader node was found in the cluster" })
      const r = yield* send("GET", "status")
      expect([r.status, r.headers["Content-Type"]]).toEqual([500, "application/problem+json"])
      expect(JSON.parse(text(r))).toEqual({
        type: "https://tools.ietf.org/html/rfc9110#section-15.6.1",
        title: "An error occurred while processing your request.",
        status: 500,
        detail: "No leader node was found in the cluster"
      })
    })
  )
})

describe("the service's replies to pause and resume", () => {
  it.effect("Done → 200 {}; Accepted → 202 with no body; Rejected → 400 with a JSON string; Failed → 500", () =>
    Effect.gen(function* () {
      for (const path of ["pause", "resume"]) {
        const done = yield* Effect.flatMap(setup({ _tag: "Done" }), ({ send }) => send("POST", path))
        expect([done.status, done.headers["Content-Type"], text(done)]).toEqual([200, JSON_UTF8, "{}"])

        const accepted = yield* Effect.flatMap(setup({ _tag: "Accepted" }), ({ send }) => send("POST", path))
        expect([accepted.status, accepted.headers["Content-Type"], text(accepted)]).toEqual([202, undefined, ""])

        const message = "Auto scavenge process is currently pausing"
        const refused = yield* Effect.flatMap(setup({ _tag: "Rejected", message }), ({ send }) => send("POST", path))
        expect([refused.status, refused.headers["Content-Type"], text(refused)]).toEqual([
          400,
          JSON_UTF8,
          JSON.stringify(message)
        ])

        const failed = yield* Effect.flatMap(setup({ _tag: "Failed", detail: "Not leader" }), ({ send }) =>
          send("POST", path)
        )
        expect([failed.status, JSON.parse(text(failed)).detail]).toEqual([500, "Not leader"])
      }
    })
  )

  it.effect("each executes its own command", () =>
    Effect.gen(function* () {
      const { send, commands } = yield* setup()
      yield* send("POST", "pause")
      yield* send("POST", "resume")
      expect(yield* commands).toEqual([{ _tag: "Pause" }, { _tag: "Resume" }])
    })
  )
})

describe("POST /auto-scavenge/configure", () => {
  const rejectedWith = (r: Reply, message: string) => {
    expect([r.status, r.headers["Content-Type"], text(r)]).toEqual([400, JSON_UTF8, JSON.stringify(message)])
  }

  it.effect("configures the expanded rendering of the schedule and answers 200 {}", () =>
    Effect.gen(function* () {
      const { send, commands } = yield* setup()
      const r = yield* send("POST", "configure", configure('{"schedule":"*/15 * * * *"}'))
      expect([r.status, text(r)]).toEqual([200, "{}"])
      const weekdays = yield* send("POST", "configure", configure('{"other":1,"schedule":"0 9 * * MON-FRI"}'))
      expect(weekdays.status).toBe(200)
      expect(yield* commands).toEqual([
        { _tag: "Configure", schedule: "0,15,30,45 * * * *" },
        { _tag: "Configure", schedule: "0 9 * * 1-5" }
      ])
    })
  )

  it.effect("takes any JSON Content-Type: a charset, another case, a +json type", () =>
    Effect.gen(function* () {
      const { send, commands } = yield* setup()
      for (const type of ["application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"]) {
        expect((yield* send("POST", "configure", configure('{"schedule":"* * * * *"}', type))).status).toBe(200)
      }
      expect((yield* commands).length).toBe(3)
    })
  )

  it.effect('a null body is 400 "Invalid payload"', () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      rejectedWith(yield* send("POST", "configure", configure("null")), INVALID_PAYLOAD)
    })
  )

  it.effect("no schedule, or one spelled in another case, is the missing-required-property 400", () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      expect(MISSING_SCHEDULE).toBe(
        "JSON deserialization for type 'EventStore.AutoScavenge.AutoScavengePlugin+AutoScavengeConfigurationPayload' " +
          "was missing required properties, including the following: schedule"
      )
      for (const body of ["{}", '{"Schedule":"* * * * *"}', '{"SCHEDULE":"* * * * *"}']) {
        rejectedWith(yield* send("POST", "configure", configure(body)), MISSING_SCHEDULE)
      }
    })
  )

  it.effect('a schedule that is not a string is 400 "CRON expression can only be a string"', () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      for (const value of ["5", "null", "true", "[]", '{"cron":"* * * * *"}']) {
        rejectedWith(yield* send("POST", "configure", configure(`{"schedule":${value}}`)), SCHEDULE_NOT_STRING)
      }
    })
  )

  it.effect('a schedule that does not parse is 400 "Invalid CRON expression"', () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      for (const cron of ["not a cron", "* * * *", "0 0 * * * *", "61 * * * *", ""]) {
        rejectedWith(yield* send("POST", "configure", configure(JSON.stringify({ schedule: cron }))), INVALID_CRON)
      }
    })
  )

  it.effect("malformed JSON, an empty body and a body that is not an object are 400s with a reason", () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      for (const body of ['{"schedule":', "", undefined, '["* * * * *"]', '"* * * * *"', "42"]) {
        const r = yield* send("POST", "configure", configure(body))
        expect([r.status, r.headers["Content-Type"]]).toEqual([400, JSON_UTF8])
        expect(JSON.parse(text(r))).toMatch(/JSON/)
      }
    })
  )

  it.effect("a Content-Type that is not JSON, or none, is a 500 problem+json, as in the reference", () =>
    Effect.gen(function* () {
      const { send } = yield* setup()
      for (const type of ["text/plain", "application/x-www-form-urlencoded", null]) {
        const r = yield* send("POST", "configure", configure('{"schedule":"* * * * *"}', type))
        expect([r.status, r.headers["Content-Type"]]).toEqual([500, "application/problem+json"])
        expect(JSON.parse(text(r)).detail).toMatch(/Content-Type/)
      }
    })
  )

  it.effect("nothing is executed for a body that is refused", () =>
    Effect.gen(function* () {
      const { send, commands } = yield* setup()
      yield* send("POST", "configure", configure("null"))
      yield* send("POST", "configure", configure('{"schedule":1}'))
      yield* send("POST", "configure", configure('{"schedule":"* * * * *"}', "text/plain"))
      expect(yield* commands).toEqual([])
    })
  )

  it.effect("the service's rejection (not the leader) is a 400 with its message", () =>
    Effect.gen(function* () {
      const { send } = yield* setup({ _tag: "Rejected", message: "Node is not the leader" })
      rejectedWith(yield* send("POST", "configure", configure('{"schedule":"* * * * *"}')), "Node is not the leader")
    })
  )
})
