/**
 * Auto-scavenge on a real 3-node cluster, the longer cases (`npm run test:auto-scavenge-cluster`: three
 * cycles, each starting at a whole minute, so a few minutes in all; `npm test` runs the shorter
 * auto-scavenge-cluster.test.ts). Three node processes, `* * * * *` configured, driven over HTTP only:
 * 1. a clean cycle: `$auto-scavenges` records exactly started, then designated/started/completed for each
 *    follower and then the leader, then completed; the leader resigned before its own scavenge started;
 * 2. a follower SIGKILLed mid-scavenge and restarted on its directory (the restart path): it is designated
 *    again, scavenged with Success, and the cycle completes with every member once;
 * 3. a follower replaced mid-scavenge by a new node on an empty directory, at the same internal address but
 *    another HTTP port (the cancel path): once gossip forgets the old endpoint, the members change (old out,
 *    new in), nothing completes under the old one's name, and the cycle completes over the new membership,
 *    the leader last.
 * Every wait is a generous bound; nothing is timed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startProcessCluster, waitForRoles, type Member, type ProcessCluster } from "./clusterProcessSupport.js"
import {
  AutoScavengeClusterArgs,
  anyStatus,
  call,
  completions,
  cycleIds,
  lastScavengeResult,
  portOf,
  rolesWhenStarted,
  unlinkedNodeEvents,
  waitForFirstNodeScavenge,
  watchCycle,
  Work,
  writeScavengeableLog,
  type Cycle
} from "./autoScavengeClusterSupport.js"

const ELECTION_MS = 30_000
/** From the end of one cycle to the end of the next: the schedule fires at the next whole minute. */
const CYCLE_MS = 180_000

let cluster: ProcessCluster
beforeAll(async () => {
  cluster = await startProcessCluster(3, { args: AutoScavengeClusterArgs })
}, 120_000)
afterAll(() => cluster?.dispose(), 30_000)

/** The leader resigned before its own scavenge: another member led when that scavenge was first seen. */
const expectResignedFirst = (cycle: Cycle, leader: Member) => {
  const roles = rolesWhenStarted(cycle, leader, cluster.members)
  expect(roles.own).not.toBe("leader")
  expect(roles.leaders).toBe(1)
}

/**
 * Writes fresh work through the leader, so the first node scavenge of the next cycle runs a while, and waits
 * for that scavenge (not one of a cycle that started meanwhile and may have had little of it to do).
 */
const nextCycleAtItsFirstNode = async (prefix: string) => {
  const { leader } = await waitForRoles(cluster, cluster.members, ELECTION_MS)
  await writeScavengeableLog(leader, { prefix, ...Work })
  const running = await waitForFirstNodeScavenge(cluster, CYCLE_MS, await cycleIds(leader))
  const designated = cluster.members.find((member) => member.httpPort === running.designated)!
  expect(designated).not.toBe(leader)
  return { leader, designated, clusterScavengeId: running.clusterScavengeId }
}

const ports = (members: ReadonlyArray<Member>) => members.map((m) => m.httpPort).sort()

describe("auto-scavenge on a cluster of three node processes, the longer cases", () => {
  it("runs a clean cycle: each follower, then the leader after it resigned", async () => {
    const { leader, followers } = await waitForRoles(cluster, cluster.members, ELECTION_MS)
    await writeScavengeableLog(leader, { prefix: "work", ...Work })
    expect(await call(leader, "POST", "/auto-scavenge/configure", { schedule: "* * * * *" })).toEqual({
      status: 200,
      text: "{}"
    })
    const cycle = await watchCycle(cluster, 0, CYCLE_MS)
    const nodeSteps = ["$node-designated", "$node-scavenge-started", "$node-scavenge-completed"]
    expect(cycle.events.map((event) => event.eventType)).toEqual([
      "$cluster-scavenge-started",
      ...nodeSteps,
      ...nodeSteps,
      ...nodeSteps,
      "$cluster-scavenge-completed"
    ])
    expect(unlinkedNodeEvents(cycle.events)).toEqual([])
    const done = completions(cycle.events)
    expect(done.map((c) => c.result)).toEqual(["Success", "Success", "Success"])
    expect([done[0]!.port, done[1]!.port].sort()).toEqual(ports(followers))
    expect(done[2]!.port).toBe(leader.httpPort)
    expectResignedFirst(cycle, leader)
    expect(cycle.statusStates).toContain("InProgress")
    const after = await anyStatus(cluster.members)
    expect(after).toMatchObject({ state: "Waiting", schedule: "* * * * *", cycle: null })
    for (const member of cluster.members) expect(await lastScavengeResult(member)).toBe("Success")
  }, 300_000)

  it("designates a follower killed mid-scavenge again once it is back, and completes the cycle", async () => {
    const { leader, designated: killed, clusterScavengeId } = await nextCycleAtItsFirstNode("before-kill")
    await cluster.kill(killed)
    cluster.restart(killed)

    const cycle = await watchCycle(cluster, clusterScavengeId, CYCLE_MS)
    expect(unlinkedNodeEvents(cycle.events)).toEqual([])
    const about = (type: string, member: Member) =>
      cycle.events.filter((event) => event.eventType === type && portOf(event) === member.httpPort)
    expect(about("$node-designated", killed).length).toBeGreaterThanOrEqual(2)
    expect(about("$node-scavenge-started", killed).length).toBeGreaterThanOrEqual(2)
    const done = completions(cycle.events)
    expect(done.map((c) => c.port).sort()).toEqual(ports(cluster.members))
    expect(done.map((c) => c.result)).toEqual(["Success", "Success", "Success"])
    expect(done[2]!.port).toBe(leader.httpPort)
    expectResignedFirst(cycle, leader)
    expect(await lastScavengeResult(killed)).toBe("Success")
  }, 300_000)

  it("drops a follower replaced mid-scavenge by a node at another endpoint, and completes over the new members", async () => {
    const { leader, designated: replaced, clusterScavengeId } = await nextCycleAtItsFirstNode("before-replace")
    const replacement = await cluster.replace(replaced)

    const cycle = await watchCycle(cluster, clusterScavengeId, CYCLE_MS)
    expect(unlinkedNodeEvents(cycle.events)).toEqual([])
    const changes = cycle.events.filter((event) => event.eventType === "$cluster-members-changed")
    expect(changes.map((event) => event.data)).toEqual([
      {
        added: [{ address: "127.0.0.1", port: replacement.httpPort }],
        removed: [{ address: "127.0.0.1", port: replaced.httpPort }]
      }
    ])
    const done = completions(cycle.events)
    // The replaced node's endpoint is gone: no scavenge can have completed there (none that ran on its
    // replacement, reached at the same internal address, may count as its own).
    expect(done.filter((c) => c.port === replaced.httpPort)).toEqual([])
    expect(done.map((c) => c.port).sort()).toEqual(ports(cluster.members))
    expect(done.map((c) => c.result)).toEqual(["Success", "Success", "Success"])
    expect(done[2]!.port).toBe(leader.httpPort)
    const members = (cycle.events.at(-1)!.data as { members: ReadonlyArray<{ port: number }> }).members
    expect(members.map((m) => m.port).sort()).toEqual(ports(cluster.members))
    expectResignedFirst(cycle, leader)
    for (const member of cluster.members) expect(await lastScavengeResult(member)).toBe("Success")
    // The replacement is a full member: one leader and two followers among the current three.
    await waitForRoles(cluster, cluster.members, ELECTION_MS)
  }, 300_000)
})
