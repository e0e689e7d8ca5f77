/**
 * The link check every link-resolving read goes through: a reader sees a link's target only if a direct
 * read of the target would be allowed to them (the target's `$acl`, the `$settings` defaults, the system
 * stream rules, `$mr` for metastreams: the StreamAccess decision for `$r`). Storage asks it once per
 * target stream per read and shows a denied target as a link whose target does not exist.
 *
 * The reference resolves links without looking at the target's ACL; we check (docs/decisions.md).
 */
import { Effect } from "effect"
import type { LinkAccess } from "@vellum/storage"
import type { Principal, StreamAccessService } from "./Principal.js"

export const linkAccessFor = (access: StreamAccessService, principal: Principal): LinkAccess => ({
  mayRead: (stream) => {
    const now = access.decideNow?.(principal, stream, "$r")
    return now !== undefined ? Effect.succeed(now) : access.check(principal, stream, "$r")
  }
})
