/**
 * The stream ACL gate every stream operation passes first: anonymous callers
 * are refused unless `AllowAnonymousStreamAccess`; writes and deletes on `$all` are refused for everyone;
 * otherwise the StreamAccess policy decides. A refusal is the bare 401.
 */
import { Effect } from "effect"
import { StreamAccess, linkAccessFor, type Principal, type StreamAction } from "@vellum/security"
import { AllStream, type ReadOptions } from "@vellum/storage"
import type { HttpSettings } from "../HttpConfig.js"
import type { Reply } from "../Reply.js"
import { unauthorizedBare } from "../replies.js"

/** undefined when allowed; the bare 401 otherwise. */
export const denyUnlessAllowed = (
  principal: Principal,
  settings: HttpSettings,
  stream: string,
  action: StreamAction
): Effect.Effect<Reply | undefined, never, StreamAccess> => {
  if (principal.anonymous && !settings.allowAnonymousStreamAccess) return Effect.succeed(unauthorizedBare)
  if (stream === AllStream && (action === "$w" || action === "$d")) return Effect.succeed(unauthorizedBare)
  return Effect.flatMap(StreamAccess, (access) => {
    const now = access.decideNow?.(principal, stream, action)
    if (now !== undefined) return Effect.succeed(now ? undefined : unauthorizedBare)
    return Effect.map(access.check(principal, stream, action), (allowed) => (allowed ? undefined : unauthorizedBare))
  })
}

/**
 * The read options of a read that resolves links (or not): targets are shown only where this reader's own
 * read of the target would be allowed. The anonymous gate needs no repeat here: a reader refused by it never
 * gets this far.
 */
export const linkReadOptions = (
  principal: Principal,
  resolveLinks: boolean
): Effect.Effect<ReadOptions, never, StreamAccess> =>
  resolveLinks
    ? Effect.map(StreamAccess, (access) => ({ resolveLinks: linkAccessFor(access, principal) }))
    : Effect.succeed({})
