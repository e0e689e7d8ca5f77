/**
 * The StreamAccess service over the EventStore: the pure rules of StreamAcl.ts fed with the stream's
 * metadata `$acl` and the last `$settings` event.
 *
 * Admins are decided without any read. The parsed settings are kept with the event number they came from and
 * re-read only when `$settings` has a newer last event (a cached index lookup per check, no log read), so a
 * settings change applies to the very next request. A storage failure while checking denies (fails closed).
 */
import { Effect, Layer } from "effect"
import { EventStore, SettingsStream, type EventStoreService } from "@vellum/storage"
import { isAdmin, StreamAccess, type Principal, type StreamAccessService } from "./Principal.js"
import {
  aclTarget,
  decideAccess,
  NoSettings,
  parseSystemSettings,
  type AclTarget,
  type SystemSettings
} from "./StreamAcl.js"

export const makeStreamAccess: Effect.Effect<StreamAccessService, never, EventStore> = Effect.map(
  EventStore,
  (store: EventStoreService) => {
    let cached: { readonly eventNumber: number; readonly settings: SystemSettings } = {
      eventNumber: -1,
      settings: NoSettings
    }

    const settings = Effect.gen(function* () {
      const last = yield* store.lastEventNumber(SettingsStream)
      if (last === cached.eventNumber) return cached.settings
      const read = yield* store.readEvent(SettingsStream, -1)
      const parsed =
        read._tag === "Success" && read.event.event !== undefined
          ? parseSystemSettings(read.event.event.data)
          : NoSettings
      cached = { eventNumber: last, settings: parsed }
      return parsed
    })

    /** The answer that needs no read, given the action's ACL target: none → denied; admins → allowed. */
    const answerWithoutRead = (principal: Principal, target: AclTarget | undefined): boolean | undefined =>
      target === undefined ? false : isAdmin(principal) ? true : undefined

    return {
      decideNow: (principal, stream, action) => answerWithoutRead(principal, aclTarget(stream, action)),
      check: (principal, stream, action) => {
        const target = aclTarget(stream, action)
        const now = answerWithoutRead(principal, target)
        if (target === undefined || now !== undefined) return Effect.succeed(now === true)
        return Effect.gen(function* () {
          const metadata = yield* store.getStreamMetadata(target.stream)
          return decideAccess(principal, target, metadata.metadata.acl, yield* settings)
        }).pipe(Effect.orElseSucceed(() => false))
      }
    }
  }
)

export const layer: Layer.Layer<StreamAccess, never, EventStore> = Layer.effect(StreamAccess, makeStreamAccess)
