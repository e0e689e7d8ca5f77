/**
 * The request pipeline, one generic piece of code over a list of RouteDefs:
 *
 *   /health/live (node/health.ts) → CORS pre-flight → body size limit → authentication (bad
 *   credentials: 401 before routing) → route match (404; OPTIONS → 200; 405) → request codec (415) →
 *   response codec (406, or 400 for an unknown `?format=`, a 500 upstream) → first-level authorization (bare 401) →
 *   leader routing (a write or requires-leader on a non-leader: 307 to the leader, or 503; a `forwardsToLeader`
 *   route on a follower: passed to the leader and its reply relayed as it is, forwarding/) → handler (with a
 *   deadline: 408)
 *
 * and the cross-cutting response rules on the way out. It is plain code from a request to an Answer (a Reply
 * now, a Reply later through a callback, or an Effect where something must run: Answer.ts); the Effect form
 * the simulator calls is that same code run in the fiber's services, so the live server and the simulator
 * call the same code. Nothing in it can fail or throw: defects in a handler become a 500 with a reason.
 */
import { Cause, Context, Duration, Effect, type Clock } from "effect"
import {
  Authenticator,
  isAdmin,
  isOpsOrAdmin,
  type AuthenticationFailed,
  type AuthenticationUnavailable,
  type MalformedCredentials,
  type Principal
} from "@vellum/security"
import { andThen, mapAnswer, settledValue, toEffect, type Answer, type Surroundings } from "./Answer.js"
import type { HttpSettings } from "./HttpConfig.js"
import { firstHeader, normalizeHeaders, type HttpRequest, type NormalizedHeaders } from "./HttpRequest.js"
import type { Access, RouteDef, RouteInput } from "./Route.js"
import type { Reply } from "./Reply.js"
import { makeRouter } from "./router.js"
import { parseTarget, type RequestTarget } from "./requestTarget.js"
import { selectRequestType, selectResponseType } from "./mediaType.js"
import { buildBaseUrl, rawRequestUrl } from "./baseUrl.js"
import { finishReply, safeReason } from "./responseHeaders.js"
import { badRequest, emptyReply, unauthorizedBare } from "./replies.js"
import { HEALTH_LIVE_PATH, HEALTH_READY_PATH, healthLive, healthReady } from "./endpoints/health.js"
import { routeFamily } from "./endpoints/NodeMetrics.js"
import { notBuiltReply } from "./notBuilt.js"
import { bodyTooLargeReply } from "./bodyLimit.js"
import { challengeAnonymous } from "./challenge.js"
import { leaderRoutingReply, needsLeader, type NodeRole } from "./leaderRouting.js"
import {
  forwardFailedReply,
  forwardTarget,
  forwardTimeoutMillis,
  sendToLeader,
  type LeaderForwarding,
  type OutgoingRequest
} from "./forwarding/forwardToLeader.js"

/**
 * The request processor. Called, it is an Effect (the simulator, tests, the logging wrappers); `answer` is
 * the same processing as plain code (Answer.ts), which `serveHttp` calls with its runtime's services, forking
 * a fiber only when the answer is an Effect. The Effect form is `answer` run in the fiber's surroundings.
 */
export interface RequestHandler<R> {
  (request: HttpRequest): Effect.Effect<Reply, never, R>
  readonly answer?: (request: HttpRequest, surroundings: Surroundings<R>) => Answer<R>
}

/** Applies the cross-cutting response rules to a reply (`methods`: the route's, for `Allow`). */
type Finish = (reply: Reply, methods?: ReadonlyArray<string>) => Reply

const bare = (status: number, reason: string, headers: Record<string, string> = {}): Reply => ({
  status,
  reason,
  headers,
  bare: true
})

/** A true CORS pre-flight (policy: any origin, methods GET/OPTIONS, any header), answered before auth. */
const isPreflight = (method: string, headers: NormalizedHeaders) =>
  method === "OPTIONS" && headers["origin"] !== undefined && headers["access-control-request-method"] !== undefined

