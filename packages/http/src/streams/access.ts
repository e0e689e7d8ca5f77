/**
 * The stream ACL gate every stream operation passes first: anonymous callers
 * are refused unless `AllowAnonymousStreamAccess`; writes and deletes on `$all` are refused for everyone;
 * otherwise the StreamAccess policy decides. A refusal is the bare 401.
 */
import { Effect } from "effect"
import {
  StreamAccess,
  linkAccessFor,
  type Principal,
  type StreamAccessService,
  type StreamAction
} from "@vellum/security"
import { AllStream, type ReadOptions } from "@vellum/storage"
import type { HttpSettings } from "../HttpConfig.js"
import type { Reply } from "../Reply.js"
import type { RouteInput } from "../Route.js"
import { unauthorizedBare } from "../replies.js"
import { settledValue } from "../Answer.js"
import type { Steps } from "@vellum/platform"

/**
 * undefined when allowed; the bare 401 otherwise; an Effect giving one of them when the policy must read
 * the stream's ACL. Plain code for the common case (admins, actions with no ACL target).
 */
export const denyNow = (
  principal: Principal,
  settings: HttpSettings,
  stream: string,
  action: StreamAction,
  access: StreamAccessService
): Reply | undefined | Effect.Effect<Reply | undefined> => {
  if (principal.anonymous && !settings.allowAnonymousStreamAccess) return unauthorizedBare
  if (stream === AllStream && (action === "$w" || action === "$d")) return unauthorizedBare
  const now = access.decideNow?.(principal, stream, action)
  if (now !== undefined) return now ? undefined : unauthorizedBare
  const checked = access.check(principal, stream, action)
  // A policy's answer from its cache is already settled (Answer.ts).
  const allowed = settledValue(checked)
  if (allowed !== undefined) return allowed ? undefined : unauthorizedBare
  return Effect.map(checked, (allowed) => (allowed ? undefined : unauthorizedBare))
}

/** undefined when allowed; the bare 401 otherwise: as steps, settled when the policy answered now. */
export function* denySteps(
  principal: Principal,
  settings: HttpSettings,
  stream: string,
  action: StreamAction
): Steps<Reply | undefined, never, StreamAccess> {
  const denied = denyNow(principal, settings, stream, action, yield* StreamAccess)
  return Effect.isEffect(denied) ? yield* denied : denied
}

/** A read of the addressed stream (`$r`) or of its metadata (`$mr`): `denySteps`. */
export const denyReadSteps = (input: RouteInput, metadata: boolean) =>
  denySteps(input.principal, input.settings, input.params["stream"] ?? "", metadata ? "$mr" : "$r")

/** undefined when allowed; the bare 401 otherwise. */
export const denyUnlessAllowed = (
  principal: Principal,
  settings: HttpSettings,
  stream: string,
  action: StreamAction
): Effect.Effect<Reply | undefined, never, StreamAccess> =>
  Effect.gen(() => denySteps(principal, settings, stream, action))

/**
 * The read options of a read that resolves links (or not): targets are shown only where this reader's own
 * read of the target would be allowed. The anonymous gate needs no repeat here: a reader refused by it never
 * gets this far.
 */
export const linkReadOptions = (
  principal: Principal,
  resolveLinks: boolean
): Effect.Effect<ReadOptions, never, StreamAccess> => Effect.gen(() => linkOptionsSteps(principal, resolveLinks))

/** `linkReadOptions` as steps (the access policy is a service: settled given the services). */
export function* linkOptionsSteps(
  principal: Principal,
  resolveLinks: boolean
): Steps<ReadOptions, never, StreamAccess> {
  return resolveLinks ? { resolveLinks: linkAccessFor(yield* StreamAccess, principal) } : {}
}
