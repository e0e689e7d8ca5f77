/**
 * Every `/subscriptions` route as data for the pipeline:
 *
 *   PUT    /subscriptions/{s}/{g}                      $ops/$admins   create (201; 409 when it exists)
 *   POST   /subscriptions/{s}/{g}                      $ops/$admins   update (200; 404 when missing)
 *   DELETE /subscriptions/{s}/{g}                      $ops/$admins   delete (200; 404 when missing)
 *   GET    /subscriptions[?offset=&count=]             authenticated  every group (paged with the query)
 *   GET    /subscriptions/{s}                          authenticated  a stream's groups
 *   GET    /subscriptions/{s}/{g}/info                 authenticated  one group's figures
 *   GET    /subscriptions/{s}/{g}[/{count}][?embed=]   read on {s}    the next messages (competing feed)
 *   POST   /subscriptions/{s}/{g}/ack/{id}, …/ack?ids= read on {s}    202
 *   POST   /subscriptions/{s}/{g}/nack/{id}, …/nack?ids=&action=      202
 *   POST   /subscriptions/{s}/{g}/replayParked[?stopAt=]  $ops/$admins
 *   POST   /subscriptions/restart                      $ops/$admins   200 "Restarting"
 *   GET    /subscriptions/viewparkedmessages/{s}/{g}/{n|head}/backward/{count}, …/{n}/forward/{count}
 *
 * `{s}` may be `$all` (`%24all`): groups on `$all` are served over HTTP too. Groups run on the leader, so
 * every route but the parked-message views (plain stream reads) is passed to the leader by a follower.
 */
import type { RouteDef } from "@vellum/http"
import type { EventStore } from "@vellum/storage"
import type { StreamAccess } from "@vellum/security"
import type { Subscriptions } from "../service/Subscriptions.js"
import { ack, nack } from "./ackNack.js"
import { groupInfo, listGroups, streamGroups } from "./info.js"
import { createGroup, deleteGroup, replayParked, restart, updateGroup } from "./manage.js"
import { CompetingCodecs, DocumentCodecs } from "./mediaTypes.js"
import { viewParkedBackward, viewParkedForward } from "./parkedViews.js"
import { readMessages } from "./readMessages.js"

export type SubscriptionRouteRequirements = Subscriptions | StreamAccess | EventStore

type SubscriptionRoute = RouteDef<SubscriptionRouteRequirements>

const group = "/subscriptions/{stream}/{group}"

const onLeader = (route: Omit<SubscriptionRoute, "forwardsToLeader">): SubscriptionRoute => ({
  ...route,
  forwardsToLeader: true
})

const management = (
  method: "PUT" | "POST" | "DELETE",
  path: string,
  handle: SubscriptionRoute["handle"],
  body: boolean
) =>
  onLeader({
    method,
    path,
    access: "ops",
    ...(body ? { requestCodecs: DocumentCodecs } : {}),
    responseCodecs: DocumentCodecs,
    handle
  })

const info = (path: string, handle: SubscriptionRoute["handle"]) =>
  onLeader({ method: "GET", path, access: "authenticated", responseCodecs: DocumentCodecs, handle })

const read = (path: string) =>
  onLeader({ method: "GET", path, access: "authenticated", responseCodecs: CompetingCodecs, handle: readMessages })

/** Acks and nacks take no body: whatever Content-Type a client sends is not looked at. */
const settle = (path: string, handle: SubscriptionRoute["handle"]) =>
  onLeader({ method: "POST", path, access: "authenticated", responseCodecs: DocumentCodecs, handle })

const parked = (path: string, handle: SubscriptionRoute["handle"]): SubscriptionRoute => ({
  method: "GET",
  path: `/subscriptions/viewparkedmessages/{stream}/{group}/${path}?embed={embed}`,
  access: "authenticated",
  responseCodecs: CompetingCodecs,
  handle
})

export const subscriptionRoutes: ReadonlyArray<SubscriptionRoute> = [
  management("PUT", group, createGroup, true),
  management("POST", group, updateGroup, true),
  management("DELETE", group, deleteGroup, false),
  management("POST", `${group}/replayParked?stopAt={stopAt}`, replayParked, false),
  management("POST", "/subscriptions/restart", restart, false),
  info("/subscriptions?offset={offset}&count={count}", listGroups),
  info("/subscriptions/{stream}", streamGroups),
  info(`${group}/info`, groupInfo),
  read(`${group}?embed={embed}`),
  read(`${group}/{count}?embed={embed}`),
  settle(`${group}/ack/{messageid}`, ack),
  settle(`${group}/ack?ids={ids}`, ack),
  settle(`${group}/nack/{messageid}?action={action}`, nack),
  settle(`${group}/nack?ids={ids}&action={action}`, nack),
  parked("{event}/backward/{count}", viewParkedBackward),
  parked("{event}/forward/{count}", viewParkedForward)
]
