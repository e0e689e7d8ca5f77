/**
 * `POST /admin/shutdown` (`$ops`/`$admins`): the node reports `ShuttingDown` (so
 * `/health/live` turns 503 and `/info` says so), signals `Shutdown`, and answers 200 `OK` with no body and
 * no Content-Type — a bare status reply — before the node actually stops.
 */
import { Effect, Ref } from "effect"
import { reply } from "../Reply.js"
import type { RouteDef } from "../Route.js"
import { NodeInfo } from "./NodeInfo.js"
import { Shutdown } from "./Shutdown.js"

/** The codecs of `/admin/*`: text first, so a plain POST gets text. */
export const AdminCodecs: ReadonlyArray<string> = ["text/plain", "application/json", "text/xml", "application/xml"]

export const SHUTDOWN_REASON = "shutdown requested over HTTP (/admin/shutdown)"

export const shutdownRoute: RouteDef<NodeInfo | Shutdown> = {
  method: "POST",
  path: "/admin/shutdown",
  access: "ops",
  responseCodecs: AdminCodecs,
  handle: () =>
    Effect.gen(function* () {
      const info = yield* NodeInfo
      const shutdown = yield* Shutdown
      yield* Ref.set(info.state, "ShuttingDown")
      yield* shutdown.request(SHUTDOWN_REASON)
      return reply(200, { reason: "OK" })
    })
}
