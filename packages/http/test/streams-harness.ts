/**
 * Shared helpers for the pipeline and stream-route tests: a real EventStore on an in-memory disk, simple
 * Authenticator/StreamAccess test layers, and a request function that runs the whole pipeline in-process.
 *
 * Users of the test authenticator: `admin:changeit` ($admins), `ops:changeit` ($ops), `user:pass` (no
 * group); any other Basic credentials fail; `Basic !!!` is malformed. StreamAccess denies what the
 * `deny` set lists as `"<user>|<stream>|<action>"` (user "" = anonymous) and allows everything else.
 */
import { Effect, Scope, Exit } from "effect"
import { Disk, MemoryDisk } from "@vellum/platform"
import {
  Authenticator,
  AuthenticationFailed,
  AuthenticationUnavailable,
  MalformedCredentials,
  StreamAccess,
  anonymousPrincipal,
  type AuthenticatorService,
  type Principal,
  type StreamAccessService
} from "@vellum/security"
import { EventStore, defaultStorageConfig, make, type EventStoreService, type StorageConfig } from "@vellum/storage"
import { defaultHttpSettings, makeHandler, streamRoutes, type HttpSettings, type Reply } from "../src/index.js"

const Users: Readonly<Record<string, { password: string; groups: ReadonlyArray<string> }>> = {
  admin: { password: "changeit", groups: ["$admins"] },
  ops: { password: "changeit", groups: ["$ops"] },
  user: { password: "pass", groups: [] }
}

export const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`
export const AdminAuth = basic("admin", "changeit")
export const UserAuth = basic("user", "pass")

export interface TestAuthOptions {
  /** Every authentication answers AuthenticationUnavailable (the user store is not ready). */
  readonly unavailable?: boolean
}

export const testAuthenticator = (options: TestAuthOptions = {}): AuthenticatorService => ({
  authenticate: (headers) =>
    Effect.suspend(
      (): Effect.Effect<Principal, AuthenticationFailed | AuthenticationUnavailable | MalformedCredentials> => {
        if (options.unavailable === true) return Effect.fail(new AuthenticationUnavailable({ message: "not ready" }))
        const header = headers["authorization"]
        if (header === undefined || !header.startsWith("Basic ")) return Effect.succeed(anonymousPrincipal)
        const token = header.slice(6).trim()
        if (!/^[A-Za-z0-9+/]+=*$/.test(token))
          return Effect.fail(new MalformedCredentials({ message: "Invalid Basic credentials" }))
        const text = Buffer.from(token, "base64").toString("utf8")
        const colon = text.indexOf(":")
        if (colon < 0) return Effect.fail(new MalformedCredentials({ message: "Invalid Basic credentials" }))
        const name = text.slice(0, colon)
        const user = Users[name]
        if (user === undefined || user.password !== text.slice(colon + 1))
          return Effect.fail(new AuthenticationFailed({ message: "bad credentials" }))
        return Effect.succeed({ name, groups: user.groups, anonymous: false })
      }
    )
})

export const testStreamAccess = (deny: ReadonlySet<string>): StreamAccessService => ({
  check: (principal, stream, action) =>
    Effect.succeed(principal.groups.includes("$admins") || !deny.has(`${principal.name}|${stream}|${action}`))
})

export const storageConfig = (overrides: Partial<StorageConfig> = {}): StorageConfig => ({
  ...defaultStorageConfig("/db"),
  chunkSize: 1024 * 1024,
  memtableMaxEntries: 64,
  preallocateChunks: false,
  ...overrides
})

export interface RequestOptions {
  readonly headers?: Record<string, string>
  readonly body?: string | Uint8Array | unknown
  /** Basic credentials (a header value); default none (anonymous). */
  readonly auth?: string
  /** As the live adapter hands over a body it stopped reading at the size limit. */
  readonly bodyTooLarge?: boolean
}

export interface TestNode {
  readonly store: EventStoreService
  /** The node's disk (tests fill it, or make it fail). */
  readonly mem: MemoryDisk
  readonly request: (method: string, url: string, options?: RequestOptions) => Effect.Effect<Reply>
  /** The deny set of the StreamAccess test layer (mutable for tests). */
  readonly deny: Set<string>
}

export interface TestNodeOptions {
  readonly settings?: Partial<HttpSettings>
  readonly storage?: Partial<StorageConfig>
  readonly auth?: TestAuthOptions
}

const bodyBytes = (body: RequestOptions["body"]): Uint8Array | undefined => {
  if (body === undefined) return undefined
  if (typeof body === "string") return Buffer.from(body, "utf8")
  if (body instanceof Uint8Array) return body
  return Buffer.from(JSON.stringify(body), "utf8")
}

/**
 * A node with the stream routes; anonymous stream access is on by default here (as in the reference's own
 * test harness) so tests can leave credentials out unless they test the gates.
 */
export const makeTestNode = (options: TestNodeOptions = {}): Effect.Effect<TestNode, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const mem = new MemoryDisk()
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const store = yield* make(storageConfig(options.storage)).pipe(
      Effect.provideService(Disk, mem.service),
      Scope.extend(scope)
    )
    const deny = new Set<string>()
    const settings: HttpSettings = { ...defaultHttpSettings, allowAnonymousStreamAccess: true, ...options.settings }
    const handle = makeHandler(streamRoutes, settings)
    const authenticator = testAuthenticator(options.auth)
    const access = testStreamAccess(deny)
    const request = (method: string, url: string, opts: RequestOptions = {}) =>
      handle({
        method,
        url,
        headers: {
          Host: "localhost:2113",
          ...(opts.auth !== undefined ? { Authorization: opts.auth } : {}),
          ...opts.headers
        },
        body: bodyBytes(opts.body),
        ...(opts.bodyTooLarge === true ? { bodyTooLarge: true } : {})
      }).pipe(
        Effect.provideService(EventStore, store),
        Effect.provideService(Authenticator, authenticator),
        Effect.provideService(StreamAccess, access)
      )
    return { store, mem, request, deny }
  })

/** A header of a reply, by case-insensitive name (arrays joined with ", "). */
export const header = (reply: Reply, name: string): string | undefined => {
  const key = Object.keys(reply.headers).find((k) => k.toLowerCase() === name.toLowerCase())
  if (key === undefined) return undefined
  const value = reply.headers[key]!
  return typeof value === "string" ? value : value.join(", ")
}

export const text = (reply: Reply): string =>
  reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : Buffer.from(reply.body).toString("utf8")

export const json = (reply: Reply): any => JSON.parse(text(reply))

export const EventsJson = "application/vnd.eventstore.events+json"

export const uuid = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

/** An events+json body for the given events (`n` → id uuid(n), type "T", data {"n": n}). */
export const eventsBody = (...ns: ReadonlyArray<number>) =>
  JSON.stringify(ns.map((n) => ({ eventId: uuid(n), eventType: "T", data: { n } })))

/** POST events+json to a stream; returns the reply. */
export const appendEvents = (
  node: TestNode,
  stream: string,
  ns: ReadonlyArray<number>,
  headers: Record<string, string> = {}
) =>
  node.request("POST", `/streams/${encodeURIComponent(stream)}`, {
    headers: { "Content-Type": EventsJson, ...headers },
    body: eventsBody(...ns)
  })
