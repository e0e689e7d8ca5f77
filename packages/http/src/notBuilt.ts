/**
 * Route families of the reference's HTTP API that Vellum has not built yet. A request that matches no
 * route but falls under one of these prefixes is answered 501 Not Implemented with a reason naming the
 * family, so a client learns the feature is missing rather than seeing an empty 404. When a family is
 * built, its row goes (real routes win anyway: this is only consulted when no route matched).
 */
import type { Reply } from "./Reply.js"
import { TextPlainUtf8 } from "./replies.js"

export interface NotBuiltRoute {
  /** A path prefix, matched on whole decoded segments (`/web` covers `/web/index.html`, not `/website`). */
  readonly path: string
  readonly feature: string
}

export const notBuiltRoutes: ReadonlyArray<NotBuiltRoute> = [
  { path: "/web", feature: "The admin UI is" },
  { path: "/ui", feature: "The admin UI is" },
  { path: "/", feature: "The admin UI is" },
  { path: "/admin/login", feature: "The admin UI's login check is" },
  { path: "/admin/reloadconfig", feature: "Reloading the configuration is" },
  { path: "/sys/subsystems", feature: "The subsystems list is" }
]

const compiled = notBuiltRoutes.map((row) => ({
  segments: row.path === "/" ? [""] : row.path.slice(1).split("/"),
  row
}))

/** The 501 for a path under a family not built yet (decoded segments, as routed), or undefined. */
export const notBuiltReply = (segments: ReadonlyArray<string>): Reply | undefined => {
  for (const { row, segments: prefix } of compiled) {
    const exact = prefix.length === 1 && prefix[0] === ""
    const matches = exact
      ? segments.length === 1 && segments[0] === ""
      : prefix.length <= segments.length && prefix.every((s, i) => segments[i] === s)
    if (matches) {
      const reason = `${row.feature} not implemented in Vellum yet`
      return { status: 501, reason, headers: { "Content-Type": TextPlainUtf8 }, body: reason }
    }
  }
  return undefined
}