const preflight = (headers: NormalizedHeaders): Reply => {
  const requested = headers["access-control-request-method"]!.trim().toUpperCase()
  const out: Record<string, string> = { "Access-Control-Allow-Origin": "*" }
  if (requested === "GET" || requested === "OPTIONS") {
    out["Access-Control-Allow-Methods"] = requested
    const requestedHeaders = headers["access-control-request-headers"]
    if (requestedHeaders !== undefined && requestedHeaders.trim() !== "")
      out["Access-Control-Allow-Headers"] = requestedHeaders.trim()
  }
  return bare(204, "No Content", out)
}

/** First-level authorization for the route's access level. */
const authorized = (access: Access, principal: Principal, settings: HttpSettings): boolean => {
  switch (access) {
    case "anonymous":
    case "handler":
      return true
    case "authenticated":
      return !principal.anonymous || settings.allowAnonymousEndpointAccess
    case "ops":
      return isOpsOrAdmin(principal)
    case "admins":
      return isAdmin(principal)
  }
}

/** Seconds of a valid `Kurrent-LongPoll`/`ES-LongPoll` header (the request deadline grows by it). */
const longPollSeconds = (headers: NormalizedHeaders): number => {
  const value = firstHeader(headers, "kurrent-longpoll", "es-longpoll")
  if (value === undefined || !/^\s*\+?\d{1,9}\s*$/.test(value)) return 0
  return Number(value)
}

const internalError = (cause: Cause.Cause<unknown>): Reply => {
  const defect = Cause.squash(cause)
  const message = defect instanceof Error ? defect.message : String(defect)
  return {
    status: 500,
    reason: safeReason(`Internal Server Error: ${message}`),
    headers: { "Content-Type": "text/plain; charset=utf-8" },
    body: ""
  }
}

/**
 * Builds the request processor for a route list. Handlers get the settings in their input; what else
 * they need (EventStore, StreamAccess, …) stays in the returned effect's requirements.
 */
