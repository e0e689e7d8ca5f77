/**
 * A tiny deterministic driver for the election state machine: N voters, a message queue with seeded
 * delays, loss, duplication and partitions, crashes that keep only the synced promise, and a log of what
 * happened for the properties to check. Time moves from one event (a delivery or a node's deadline) to the
 * next.
 */
import { Prng } from "@vellum/platform"
import { Election } from "../src/index.js"

type Message = Election.ElectionMessage

export interface Faults {
  readonly lossChance: number
  readonly duplicateChance: number
  readonly maxDelayMillis: number
  /** Chance, at each event, that a running node crashes (it stays down 200..3000 ms). */
  readonly crashChance: number
  /** Chance, at each event, that the links are re-partitioned (each directed link cut with 30%). */
  readonly partitionChance: number
}

export const NoFaults: Faults = {
  lossChance: 0,
  duplicateChance: 0,
  maxDelayMillis: 5,
  crashChance: 0,
  partitionChance: 0
}

interface Node {
  readonly name: string
  /** Undefined while crashed. */
  state: Election.ElectionState | undefined
  /** What survives a crash. */
  synced: Election.VotePromise
  downUntil: number
  tip: Election.LogTip
  priorityRank: number
}

interface InFlight {
  readonly at: number
  readonly to: string
  readonly message: Message
  readonly seq: number
}

export interface Happened {
  /** Every (term, leader) election won. */
  readonly elected: Array<{ readonly term: number; readonly leader: string; readonly at: number }>
  /** Every vote granted: (term, voter, candidate). */
  readonly votes: Array<{ readonly term: number; readonly voter: string; readonly candidate: string }>
  /** Every promise a node synced, in order, per node (restarts included). */
  readonly promises: Map<string, Array<Election.VotePromise>>
}

export class ElectionCluster {
  readonly nodes: Array<Node>
  readonly settings: Map<string, Election.ElectionSettings>
  readonly happened: Happened = { elected: [], votes: [], promises: new Map() }
  now = 0
  private queue: Array<InFlight> = []
  private seq = 0
  private cuts = new Set<string>()
  private readonly prng: Prng

  constructor(
    seed: number,
    size: number,
    public faults: Faults,
    readonly timeoutMillis = 1000,
    readonly heartbeatMillis = 100,
    equalLogs = false
  ) {
    this.prng = new Prng(seed)
    const names = Array.from({ length: size }, (_, i) => `n${i}`)
    this.nodes = names.map((name, i) => ({
      name,
      state: undefined,
      synced: { term: 0, votedFor: undefined },
      downUntil: 0,
      // Logs differ a little, so the up-to-date rule matters.
      tip: { epochNumber: 0, writerCheckpoint: equalLogs ? 0 : this.prng.int(0, 3) * 100 },
      priorityRank: i
    }))
    this.settings = new Map(
      names.map((self) => [
        self,
        { self, voters: names, electionTimeoutMillis: timeoutMillis, heartbeatMillis: heartbeatMillis }
      ])
    )
    for (const node of this.nodes) {
      this.happened.promises.set(node.name, [node.synced])
      node.state = Election.startElection(this.settings.get(node.name)!, node.synced, this.ctx(node))
    }
  }

  private ctx(node: Node): Election.ElectionContext {
    return { now: this.now, tip: node.tip, priorityRank: node.priorityRank, random: () => this.prng.next() }
  }

  node(name: string): Node {
    return this.nodes.find((n) => n.name === name)!
  }

  leaders(): Array<{ name: string; term: number }> {
    return this.nodes
      .filter((n) => n.state?.role._tag === "Leader")
      .map((n) => ({ name: n.name, term: n.state!.promise.term }))
  }

  heal(): void {
    this.cuts.clear()
  }

  /** Applies a step's effects: the promise first (synced), then the messages. */
  private apply(node: Node, step: Election.ElectionStep): void {
    node.state = step.state
    if (step.persist !== undefined) {
      node.synced = step.persist
      this.happened.promises.get(node.name)!.push(step.persist)
    }
    if (step.elected !== undefined) {
      this.happened.elected.push({ term: step.elected, leader: node.name, at: this.now })
      // A new leader writes its epoch: its log now ends in its term.
      node.tip = { epochNumber: step.elected, writerCheckpoint: node.tip.writerCheckpoint + 10 }
    }
    for (const out of step.send) {
      const m = out.message
      if (m._tag === "VoteReply" && m.granted && !m.preVote)
        this.happened.votes.push({ term: m.term, voter: node.name, candidate: out.to })
      this.post(node.name, out.to, m)
    }
  }

  private post(from: string, to: string, message: Message): void {
    if (this.cuts.has(`${from}->${to}`)) return
    if (this.prng.chance(this.faults.lossChance)) return
    const copies = this.prng.chance(this.faults.duplicateChance) ? 2 : 1
    for (let c = 0; c < copies; c++)
      this.queue.push({ at: this.now + this.prng.int(1, this.faults.maxDelayMillis), to, message, seq: this.seq++ })
  }

  /** Lets a leader hand over (`resign`), to the follower with the best log. */
  resign(name: string): void {
    const node = this.node(name)
    if (node.state === undefined) return
    const successor = this.nodes
      .filter((n) => n.name !== name && n.state !== undefined)
      .sort((a, b) => Election.compareTips(b.tip, a.tip))[0]?.name
    this.apply(node, Election.resign(this.settings.get(name)!, node.state, successor, this.ctx(node)))
  }

  /** Runs until `untilMillis`; faults as configured. */
  run(untilMillis: number): void {
    while (this.now < untilMillis) {
      const nextDeadline = Math.min(...this.nodes.map((n) => (n.state === undefined ? n.downUntil : n.state.deadline)))
      this.queue.sort((a, b) => a.at - b.at || a.seq - b.seq)
      const nextMessage = this.queue[0]?.at ?? Infinity
      this.now = Math.max(this.now, Math.min(nextDeadline, nextMessage, untilMillis))
      if (this.now >= untilMillis) return
      this.maybeFault()
      if (nextMessage <= nextDeadline) {
        const m = this.queue.shift()!
        const node = this.node(m.to)
        if (node.state !== undefined)
          this.apply(node, Election.receive(this.settings.get(node.name)!, node.state, m.message, this.ctx(node)))
        continue
      }
      for (const node of this.nodes) {
        if (node.state === undefined) {
          if (this.now >= node.downUntil) {
            // A restart: only the synced promise survived.
            node.state = Election.startElection(this.settings.get(node.name)!, node.synced, this.ctx(node))
          }
          continue
        }
        if (this.now >= node.state.deadline)
          this.apply(node, Election.tick(this.settings.get(node.name)!, node.state, this.ctx(node)))
      }
    }
  }

  private maybeFault(): void {
    if (this.prng.chance(this.faults.crashChance)) {
      const victim = this.nodes[this.prng.int(0, this.nodes.length - 1)]!
      if (victim.state !== undefined) {
        victim.state = undefined
        victim.downUntil = this.now + this.prng.int(200, 3000)
      }
    }
    if (this.prng.chance(this.faults.partitionChance)) {
      this.cuts.clear()
      for (const a of this.nodes)
        for (const b of this.nodes) if (a !== b && this.prng.chance(0.3)) this.cuts.add(`${a.name}->${b.name}`)
    }
  }
}
