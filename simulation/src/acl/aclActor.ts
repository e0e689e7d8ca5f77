/**
 * The ACL actor: one more simulated client, over HTTP only (the direct transport has no authentication),
 * that exercises users and stream ACLs. It owns a few streams — two user streams, one system stream — and
 * `$settings`, all tracked by the model like any client's (so restarts verify them and reconcile its
 * indeterminate writes), and every step it either changes the security state as the admin — an `$acl` on
 * one of its streams, new `$settings` defaults, a user created, disabled, enabled or deleted through the
 * users API — or sends one request as a random identity (the admin, a user in groups, a disabled or deleted
 * user, a wrong password, an unknown login, anonymous): an append of events or of a link (`$>`, often to a
 * stream the reader may not read), a soft delete, a metadata write or read, a stream read (forward,
 * backward, one event; links resolved), a read of another client's stream or a system stream, or of `$all`.
 *
 * `authorization.ts` decides each request from what the model knows. An allowed request is checked against
 * the model as any client's; a refused one must be the right 401 and write nothing. Any unauthorised
 * success, any wrongful refusal, any wrong answer fails the run. With read faults on, a check the node
 * could not read for is refused (it fails closed), so a refusal of an allowed request is then accepted,
 * never a success of a refused one.
 *
 * While one of its writes is indeterminate, the actor waits (its verdicts depend on what that write did)
 * until a checker has reconciled it, as a client waits for a stream.
 */
import { Duration, Effect } from "effect"
import type { Prng } from "@vellum/platform"
import type { ProposedEvent } from "@vellum/storage"
import { ExpectedAny, metastreamOf, outcomeOf, type ModelEvent, type WriteOutcome } from "../model.js"
import { Auditor, SimClient, peekDelete, type PendingOp } from "../client.js"
import { asCaller, challengeOf, httpStore, type NodeHandler } from "../httpStore.js"
import { writeMatches } from "../readChecks.js"
import { Denied, type ObservedWrite, type SimStore, type StoreFailure } from "../simStore.js"
import { replyText } from "../atomReplies.js"
import {
  authorize,
  parseAclSettings,
  streamAclOf,
  NoAclSettings,
  type AclAction,
  type AclWorld,
  type Verdict
} from "./authorization.js"
import {
  adminIdentity,
  linkEvent,
  metadataEvent,
  pickIdentity,
  pickReader,
  settingsEvent,
  type Identity
} from "./aclWorkload.js"
import { compareShown, expectedEntry, linkTargetOf, parseShown } from "./linkReads.js"
import { runUserCommand, type SimUser } from "./simUsers.js"

export const SettingsStreamName = "$settings"
/** The actor's streams: user streams, a system stream, and `$settings` (written only by the actor). */
const OwnStreams = ["acl-a", "acl-b", "$acl-c"]

/** The request kinds, as the coverage marks name them. */
type Kind = "read" | "write" | "delete" | "metaRead" | "metaWrite"

const AtomJson = "application/vnd.eventstore.atom+json"
const streamPath = (stream: string): string => `/streams/${encodeURIComponent(stream)}`

export class AclActor extends SimClient {
  private handler: NodeHandler | undefined
  readonly users: Array<SimUser> = []

  constructor(
    id: number,
    prng: Prng,
    private readonly anonymousStreamAccess: boolean,
    private readonly readsReliable: boolean,
    /** Other clients' streams: read (the verdict checked, not the events, which others are writing). */
    private readonly foreignStreams: ReadonlyArray<string>
  ) {
    super(id, prng, 0, 20, undefined, [...OwnStreams, SettingsStreamName])
  }

  /** The node of this lifetime. */
  connect(handler: NodeHandler): void {
    this.handler = handler
  }

  private world(auditor: Auditor): AclWorld {
    const model = auditor.model
    const lastOf = (stream: string) => {
      const events = model.eventsOf(stream)
      return events[events.length - 1]
    }
    const settings = lastOf(SettingsStreamName)
    return {
      streamAcl: (stream) => {
        const meta = lastOf(metastreamOf(stream))
        return meta === undefined ? undefined : streamAclOf(meta.isJson, meta.data)
      },
      settings: settings === undefined ? NoAclSettings : parseAclSettings(settings.data),
      anonymousStreamAccess: this.anonymousStreamAccess
    }
  }

