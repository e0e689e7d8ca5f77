/**
 * The trailing-slash redirects: `/streams/{s}/`, `/streams/$all/` and
 * `/streams/{s}/metadata/` answer 307 to the same URL without the slash, cacheable for a year. The
 * Location comes from the raw request URL (Host header), not the advertised address.
 */
import { Effect } from "effect"
import type { Reply } from "../Reply.js"
import type { RouteInput } from "../Route.js"

/** Drops the path's trailing slash and keeps the query (the reference cuts the URL's last character). */
const withoutTrailingSlash = (url: string): string => {
  const mark = url.indexOf("?")
  const path = mark < 0 ? url : url.slice(0, mark)
  const query = mark < 0 ? "" : url.slice(mark)
  return (path.endsWith("/") ? path.slice(0, -1) : path) + query
}

export const redirectWithoutSlash = (input: RouteInput): Effect.Effect<Reply> =>
  Effect.succeed({
    status: 307,
    reason: "Temporary Redirect",
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      Location: withoutTrailingSlash(input.requestUrl),
      "Cache-Control": "max-age=31536000, public"
    },
    body: "Moved Permanently"
  })
