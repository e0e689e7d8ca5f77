/**
 * `/stats`, `/stats/{*statPath}`, `/stats/replication` and `/stats/tcp`. `?group=false`
 * gives the flat keys (and refuses a sub-path, as the reference does); `?metadata=true` keeps the display
 * hints of the few stats that have them. A sub-path selects a nested group; a missing one — or one naming a
 * single value — is a 404 with an empty body. Successful replies may be cached for the memoization second.
 */
import { Effect } from "effect"
import type { Reply } from "../../Reply.js"
import type { RouteDef } from "../../Route.js"
import { tryParseBoolean } from "../../dotnetParse.js"
import { badRequestReply, documentReply, formatOf, notFoundReply } from "../replies.js"
import { SERIALIZER_NAMESPACES, XML_DECLARATION, wrapElement } from "../xml.js"
import { NodeStats } from "./NodeStats.js"
import { flatGroup, groupStats, selectGroup, statsJson, statsXml, type FlatStats } from "./StatsTree.js"

export const StatsCodecs: ReadonlyArray<string> = ["application/json", "text/xml", "application/xml"]

const CACHE_HEADERS = { "Cache-Control": "max-age=1, public", Vary: "Accept" }

export const GROUPING_REQUIRED = "Dynamic stats selection works only with grouping enabled"

/** The stats reply for a sub-path (`[]` for the whole document) and the request's query flags. */
export const statsReply = (
  responseType: string,
  stats: FlatStats,
  path: ReadonlyArray<string>,
  query: URLSearchParams
): Reply => {
  const withMetadata = tryParseBoolean(query.get("metadata")) ?? false
  const grouped = tryParseBoolean(query.get("group")) ?? true
  if (!grouped && path.length > 0) return badRequestReply(GROUPING_REQUIRED)
  const tree = grouped ? groupStats(stats) : flatGroup(stats)
  const selected = path.length > 0 ? selectGroup(tree, path) : tree
  if (selected === undefined) return notFoundReply()
  const body = formatOf(responseType) === "xml" ? statsXml(selected, withMetadata) : statsJson(selected, withMetadata)
  return documentReply(responseType, body, CACHE_HEADERS)
}

/** An empty list in the codec's form: `[]`, or the empty array element XmlSerializer writes. */
const emptyListReply = (responseType: string, xmlRoot: string): Reply =>
  documentReply(
    responseType,
    formatOf(responseType) === "xml" ? XML_DECLARATION + wrapElement(xmlRoot, "", SERIALIZER_NAMESPACES) : "[]",
    CACHE_HEADERS
  )

const statsRoute = (path: string, handle: RouteDef<NodeStats>["handle"]): RouteDef<NodeStats> => ({
  method: "GET",
  path,
  access: "authenticated",
  responseCodecs: StatsCodecs,
  handle
})

export const statsRoutes: ReadonlyArray<RouteDef<NodeStats>> = [
  statsRoute("/stats", (input) =>
    Effect.flatMap(NodeStats, (s) =>
      Effect.map(s.current, (stats) => statsReply(input.responseType, stats, [], input.query))
    )
  ),
  statsRoute("/stats/{*statPath}", (input) =>
    Effect.flatMap(NodeStats, (s) =>
      Effect.map(s.current, (stats) =>
        statsReply(input.responseType, stats, (input.params.statPath ?? "").split("/"), input.query)
      )
    )
  ),
  // One entry per connected replica / TCP client: a single node has neither.
  statsRoute("/stats/replication", (input) =>
    Effect.succeed(emptyListReply(input.responseType, "ArrayOfReplicationPerSubscriptionStats"))
  ),
  statsRoute("/stats/tcp", (input) => Effect.succeed(emptyListReply(input.responseType, "ArrayOfTcpConnectionStats")))
]
