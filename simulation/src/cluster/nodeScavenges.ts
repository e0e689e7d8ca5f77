/**
 * Every node scavenge of a multi-node seed, as each member's own scavenger shows it: the runner reads every
 * open member's `Scavenger.last` after each slice of the world (a slice runs one node, so the order of what
 * two members did is exact), and a crash ends the run it cut. A run is in progress from the slice that
 * shows its id until the slice that shows its result (a crash: "Crashed").
 *
 * The rule checked as runs are seen: at most one node scavenge runs in the cluster at any moment — a run
 * that starts while another member's is in progress fails the seed. `checkOneAtATime` states the same rule
 * over a finished trace (the unit tests build traces by hand).
 */
import type { LastScavenge } from "@vellum/scavenge"

export type RunOutcome = "Success" | "Stopped" | "Errored" | "Crashed"

/** The scavenge point a run worked to, once learned (a Success run's, read from its member's log). */
export interface RunPoint {
  readonly number: number
  readonly position: number
}

export interface NodeScavenge {
  /** The member as the checkers name it (`ClusterWorld.label`). */
  readonly node: string
  readonly scavengeId: string
  /** The observation (slice) that showed it started, and the simulated ms then. */
  readonly startSeq: number
  readonly startedAt: number
  endSeq?: number
  endedAt?: number
  outcome?: RunOutcome
  point?: RunPoint
}

const NoScavenge = "00000000-0000-0000-0000-000000000000"

export class NodeScavengeLog {
  readonly runs: Array<NodeScavenge> = []
  private seq = 0
  /** Per member lifetime (`label#incarnation`): the id its scavenger last showed. */
  private readonly seen = new Map<string, string>()
  /** Per member (label): its run in progress. */
  private readonly inProgress = new Map<string, NodeScavenge>()
  /** Runs that ended since `takeEnded` last took them. */
  private ended: Array<NodeScavenge> = []

  /** The next observation's sequence number (one per slice the runner observes). */
  tick(): number {
    return ++this.seq
  }

  /** Runs in progress now. */
  running(): Array<NodeScavenge> {
    return [...this.inProgress.values()]
  }

  /** What the member's scavenger shows now; the problem, if a run started beside another's. */
  observe(node: string, lifetime: string, last: LastScavenge, now: number): string | undefined {
    const key = `${node}#${lifetime}`
    const seenId = this.seen.get(key) ?? NoScavenge
    let problem: string | undefined
    if (last.scavengeId !== seenId) {
      this.seen.set(key, last.scavengeId)
      const before = this.inProgress.get(node)
      if (before !== undefined) this.end(before, "Stopped", now)
      const others = this.running()
      const run: NodeScavenge = { node, scavengeId: last.scavengeId, startSeq: this.seq, startedAt: now }
      this.runs.push(run)
      this.inProgress.set(node, run)
      if (others.length > 0) problem = twoAtOnce(run, others[0]!)
    }
    const run = this.inProgress.get(node)
    if (run !== undefined && run.scavengeId === last.scavengeId && last.result !== "InProgress") {
      this.end(run, last.result === "Unknown" ? "Stopped" : last.result, now)
    }
    return problem
  }

  /** The member's lifetime ended (a crash, or its machine replaced): its run in progress ends with it. */
  cut(node: string, now: number): void {
    const run = this.inProgress.get(node)
    if (run !== undefined) this.end(run, "Crashed", now)
  }

  /** The runs that ended since the last call. */
  takeEnded(): Array<NodeScavenge> {
    const ended = this.ended
    this.ended = []
    return ended
  }

  /** The member's newest run that ended, if any. */
  lastEnded(node: string): NodeScavenge | undefined {
    for (let i = this.runs.length - 1; i >= 0; i--) {
      const run = this.runs[i]!
      if (run.node === node && run.outcome !== undefined) return run
    }
    return undefined
  }

  private end(run: NodeScavenge, outcome: RunOutcome, now: number): void {
    run.endSeq = this.seq
    run.endedAt = now
    run.outcome = outcome
    this.inProgress.delete(run.node)
    this.ended.push(run)
  }
}

const twoAtOnce = (a: NodeScavenge, b: NodeScavenge): string =>
  `two node scavenges at once: ${a.node}'s ${a.scavengeId} started at ${a.startedAt} ms while ${b.node}'s ${b.scavengeId} (since ${b.startedAt} ms) was still running`

/** At most one node scavenge at any moment, over a finished trace (a run never ended runs to the end). */
export const checkOneAtATime = (runs: ReadonlyArray<NodeScavenge>): string | undefined => {
  const sorted = [...runs].sort((a, b) => a.startSeq - b.startSeq)
  for (let i = 1; i < sorted.length; i++) {
    const run = sorted[i]!
    const earlier = sorted.slice(0, i).find((o) => o.node !== run.node && (o.endSeq ?? Infinity) > run.startSeq)
    if (earlier !== undefined) return twoAtOnce(run, earlier)
  }
  return undefined
}
