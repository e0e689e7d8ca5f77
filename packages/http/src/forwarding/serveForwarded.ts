/**
 * Leader forwarding, the leader's side: a request another member passed on is run through this node's own
 * request handler, the one its HTTP server uses (so it is authenticated, routed and logged as if the client
 * had sent it here), marked as forwarded so that it is answered here whatever this node's role, and the
 * finished reply goes back as it is.
 */
import { Effect, type Context, type Scope } from "effect"
import type { NetworkHandlers, NetworkService } from "@vellum/platform"
import type { HttpRequest } from "../HttpRequest.js"
import type { Reply } from "../Reply.js"
import { decodeRequest, encodeReply } from "./messages.js"

type Handler<R> = (request: HttpRequest) => Effect.Effect<Reply, never, R>

/** The network handlers that answer forwarded requests with `handle`, run in `context`. */
export const forwardedRequestHandlers = <R>(handle: Handler<R>, context: Context.Context<R>): NetworkHandlers => ({
  onRequest: (_from, bytes) => {
    const forwarded = decodeRequest(bytes)
    // No answer: the sender gives up as on a lost message and answers its client 500.
    if (forwarded === undefined) return Effect.die("a malformed forwarded HTTP request")
    const request: HttpRequest = {
      method: forwarded.method,
      url: forwarded.url,
      headers: forwarded.headers,
      body: forwarded.body,
      scheme: forwarded.scheme,
      forwarded: true,
      ...(forwarded.remote !== undefined ? { remote: forwarded.remote } : {})
    }
    return Effect.map(Effect.provide(handle(request), context), encodeReply)
  },
  onChannel: (channel) => channel.close
})

/** Answers the requests other members forward here on `network` until the scope closes. */
export const serveForwardedRequests = <R>(
  network: NetworkService,
  handle: Handler<R>
): Effect.Effect<void, never, R | Scope.Scope> =>
  Effect.flatMap(Effect.context<R>(), (context) =>
    Effect.orDie(network.serve(forwardedRequestHandlers(handle, context)))
  )
