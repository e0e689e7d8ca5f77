/**
 * The checkers that run throughout a multi-node seed, on their own SimNode, every `sampleMs` of simulated
 * time (and once more at the end). Each sample reads every running member's store directly (storage truth,
 * not HTTP) and holds it to the rules of logImages.ts and ackLedger.ts:
 *
 * - its committed records agree with the longest committed prefix any member showed (`CommittedLog`);
 * - its epochs strictly increase, one epoch number is one record on every member (one leader per epoch),
 *   and its newest committed epoch never goes back;
 * - every client stream it serves is a prefix of the acknowledged history (plus the write in doubt) and
 *   holds every append whose bound its committed position had reached (nothing acknowledged lost);
 * - a member that leads while it cannot reach a quorum steps down within a bound (`QuorumWatch`).
 *
 * It also settles writes in doubt: once a write's request is over (answered, or its node's lifetime gone),
 * an append acknowledged after that decides it for good (a later leader's log holds it before that append,
 * or never will); any member whose committed position reached that append's bound shows which.
 */
import { Effect, Option } from "effect"
import type { EventStoreService } from "@vellum/storage"
import type { Auditor } from "../client.js"
import type { AckLedger } from "./ackLedger.js"
import type { ClusterClient, Sequencer } from "./clusterClient.js"
import type { ClusterWorld } from "./clusterWorld.js"
import type { OpenMember } from "./clusterNodes.js"
import {
  CommittedLog,
  EpochRegistry,
  EpochWatch,
  EpochsPerImage,
  checkEpochChain,
  fingerprintOf,
  type ImageEpoch,
  type ImageRecord,
  type LogImage
} from "./logImages.js"
import { QuorumWatch } from "./ackLedger.js"
import { compareChunkImages, compareRecordsBelow, completedChunksThrough } from "./scavengedChunks.js"

/** The longest a read of one member may take before the sample gives up on it (it crashed under the read). */
const ReadTimeoutMs = 2_000

export class ClusterObserver {
  readonly committedLog = new CommittedLog()
  readonly epochs = new EpochRegistry()
  private readonly epochWatch = new EpochWatch()
  readonly quorumWatch: QuorumWatch
  /** The last leader seen and the writer checkpoints of each lifetime, for the coverage marks. */
  private lastLeader: string | undefined
  private readonly writerAt = new Map<string, number>()
  /** The sets of runs (one per member, to one point) whose chunks were compared. */
  private readonly compared = new Set<string>()

  constructor(
    private readonly cluster: ClusterWorld,
    private readonly auditor: Auditor,
    private readonly ledger: AckLedger,
    private readonly clients: ReadonlyArray<ClusterClient>,
    private readonly sequencer: Sequencer
  ) {
    // Check-quorum: a leader that has not heard from a quorum for an election timeout steps down at its next
    // tick (a heartbeat later); twice the election timeout is slack enough.
    this.quorumWatch = new QuorumWatch(2 * cluster.options.timings.leaderElectionTimeoutMs)
  }

  private fail(why: string): void {
    this.auditor.fail(why)
  }