  /** A defect here (a bug of the actor) fails the run rather than stalling it. */
  override step(_store: SimStore, auditor: Auditor): Effect.Effect<void> {
    return Effect.catchAllDefect(this.stepOnce(auditor), (defect) =>
      Effect.sync(() => auditor.fail(`the ACL actor broke: ${String(defect)}`))
    )
  }

  private stepOnce(auditor: Auditor): Effect.Effect<void> {
    const handler = this.handler
    if (handler === undefined || this.pending.size > 0) return Effect.sleep(Duration.millis(10))
    const r = this.prng.next()
    if (r < 0.08) {
      return Effect.map(
        runUserCommand(this.prng, this.users, asCaller(handler, adminIdentity.authorization)),
        (done) => {
          if (done === undefined) return
          if (done._tag === "Failed") return auditor.fail(`acl users API: ${done.why}`)
          auditor.coverage.hit(done.mark)
          auditor.trace(`acl ${done.mark}`)
        }
      )
    }
    if (r < 0.16) return this.setMetadata(auditor, handler, adminIdentity, this.prng.pick(OwnStreams))
    if (r < 0.2) {
      auditor.coverage.hit("acl.settings.written")
      const event = settingsEvent(this.prng, this.uuid(), this.users)
      return this.append(auditor, handler, adminIdentity, SettingsStreamName, [event])
    }
    const who = pickIdentity(this.prng, this.users)
    const stream = this.prng.pick(OwnStreams)
    if (r < 0.36) return this.append(auditor, handler, who, stream, this.newEvents(this.prng.int(1, 2)))
    if (r < 0.46) {
      // Half the time a user reads `$all` at once, so its newest page likely shows the link.
      const reader = pickReader(this.prng, this.users)
      const then = this.prng.chance(0.5) ? Effect.suspend(() => this.readAll(auditor, handler, reader)) : Effect.void
      return Effect.zipRight(this.append(auditor, handler, who, stream, [this.link()]), then)
    }
    if (r < 0.52) return this.setMetadata(auditor, handler, who, stream)
    if (r < 0.55) return this.softDelete(auditor, handler, who, this.prng.chance(0.85) ? stream : metastreamOf(stream))
    if (r < 0.75) return this.readFeed(auditor, handler, who, stream)
    if (r < 0.83) return this.readOne(auditor, handler, who, stream)
    if (r < 0.89) {
      const target = this.prng.pick([...OwnStreams, ...this.foreignStreams, SettingsStreamName])
      return this.request(auditor, handler, who, target, "$mr", "metaRead", "GET", `${streamPath(target)}/metadata`)
    }
    if (r < 0.94) return this.readAll(auditor, handler, who)
    const other = this.prng.pick([
      ...this.foreignStreams,
      SettingsStreamName,
      metastreamOf(stream),
      ...this.users.map((u) => `$user-${u.login}`)
    ])
    return this.request(
      auditor,
      handler,
      who,
      other,
      "$r",
      "read",
      "GET",
      `${streamPath(other)}/head/backward/5?embed=body`
    )
  }

  /** A link to an event (existing or not) of one of the actor's streams or `$settings`. */
  private link(): ProposedEvent {
    const target = this.prng.pick([...OwnStreams, SettingsStreamName])
    return linkEvent(this.uuid(), target, this.prng.int(0, 6))
  }

  // ---- checking one answer ----

  /** Marks a checked decision; a problem fails the run. */
  private verdictMarks(auditor: Auditor, who: Identity, kind: Kind, verdict: Verdict, stream: string): void {
    const c = auditor.coverage
    c.hit(verdict.allowed ? (`acl.${kind}.allow` as const) : (`acl.${kind}.deny` as const))
    if (verdict.source !== "credentials" && verdict.source !== "anonymousGate" && verdict.source !== "deniedToAll")
      c.hit(`acl.source.${verdict.source}` as const)
    if (verdict.source === "deniedToAll") c.hit("acl.deniedToAll")
    if (who.caller.kind === "anonymous") c.hit(verdict.allowed ? "acl.anonymous.allowed" : "acl.anonymous.refused")
    if (!verdict.allowed && verdict.answer === "badCredentials" && who.badMark !== undefined) c.hit(who.badMark)
    if (stream === "$all") c.hit(verdict.allowed ? "acl.all.allowed" : "acl.all.denied")
  }

