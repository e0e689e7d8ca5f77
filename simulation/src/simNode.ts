/**
 * One lifetime of the simulated node, opened in a scope on the sim's MemoryDisk. Over `http` (the default)
 * it is the whole NodeApp — storage, users and authentication, stream ACLs, node services, the request
 * pipeline — and the clients call its request handler in-process; over `direct` it is the bare EventStore,
 * called as a service. Either way the restart checkers get the EventStore service itself (the truth on
 * disk), and the operator a `ScavengeControl` (the admin API over HTTP; the node's Scavenger service over
 * `direct`). Dropping the scope without closing it is a power cut; the next lifetime opens on what survived.
 *
 * The sim's configuration is the default one with a cheap password hash (scrypt ln=4) and the
 * deterministic process figures and bare metrics registry (no live layer is passed).
 */
import { Context, Effect, Layer, Option, Scope } from "effect"
import { Disk, type DiskService } from "@vellum/platform"
import type { HttpRequest } from "@vellum/http"
import { EventStore, type EventStoreService, type StorageConfig } from "@vellum/storage"
// @vellum/node exports only its `main`; the composition root is imported from its source.
import * as NodeApp from "@vellum/node/app"
import { loadConfig, type LoadedConfig } from "@vellum/node/config"
import { Scavenger, ScavengerLayer, type ScavengerService } from "@vellum/scavenge"
import { toScavengerSettings } from "@vellum/node/config"
import { Subscriptions, type SubscriptionsService } from "@vellum/subscriptions"
import { Projections, type ProjectionsService } from "@vellum/projections"
import { asAdmin, httpStore, type NodeHandler } from "./httpStore.js"
import { directScavengeControl, httpScavengeControl, type ScavengeControl } from "./scavengeControl.js"
import { directStore, type SimStore } from "./simStore.js"

export type Transport = "http" | "direct"

export interface OpenedNode {
  /** The node's store, for the checkers. */
  readonly store: EventStoreService
  /** What the clients call. */
  readonly clients: SimStore
  /** What the operator scavenges through (the admin API over HTTP, the Scavenger service directly). */
  readonly scavenge: ScavengeControl
  /** The node's request handler (HTTP only): the ACL actor sends its requests as other callers. */
  readonly handler?: NodeHandler
  /** The node's Scavenger service itself, to see where a run stands (its checkpoint is not in the API). */
  readonly scavenger: ScavengerService
  /**
   * The node's persistent subscriptions service (HTTP only: the bare store runs none): the service the
   * `/subscriptions` routes call, which the subscriptions workload's consumers call in-process.
   */
  readonly subscriptions?: SubscriptionsService
  /**
   * The node's projections service (HTTP only), which the projections workload drives in-process as the
   * `/projections` routes do; absent while the node does not build one.
   */
  readonly projections?: ProjectionsService
}

const SimInstanceId = "00000000-0000-4000-8000-000000000001"

/**
 * The node's configuration in the sim: defaults, except a password hash that costs microseconds, (a
 * per-seed choice) anonymous stream access, auto-scavenge off: this workload never configures it (the
 * multi-node simulator does), and its idle driver's ticks would only reshuffle every seed's schedule — and
 * projections off but in the seeds of the projections workload (which run the default, every projection),
 * so the other seeds keep their schedules and their smallest chunks (a projection's records need room).
 */
const simConfig = (anonymousStreamAccess: boolean, projections: boolean): LoadedConfig =>
  Effect.runSync(
    Effect.flatMap(
      loadConfig({
        argv: [
          "--password-hash-cost",
          "4",
          "--auto-scavenge-enabled=false",
          ...(anonymousStreamAccess ? ["--allow-anonymous-stream-access"] : []),
          ...(projections ? [] : ["--run-projections", "None"])
        ],
        env: {},
        readFile: () => Effect.succeed(Option.none()),
        version: NodeApp.VELLUM_VERSION
      }),
      (outcome) =>
        outcome._tag === "Start"
          ? Effect.succeed(outcome.loaded)
          : Effect.die(new Error(`the sim's node configuration did not load: ${outcome._tag}`))
    )
  )

export const simNodeConfig: LoadedConfig = simConfig(false, false)
const configs = new Map<string, LoadedConfig>([["false/false", simNodeConfig]])
const simConfigFor = (anonymousStreamAccess: boolean, projections: boolean): LoadedConfig => {
  const key = `${anonymousStreamAccess}/${projections}`
  const known = configs.get(key)
  if (known !== undefined) return known
  const loaded = simConfig(anonymousStreamAccess, projections)
  configs.set(key, loaded)
  return loaded
}

const openHttp = (
  storage: StorageConfig,
  disk: DiskService,
  scope: Scope.Scope,
  anonymousStreamAccess: boolean,
  projections: boolean
) =>
  Effect.gen(function* () {
    const nodeConfig = simConfigFor(anonymousStreamAccess, projections)
    const layer = Layer.provide(
      NodeApp.layerWithStorage(nodeConfig, storage, { instanceId: SimInstanceId }),
      Layer.succeed(Disk, disk)
    )
    const context = yield* Layer.buildWithScope(layer, scope)
    const handle = yield* Effect.provide(NodeApp.makeNodeHandler(nodeConfig), context)
    const handler = (request: HttpRequest) => Effect.provide(handle(request), context)
    const opened: OpenedNode = {
      store: Context.get(context, EventStore),
      clients: httpStore(handler),
      scavenge: httpScavengeControl(asAdmin(handler)),
      handler,
      scavenger: Context.get(context, Scavenger),
      subscriptions: Context.get(context, Subscriptions),
      projections: Option.getOrUndefined(Context.getOption(context as Context.Context<unknown>, Projections))
    }
    return opened
  })

/** The bare store, and the node's Scavenger over it (as NodeApp composes it). */
const openDirect = (storage: StorageConfig, disk: DiskService, scope: Scope.Scope) =>
  Effect.gen(function* () {
    const layer = Layer.provideMerge(
      ScavengerLayer.layer(toScavengerSettings(simNodeConfig.config, storage.dir)),
      EventStore.layer(storage)
    )
    const context = yield* Layer.buildWithScope(Layer.provide(layer, Layer.succeed(Disk, disk)), scope)
    const store = Context.get(context, EventStore)
    const scavenger = Context.get(context, Scavenger)
    const opened: OpenedNode = {
      store,
      clients: directStore(store),
      scavenge: directScavengeControl(scavenger),
      scavenger
    }
    return opened
  })

/** Opens the node; fails with the reason it did not open. */
export const openNode = (
  transport: Transport,
  storage: StorageConfig,
  disk: DiskService,
  scope: Scope.Scope,
  /** `AllowAnonymousStreamAccess` (HTTP only). */
  anonymousStreamAccess = false,
  /** Run projections, as the node's default has it (HTTP only); otherwise `--run-projections None`. */
  projections = false
): Effect.Effect<OpenedNode, string> =>
  Effect.mapError(
    transport === "http"
      ? openHttp(storage, disk, scope, anonymousStreamAccess, projections)
      : openDirect(storage, disk, scope),
    (e) => e.message
  )
