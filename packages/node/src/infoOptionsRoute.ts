/**
 * `GET /info/options`: every option with its value and where it came from, for `$ops`
 * and `$admins`; sensitive values masked. The document is built by config/infoOptions.ts.
 */
import { Effect } from "effect"
import { documentReply, type RouteDef } from "@vellum/http"
import { infoOptions } from "./config/infoOptions.js"
import { NodeConfig } from "./config/NodeConfig.js"

export const infoOptionsRoute: RouteDef<NodeConfig> = {
  method: "GET",
  path: "/info/options",
  access: "ops",
  responseCodecs: ["application/json"],
  handle: (input) =>
    Effect.map(NodeConfig, (loaded) =>
      documentReply(200, "OK", input.responseType, JSON.stringify(infoOptions(loaded), null, 2))
    )
}