  /** The problem with a refusal, given the verdict (undefined: it is the right answer, or accepted). */
  private refusalProblem(auditor: Auditor, who: Identity, verdict: Verdict, denied: Denied): string | undefined {
    if (verdict.allowed) {
      if (!this.readsReliable) {
        auditor.trace(`acl refusal of an allowed request accepted (read faults run): ${denied.reason}`)
        return undefined
      }
      return `refused (${denied.reason}) but allowed (${verdict.source})`
    }
    const xBasic = denied.challenge?.includes("X-Basic") === true
    if (denied.status !== 401) return `answered ${denied.reason}, the model a 401 (${verdict.answer})`
    if (verdict.answer === "badCredentials" && !xBasic)
      return `bad credentials answered without the X-Basic challenge (${denied.reason})`
    if (verdict.answer === "refused" && xBasic) return `a refusal (${verdict.source}) answered as bad credentials`
    if (verdict.answer === "refused" && who.caller.kind !== "anonymous" && denied.challenge !== undefined)
      return `a refusal of an authenticated caller carries a challenge (${denied.reason})`
    return undefined
  }

  // ---- writes ----

  private write(
    auditor: Auditor,
    who: Identity,
    kind: Kind,
    verdict: Verdict,
    op: PendingOp,
    run: Effect.Effect<ObservedWrite, StoreFailure>,
    expect: () => ReadonlyArray<WriteOutcome>,
    apply: (outcome: ObservedWrite) => void
  ): Effect.Effect<void> {
    const key = op.stream.startsWith("$$") ? op.stream.slice(2) : op.stream
    const what = `acl ${who.describe} ${op.kind} ${op.stream} exp=${op.expected}`
    if (verdict.allowed) this.pending.set(key, { op, settledBy: Number.POSITIVE_INFINITY })
    return Effect.map(Effect.either(run), (result) => {
      if (result._tag === "Left") {
        const failure = result.left
        if (failure._tag === "Unexpected") return auditor.fail(`${what}: ${failure.description}`)
        if (failure._tag === "Denied") {
          this.pending.delete(key)
          const problem = this.refusalProblem(auditor, who, verdict, failure)
          if (problem !== undefined) return auditor.fail(`${what}: ${problem}`)
          auditor.trace(`${what} -> refused ${failure.reason}`)
          return this.verdictMarks(auditor, who, kind, verdict, op.stream)
        }
        auditor.trace(`${what} indeterminate ${failure.reason}`)
        if (!verdict.allowed) return
        auditor.indeterminate++
        auditor.coverage.hit("append.indeterminate")
        this.pending.set(key, { op, settledBy: auditor.answered++ })
        return
      }
      this.pending.delete(key)
      const outcome = result.right
      auditor.trace(`${what} -> ${JSON.stringify(outcome)}`)
      if (!verdict.allowed)
        return auditor.fail(
          `${what}: answered ${JSON.stringify(outcome)}, but the model refuses it (${verdict.answer}, ${verdict.source})`
        )
      const allowed = expect()
      if (!allowed.some((o) => writeMatches(o, outcome)))
        return auditor.fail(`${what}: got ${JSON.stringify(outcome)}, the model allows ${JSON.stringify(allowed)}`)
      auditor.acknowledged++
      this.verdictMarks(auditor, who, kind, verdict, op.stream)
      apply(outcome)
    })
  }

  private append(
    auditor: Auditor,
    handler: NodeHandler,
    who: Identity,
    stream: string,
    events: ReadonlyArray<ProposedEvent>,
    send: (store: SimStore, expected: number) => Effect.Effect<ObservedWrite, StoreFailure> = (store, expected) =>
      store.append(stream, expected, events),
    written: () => void = () => {}
  ): Effect.Effect<void> {
    const model = auditor.model
    const expected = this.prng.chance(0.7) ? model.lastEventNumber(stream) : ExpectedAny
    const meta = stream.startsWith("$$")
    const verdict = authorize(this.world(auditor), who.caller, stream, "$w")
    const possible = model.possibleDecisions(
      stream,
      expected,
      events.map((e) => e.eventId)
    )
    return this.write(
      auditor,
      who,
      meta ? "metaWrite" : "write",
      verdict,
      { kind: "append", stream, expected, events },
      send(httpStore(handler, who), expected),
      () => possible.map((p) => outcomeOf(p.decision, events.length)),
      (outcome) => {
        const consistent = possible.filter((p) => writeMatches(outcomeOf(p.decision, events.length), outcome))
        model.learnCache(consistent)
        model.applyAppend(stream, consistent[0]!.decision, events, 0)
        if (consistent[0]!.decision._tag === "Ok") written()
      }
    )
  }