  /** One sample of every member: its log, its epochs and the client streams it serves. */
  sample(): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      const images = new Map<string, LogImage>()
      for (const member of this.cluster.members) {
        if (this.auditor.failure !== undefined) return
        const open = this.cluster.open(member.name)
        if (open === undefined || this.cluster.paused.has(member.name)) continue
        const incarnation = this.cluster.incarnation(member.name)
        const read = yield* Effect.timeoutOption(Effect.either(this.readMember(member.name, open)), ReadTimeoutMs)
        // A member that crashed or restarted under the read tells nothing.
        if (this.cluster.incarnation(member.name) !== incarnation || this.cluster.open(member.name) !== open) continue
        if (Option.isNone(read) || read.value._tag === "Left") continue
        const { image, streams } = read.value.right
        const problem =
          this.committedLog.check(image) ??
          checkEpochChain(image) ??
          this.epochs.check(image) ??
          this.epochWatch.check(image, String(incarnation)) ??
          streams()
        if (problem !== undefined) return this.fail(problem)
        this.markTruncation(member.name, incarnation, open)
        images.set(member.name, image)
      }
      const chunks = this.checkScavengedChunks(images)
      if (chunks !== undefined) return this.fail(chunks)
      yield* this.settle()
    })
  }

  /**
   * Once every member's newest node scavenge succeeded, all to one scavenge point, and none runs: they hold
   * the same records below the end of the point's chunk, and their chunk files there that cover the same
   * chunks are byte-identical (scavengedChunks.ts). `images`: this sample's reads of the members (by name);
   * each set of runs is compared once, when every member was read.
   */
  checkScavengedChunks(images: ReadonlyMap<string, LogImage>): string | undefined {
    const cluster = this.cluster
    const scavenges = cluster.scavenges
    if (scavenges.running().length > 0 || cluster.members.some((m) => !images.has(m.name))) return undefined
    const lasts = cluster.members.map((m) => ({ name: m.name, run: scavenges.lastEnded(cluster.label(m.name)) }))
    const points = lasts.map((l) => (l.run?.outcome === "Success" ? l.run.point : undefined))
    const point = points[0]
    if (point === undefined || points.some((p) => p?.number !== point.number)) return undefined
    const key = lasts.map((l) => l.run!.scavengeId).join(",")
    if (this.compared.has(key)) return undefined
    this.compared.add(key)
    const chunkSize = cluster.options.chunkSize
    const lastChunk = Math.floor(point.position / chunkSize)
    const files = lasts.map((l) =>
      completedChunksThrough(cluster.label(l.name), cluster.diskOf(l.name), cluster.dbDir, lastChunk)
    )
    const records = lasts.map((l) => images.get(l.name)!)
    this.auditor.coverage.hit("autoScavenge.chunksCompared")
    for (let i = 1; i < lasts.length; i++) {
      const problem =
        compareRecordsBelow(records[0]!, records[i]!, (lastChunk + 1) * chunkSize) ??
        compareChunkImages(files[0]!, files[i]!, lastChunk)
      if (problem !== undefined) return `after every member scavenged to scavenge point ${point.number}: ${problem}`
    }
    return undefined
  }

  /** Leadership: the quorum watch, and the coverage of elections, failovers and killed leaders. */
  private watchLeaders(now: number): void {
    const leaders = this.cluster.leaders()
    for (const m of this.cluster.voters) {
      const problem = this.quorumWatch.observe(
        now,
        m.name,
        leaders.includes(m.name),
        this.cluster.running(m.name),
        this.cluster.reachesQuorum(m.name)
      )
      if (problem !== undefined) return this.fail(problem)
    }
    const leader = leaders.find((l) => this.cluster.running(l) && this.cluster.reachesQuorum(l))
    if (leader !== undefined && leader !== this.lastLeader) {
      this.auditor.coverage.hit("cluster.electionWon")
      if (this.lastLeader !== undefined) this.auditor.coverage.hit("cluster.failover")
      this.auditor.trace(`leader ${leader}`)
      this.lastLeader = leader
    }
  }

  /** Often (cheap: no reads): leadership against quorums, and every open member's writer checkpoint. */
  watch(now: number): void {
    this.watchLeaders(now)
    for (const m of this.cluster.members) {
      const open = this.cluster.open(m.name)
      if (open !== undefined) this.markTruncation(m.name, this.cluster.incarnation(m.name), open)
    }
  }

  /** A member's writer checkpoint that went back within one lifetime: its tail was truncated. */
  private markTruncation(name: string, incarnation: number, open: OpenMember): void {
    if (open.replica === undefined) return
    const key = `${name}#${incarnation}`
    const writer = open.replica.writerCheckpoint()
    const before = this.writerAt.get(key)
    if (before !== undefined && writer < before) this.auditor.coverage.hit("cluster.truncation")
    this.writerAt.set(key, writer)
  }

  /**
   * Reads a member's committed log and the client streams it serves. The streams are checked by a thunk
   * (run after the log checks, so a broken log is reported first).
   */
  private readMember(name: string, open: OpenMember) {
    return Effect.gen(this, function* () {
      const committed = open.committed()
      const records = yield* scanCommitted(open.store, committed)
      const epochs: ReadonlyArray<ImageEpoch> =
        open.replica === undefined
          ? epochsOf(records)
          : (yield* open.replica.epochs(EpochsPerImage)).map((e) => ({
              epochNumber: e.epochNumber,
              position: e.position,
              epochId: e.epochId,
              leaderInstanceId: epochsOf(records).find((r) => r.position === e.position)?.leaderInstanceId
            }))
      const image: LogImage = {
        node: this.cluster.label(name),
        committed,
        records: records.map((r): ImageRecord => ({ position: r.position, fingerprint: r.fingerprint })),
        epochs
      }
      const served: Array<{ stream: string; events: Array<{ eventNumber: number; eventId: string }> }> = []
      for (const client of this.clients) {
        for (const stream of client.streams) {
          const read = yield* open.store.readStreamForward(stream, 0, 4096)
          served.push({
            stream,
            events:
              read._tag === "Success"
                ? read.events.map((e) => ({ eventNumber: e.event!.eventNumber, eventId: e.event!.eventId }))
                : []
          })
        }
      }
      const streams = (): string | undefined => {
        for (const { stream, events } of served) {
          const problem = this.ledger.checkServed(name, stream, events, committed)
          if (problem !== undefined) return problem
        }
        return undefined
      }
      return { image, streams }
    })
  }

  /** Writes in doubt that can be decided now are decided, on a member that has caught up far enough. */
  settle(): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      for (const client of this.clients) {
        for (const doubt of [...client.doubts.values()]) {
          const unfinished = doubt.unfinished
          if (doubt.overAt === undefined) {
            if (unfinished !== undefined && unfinished.fiber.unsafePoll() === null && !unfinished.dead()) continue
            doubt.overAt = this.sequencer.next()
          }
          const overAt = doubt.overAt
          const decider = this.sequencer.acks.find((a) => a.sentAt > overAt)
          if (decider === undefined) continue
          const witness = this.cluster.members.find((m) => {
            const open = this.cluster.open(m.name)
            return open !== undefined && !this.cluster.paused.has(m.name) && open.committed() >= decider.bound
          })
          if (witness === undefined) continue
          const open = this.cluster.open(witness.name)!
          const last = yield* Effect.either(open.store.lastEventNumber(doubt.stream))
          if (last._tag === "Left" || this.cluster.open(witness.name) !== open) continue
          this.decide(client, doubt.stream, last.right, witness.name)
        }
      }
    })
  }

  private decide(client: ClusterClient, stream: string, stored: number, witness: string): void {
    const doubt = client.doubts.get(stream)!
    client.doubts.delete(stream)
    const model = this.auditor.model
    const before = model.lastEventNumber(stream)
    const written = stored !== before
    if (written) {
      const ok = model
        .possibleDecisions(
          stream,
          doubt.expected,
          doubt.events.map((e) => e.eventId)
        )
        .filter((p) => p.decision._tag === "Ok")
      if (ok.length === 0 || stored !== before + doubt.events.length) {
        return this.fail(
          `settling ${stream} on ${witness}: it grew from ${before} to ${stored}, which the model does not allow`
        )
      }
      model.learnCache(ok)
      model.applyAppend(stream, ok[0]!.decision, doubt.events, 0)
      const problem = this.ledger.written({
        stream,
        first: before + 1,
        eventIds: doubt.events.map((e) => e.eventId),
        bound: undefined,
        node: witness
      })
      if (problem !== undefined) return this.fail(problem)
    }
    const problem = this.ledger.settle(stream, written)
    if (problem !== undefined) return this.fail(problem)
    this.auditor.settledInRun++
    this.auditor.coverage.hit("indeterminate.settledInRun")
    this.auditor.trace(`settled ${stream} on ${witness}: ${written ? "written" : "not written"}`)
  }
}

export interface ScannedRecord {
  readonly position: number
  readonly fingerprint: string
  readonly epoch?: ImageEpoch
}

/** The records of the store's log below `committed`, from its engine (what the node holds, not what it serves). */
export const scanCommitted = (store: EventStoreService, committed: number) =>
  Effect.gen(function* () {
    const out: Array<ScannedRecord> = []
    let from = 0
    while (from < committed) {
      const page = yield* store.engine.log.scanForward(from, committed, 512)
      for (const r of page.records) {
        out.push({
          position: r.logPosition,
          fingerprint: fingerprintOf(r),
          ...(r.kind === 3
            ? {
                epoch: {
                  epochNumber: r.epochNumber,
                  position: r.logPosition,
                  epochId: r.epochId,
                  leaderInstanceId: r.leaderInstanceId
                }
              }
            : {})
        })
      }
      if (page.reachedEnd || page.next <= from) break
      from = page.next
    }
    return out
  })

/** The epoch records among scanned records, newest first. */
const epochsOf = (records: ReadonlyArray<ScannedRecord>): Array<ImageEpoch> =>
  records.flatMap((r) => (r.epoch === undefined ? [] : [r.epoch])).reverse()