export const makeHandler = <R>(
  routes: ReadonlyArray<RouteDef<R>>,
  settings: HttpSettings
): RequestHandler<R | Authenticator> => {
  const router = makeRouter(routes)

  /**
   * Everything after authentication, in plain code up to the handler. The pipeline is written with flatMaps
   * rather than a generator, and with no Effect step it can do without: each step is about a microsecond,
   * a fifth of a single-event append's CPU was the Effect runtime, and this runs for every request.
   */
  const afterAuthentication = (
    request: HttpRequest,
    method: string,
    headers: NormalizedHeaders,
    target: RequestTarget,
    principal: Principal,
    finish: Finish,
    services: Context.Context<R>,
    clock: Clock.Clock
  ): Answer<R> => {
    const match = router.match(target.segments)
    if (match._tag === "NotFound") return finish(notBuiltReply(target.segments) ?? emptyReply(404, "Not Found"))
    if (method === "OPTIONS") return finish(emptyReply(200, "OK"), match.allowed)
    const bound = match.forMethod(method)
    if (bound === undefined) return finish(emptyReply(405, "Method Not Allowed"), match.allowed)
    const route = bound.route

    let requestType: string | undefined
    if (route.requestCodecs !== undefined && route.requestCodecs.length > 0 && method !== "GET") {
      requestType = selectRequestType(route.requestCodecs, headers["content-type"])
      if (requestType === undefined) return finish(emptyReply(415, "Invalid or missing Content-Type"))
    }
    const choice =
      route.ignoresAccept === true
        ? ({ _tag: "Chosen", type: route.responseCodecs[0]! } as const)
        : selectResponseType(route.responseCodecs, target.query.get("format"), headers["accept"])
    if (choice._tag === "UnknownFormat") return finish(emptyReply(400, `Unknown format requested: ${choice.format}`))
    if (choice._tag === "NotAcceptable")
      return finish(emptyReply(406, "Requested URI is not available in requested format"))

    if (!authorized(route.access, principal, settings)) return finish(unauthorizedBare)

    const scheme = request.scheme ?? "http"
    const input: RouteInput = {
      principal,
      params: bound.params,
      query: target.query,
      headers,
      body: request.body,
      baseUrl: buildBaseUrl(headers, scheme, settings),
      requestUrl: rawRequestUrl(headers, scheme, target.rawPath, target.rawQuery),
      responseType: choice.type,
      requestType,
      settings
    }
    // Passed to the leader, or answered here; never redirected (forwarding/).
    if (route.forwardsToLeader === true) {
      if (settings.leaderForwarding === undefined || request.forwarded === true)
        return runHandler(route, input, match.allowed, finish, services, clock)
      const outgoing = { request, headers, scheme, rawPath: target.rawPath, rawQuery: target.rawQuery }
      return forwardOrServe(settings.leaderForwarding, route, input, outgoing, match.allowed, finish, services, clock)
    }
    const writes = route.writes === true
    // Only requests that need the leader read the node's role: plain reads pay nothing for it.
    if (!needsLeader({ writes, headers })) return runHandler(route, input, match.allowed, finish, services, clock)
    const routed = { writes, headers, scheme, rawPath: target.rawPath, rawQuery: target.rawQuery }
    const routeFor = (role: NodeRole): Answer<R> => {
      const answer = leaderRoutingReply(routed, role)
      return answer === undefined
        ? runHandler(route, input, match.allowed, finish, services, clock)
        : finish(answer, match.allowed)
    }
    const roleNow = settings.nodeRoleNow?.() ?? settledValue(settings.nodeRole)
    if (roleNow !== undefined) return routeFor(roleNow)
    return Effect.flatMap(settings.nodeRole, (role) => toEffect(routeFor(role)))
  }

  /**
   * A `forwardsToLeader` route: passed to the leader this node follows, whose reply is relayed as it is (it
   * was finished there), or served here when this node leads or knows no leader.
   */
  const forwardOrServe = (
    forwarding: LeaderForwarding,
    route: RouteDef<R>,
    input: RouteInput,
    outgoing: Omit<OutgoingRequest, "baseUrl">,
    allowed: ReadonlyArray<string>,
    finish: Finish,
    services: Context.Context<R>,
    clock: Clock.Clock
  ): Effect.Effect<Reply, never, R> =>
    Effect.flatMap(settings.nodeRole, (role) => {
      const target = forwardTarget(role, forwarding)
      if (target === undefined) return toEffect(runHandler(route, input, allowed, finish, services, clock))
      const timeout = forwardTimeoutMillis(settings.requestTimeoutMillis, longPollSeconds(input.headers))
      return Effect.map(
        sendToLeader(forwarding, target, { ...outgoing, baseUrl: input.baseUrl }, timeout),
        (relayed) => relayed ?? finish(forwardFailedReply, allowed)
      )
    })

  const handlerFailed = (defect: unknown): Effect.Effect<Reply> =>
    Effect.as(Effect.logError("HTTP handler failed", defect), internalError(Cause.die(defect)))

  /**
   * Runs the route's handler (its plain `answer` when it has one): its defects become a 500, and long polls get
   * a deadline (408).
   */
  const runHandler = (
    route: RouteDef<R>,
    input: RouteInput,
    allowed: ReadonlyArray<string>,
    finish: Finish,
    services: Context.Context<R>,
    clock: Clock.Clock
  ): Answer<R> => {
    const longPoll = longPollSeconds(input.headers)
    let started: Answer<R>
    try {
      started = route.answer !== undefined ? route.answer(input, services, clock) : route.handle(input)
    } catch (defect) {
      started = Effect.die(defect)
    }
    const finished = (reply: Reply) => finish(reply, allowed)
    if (longPoll === 0 && !Effect.isEffect(started)) {
      // A later reply's defect (in `finish`) is answered like a handler's, never thrown at whoever delivers it.
      return mapAnswer(started, finished, (defect) => Effect.map(handlerFailed(defect), finished))
    }
    const handled = Effect.catchAllDefect(toEffect(started), handlerFailed)
    // The 408 deadline: handlers do not suspend except on the writer, whose own write timeout
    // answers 408 (storageErrors.ts), and in long polls. A timeout here races the handler against a timer in
    // forked fibers, which costs more than a whole cached read (~70 µs per request under load), so only
    // long polls get one.
    if (longPoll === 0) return Effect.map(handled, finished)
    return Effect.timeoutTo(handled, {
      duration: Duration.millis(settings.requestTimeoutMillis + longPoll * 1000),
      onTimeout: () => finish(emptyReply(408, "Server was unable to handle request in time"), allowed),
      onSuccess: finished
    })
  }

  /** Authentication's failures, as the reference answers them. */
  const refusedCredentials = (
    error: AuthenticationFailed | AuthenticationUnavailable | MalformedCredentials,
    finish: Finish
  ): Reply => {
    switch (error._tag) {
      case "AuthenticationFailed":
        return finish(bare(401, "Unauthorized", { "WWW-Authenticate": 'X-Basic realm="ESDB"' }))
      case "AuthenticationUnavailable":
        return finish(bare(503, "Service Unavailable", { "Retry-After": "5" }))
      case "MalformedCredentials":
        return finish({ ...badRequest(error.message), reason: error.message })
    }
  }

  const process = (
    request: HttpRequest,
    services: Context.Context<R | Authenticator>,
    clock: Clock.Clock
  ): Answer<R | Authenticator> => {
    const method = request.method.toUpperCase()
    const headers = normalizeHeaders(request.headers)
    const target = parseTarget(request.url)
    const finish: Finish = (reply, methods) =>
      finishReply(reply, { methods, acceptEncoding: headers["accept-encoding"] })
    if (target._tag === "Invalid") return finish(badRequest(target.reason))

    if (target.rawPath === HEALTH_LIVE_PATH)
      return Effect.map(settings.ready, (ready) => finish(healthLive(method, target.query, ready)))
    if (target.rawPath === HEALTH_READY_PATH) {
      return Effect.zipWith(settings.ready, settings.health, (ready, health) =>
        finish(healthReady(method, ready, health))
      )
    }
    if (isPreflight(method, headers)) return finish(preflight(headers))
    if (request.bodyTooLarge === true || (request.body?.byteLength ?? 0) > settings.maxRequestBodyBytes) {
      return finish(bodyTooLargeReply(target.segments[0], settings.maxRequestBodyBytes))
    }

    // A cached credential check is already settled: no Effect step (Answer.ts).
    return andThen(Context.get(services, Authenticator).authenticate(headers), (exit) => {
      if (exit._tag === "Failure") {
        if (exit.cause._tag === "Fail") return refusedCredentials(exit.cause.error, finish)
        return Effect.orDie(Effect.failCause(exit.cause))
      }
      const principal = exit.value
      // An anonymous caller's 401s carry the Basic challenge too; a reply relayed from the leader is
      // not finished again (the leader did it).
      const finishFor: Finish = principal.anonymous
        ? (reply, methods) => challengeAnonymous(finish(reply, methods), headers)
        : finish
      return afterAuthentication(request, method, headers, target, principal, finishFor, services, clock)
    })
  }

  // Whatever escapes (a defect in the authenticator, in this code) is still an answer, never a crash.
  const escaped = (defect: unknown): Reply =>
    finishReply(internalError(Cause.die(defect)), { methods: undefined, acceptEncoding: undefined })
  const answered = (request: HttpRequest, surroundings: Surroundings<R | Authenticator>): Answer<R | Authenticator> => {
    let answer: Answer<R | Authenticator>
    try {
      answer = process(request, surroundings.context, surroundings.clock)
    } catch (defect) {
      return escaped(defect)
    }
    return Effect.isEffect(answer) ? Effect.catchAllDefect(answer, (defect) => Effect.succeed(escaped(defect))) : answer
  }

  const observe = settings.observeRequest
  // Timed with the Clock service read directly: no timestamp Effects.
  const answer =
    observe === undefined
      ? (request: HttpRequest, surroundings: Surroundings<R | Authenticator>) => answered(request, surroundings)
      : (request: HttpRequest, surroundings: Surroundings<R | Authenticator>): Answer<R | Authenticator> => {
          const clock = surroundings.clock
          const start = clock.unsafeCurrentTimeMillis()
          return mapAnswer(
            answered(request, surroundings),
            (reply) => {
              observe({
                method: request.method.toUpperCase(),
                family: routeFamily(request.url),
                status: reply.status,
                durationMillis: clock.unsafeCurrentTimeMillis() - start,
                requestBytes: request.body?.byteLength ?? 0,
                responseBytes: Number(reply.headers["Content-Length"] ?? 0)
              })
              return reply
            },
            escaped
          )
        }
  const handle = (request: HttpRequest): Effect.Effect<Reply, never, R | Authenticator> =>
    Effect.flatMap(Effect.context<R | Authenticator>(), (context) =>
      Effect.clockWith((clock) => toEffect(answer(request, { context, clock })))
    )
  return Object.assign(handle, { answer })
}