  private setMetadata(auditor: Auditor, handler: NodeHandler, who: Identity, stream: string): Effect.Effect<void> {
    const { event, malformed } = metadataEvent(this.prng, this.uuid(), this.users)
    return this.append(
      auditor,
      handler,
      who,
      metastreamOf(stream),
      [event],
      (store, expected) => store.setMetadata(stream, expected, event),
      () => {
        if (malformed) auditor.coverage.hit("acl.metadata.malformedAcl")
      }
    )
  }

  private softDelete(auditor: Auditor, handler: NodeHandler, who: Identity, stream: string): Effect.Effect<void> {
    const model = auditor.model
    const expected = this.prng.chance(0.7) ? model.lastEventNumber(stream) : ExpectedAny
    const verdict = authorize(this.world(auditor), who.caller, stream, "$d")
    return this.write(
      auditor,
      who,
      "delete",
      verdict,
      { kind: "softDelete", stream, expected },
      httpStore(handler, who).deleteStream(stream, expected, false),
      () => [peekDelete(model, stream, expected, false)],
      (outcome) => {
        if (outcome._tag === "Appended") model.softDelete(stream, expected, 0)
      }
    )
  }

  // ---- reads ----

  /**
   * One request whose verdict is checked; `check` looks at an allowed answer (undefined: right), by default
   * any answer a read of a stream may give.
   */
  private request(
    auditor: Auditor,
    handler: NodeHandler,
    who: Identity,
    stream: string,
    action: AclAction,
    kind: Kind,
    method: string,
    url: string,
    check: (status: number, text: string) => string | undefined = (status) =>
      status === 200 || status === 404 || status === 410 ? undefined : `answered ${status}`,
    headers: Record<string, string> = {}
  ): Effect.Effect<void> {
    const verdict = authorize(this.world(auditor), who.caller, stream, action)
    const what = `acl ${who.describe} ${method} ${url}`
    return Effect.map(asCaller(handler, who.authorization)(method, url, { accept: AtomJson, ...headers }), (reply) => {
      if (reply.status >= 500 || reply.status === 408) {
        if (reply.reason?.startsWith("Internal Server Error:") === true)
          return auditor.fail(`${what}: ${reply.status} ${reply.reason}`)
        return auditor.trace(`${what} failed ${reply.status}`)
      }
      if (reply.status === 401 || reply.status === 403) {
        const problem = this.refusalProblem(auditor, who, verdict, new Denied(reply.status, challengeOf(reply)))
        if (problem !== undefined) return auditor.fail(`${what}: ${problem}`)
        auditor.trace(`${what} -> refused`)
        return this.verdictMarks(auditor, who, kind, verdict, stream)
      }
      if (!verdict.allowed)
        return auditor.fail(
          `${what}: answered ${reply.status}, but the model refuses it (${verdict.answer}, ${verdict.source})`
        )
      const problem = check(reply.status, replyText(reply))
      if (problem !== undefined) return auditor.fail(`${what}: ${problem}`)
      auditor.trace(`${what} -> ${reply.status}`)
      this.verdictMarks(auditor, who, kind, verdict, stream)
    })
  }

  /** The entries the model expects for these events (in the order given), marking the links' fates. */
  private expectedEntries(auditor: Auditor, who: Identity, events: ReadonlyArray<ModelEvent>) {
    const world = this.world(auditor)
    const mayRead = (s: string) => authorize(world, who.caller, s, "$r").allowed
    return events.map((e) => expectedEntry(auditor.model, e, mayRead))
  }

  private markLinks(auditor: Auditor, links: ReadonlyArray<{ link: string }>): void {
    for (const { link } of links) {
      if (link === "resolved") auditor.coverage.hit("acl.link.resolved")
      if (link === "denied") auditor.coverage.hit("acl.link.unreadable")
    }
  }

