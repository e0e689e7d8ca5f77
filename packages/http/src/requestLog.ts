/**
 * Logging around the request handler, outside the pipeline so that it sees every answer (401s, 404s and
 * 500s included) exactly as the client gets it:
 *
 * - `withClientAddress`: every log line written while a request is handled carries the peer's address as
 *   the `client` annotation (the failed-authentication warnings rely on it).
 * - `withRequestLog` (`LogHttpRequests`): one line per answered request with the method, the path (the
 *   query string and any `user:password@` of an absolute-form target left out), the status and the time
 *   taken. Never headers, credentials or bodies: the reference logs whole requests and responses, which
 *   puts passwords and event data into log files.
 */
import { Effect } from "effect"
import type { HttpRequest } from "./HttpRequest.js"
import type { Reply } from "./Reply.js"

type Handler<R> = (request: HttpRequest) => Effect.Effect<Reply, never, R>

/** The path of a request target, without query string, fragment or userinfo. */
export const loggedPath = (url: string): string => {
  const target = url.split(/[?#]/, 1)[0] ?? ""
  if (target.startsWith("/") || target === "*") return target
  try {
    return new URL(target).pathname // absolute-form: scheme, userinfo and host dropped
  } catch {
    return "(invalid target)"
  }
}

export const withClientAddress =
  <R>(handle: Handler<R>): Handler<R> =>
  (request) =>
    Effect.annotateLogs(handle(request), "client", request.remote ?? "unknown")

export const withRequestLog =
  <R>(handle: Handler<R>): Handler<R> =>
  (request) =>
    Effect.clockWith((clock) => {
      const start = clock.unsafeCurrentTimeMillis()
      return Effect.tap(handle(request), (reply) => {
        const method = request.method.toUpperCase()
        const path = loggedPath(request.url)
        const durationMs = clock.unsafeCurrentTimeMillis() - start
        return Effect.logInfo(`HTTP ${method} ${path} ${reply.status} ${durationMs} ms`).pipe(
          Effect.annotateLogs({ method, path, status: reply.status, durationMs })
        )
      })
    })