  private readFeed(auditor: Auditor, handler: NodeHandler, who: Identity, stream: string): Effect.Effect<void> {
    const model = auditor.model
    const forward = this.prng.chance(0.5)
    const last = Math.max(0, model.lastEventNumber(stream))
    const count = this.prng.int(1, 8)
    const from = forward ? this.prng.int(0, last + 1) : this.prng.chance(0.4) ? -1 : this.prng.int(0, last + 1)
    const page = forward ? model.readForward(stream, from, count) : model.readBackward(stream, from, count)
    const start = from < 0 ? "head" : String(from)
    const url = `${streamPath(stream)}/${start}/${forward ? "forward" : "backward"}/${count}?embed=body`
    return this.request(auditor, handler, who, stream, "$r", "read", "GET", url, (status, text) => {
      if (page._tag === "NoStream") return status === 404 ? undefined : `answered ${status}, the model NoStream`
      if (page._tag === "StreamDeleted")
        return status === 410 ? undefined : `answered ${status}, the model StreamDeleted`
      if (status !== 200) return `answered ${status}, the model ${page.events.length} events`
      const shown = parseShown(text, true)
      if (typeof shown === "string") return shown
      // Feeds list newest first; the model lists a forward page oldest first.
      const expected = this.expectedEntries(auditor, who, forward ? [...page.events].reverse() : page.events)
      const problem = compareShown(shown, expected)
      if (problem === undefined) this.markLinks(auditor, expected)
      return problem
    })
  }

  /**
   * The newest page of `$all`, links resolved half the time. Other clients write while it is read, so only
   * what the actor alone decides is checked: every link of its streams that the page shows resolved must
   * be one the model resolves for this reader, to the same event (a link shown alone cannot be told apart
   * from a missing one here, and its stream read checks it).
   */
  private readAll(auditor: Auditor, handler: NodeHandler, who: Identity): Effect.Effect<void> {
    const resolve = this.prng.chance(0.5)
    const url = `/streams/%24all/head/backward/20?embed=body`
    const check = (status: number, text: string): string | undefined => {
      if (status !== 200) return `answered ${status}`
      if (!resolve) return undefined
      const shown = parseShown(text, true)
      if (typeof shown === "string") return shown
      for (const entry of shown) {
        const via = entry.position
        if (via === undefined || !this.streams.includes(via.stream)) continue
        const link = auditor.model.eventsOf(via.stream)[via.number]
        if (link === undefined || linkTargetOf(link) === undefined) continue
        const expected = this.expectedEntries(auditor, who, [link])[0]!
        if (expected.link !== "resolved")
          return `$all shows ${via.number}@${via.stream} resolved to ${JSON.stringify(entry)}; the model shows it alone (${expected.link})`
        const problem = compareShown([entry], [{ ...expected, optional: false, orAlone: undefined }])
        if (problem !== undefined) return `$all, link ${via.number}@${via.stream}: ${problem}`
        auditor.coverage.hit("acl.all.linkResolved")
      }
      return undefined
    }
    const headers: Record<string, string> = resolve ? { "es-resolvelinktos": "True" } : {}
    return this.request(auditor, handler, who, "$all", "$r", "read", "GET", url, check, headers)
  }

  private readOne(auditor: Auditor, handler: NodeHandler, who: Identity, stream: string): Effect.Effect<void> {
    const model = auditor.model
    const n = this.prng.chance(0.2) ? -1 : this.prng.int(0, Math.max(0, model.lastEventNumber(stream)) + 1)
    const read = model.readEvent(stream, n)
    const url = `${streamPath(stream)}/${n < 0 ? "head" : n}?embed=body`
    return this.request(auditor, handler, who, stream, "$r", "read", "GET", url, (status, text) => {
      if (read._tag === "StreamDeleted")
        return status === 410 ? undefined : `answered ${status}, the model StreamDeleted`
      if (read._tag !== "Success") return status === 404 ? undefined : `answered ${status}, the model ${read._tag}`
      const expected = this.expectedEntries(auditor, who, [read.event])[0]!
      // A link shown alone is a 404 for a single-event read; so is an event a scavenge removed.
      const mayBeMissing = expected.optional || expected.orAlone !== undefined
      if (expected.entry.eventId === undefined || (status === 404 && mayBeMissing)) {
        if (status !== 404) return `answered ${status} for a link the model shows alone (${expected.entry.title})`
        this.markLinks(auditor, [expected])
        return undefined
      }
      if (status !== 200) return `answered ${status}, the model ${expected.entry.title}`
      const shown = parseShown(text, false)
      if (typeof shown === "string") return shown
      const problem = compareShown(shown, [{ ...expected, optional: false, orAlone: undefined }])
      if (problem === undefined) this.markLinks(auditor, [expected!])
      return problem
    })
  }
}
