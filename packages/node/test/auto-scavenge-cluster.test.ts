/**
 * Auto-scavenge on a real 3-node cluster: three node processes (compiled node, free ports, temporary data
 * directories), driven only over HTTP. With a log worth scavenging (many small chunks, deleted streams and
 * streams capped by `$maxCount`), and `* * * * *` configured, it proves:
 * - configure through a follower answers 202 and through the leader 200 `{}`; every node's status shows the
 *   schedule in its expanded rendering and the time to the next cycle in .NET's TimeSpan format; a bad
 *   schedule is a 400;
 * - the cycle that starts at the next whole minute is seen InProgress, is paused while a node scavenge runs
 *   (202, then Paused, then 200 for a second pause, 202 through a follower), nothing starts while paused, and
 *   after resume (200) it completes: each member's node scavenge once with Success, the followers first, and
 *   the leader last, after it resigned (another node led when its scavenge started), as `$auto-scavenges`
 *   records and each node's `GET /admin/scavenge/last` says.
 * `npm run test:auto-scavenge-cluster` runs longer cases (a clean cycle's exact events, a follower killed
 * mid-scavenge, a node replaced). Every wait is a generous bound; nothing is timed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startProcessCluster, waitForRoles, waitUntil, type ProcessCluster } from "./clusterProcessSupport.js"
import {
  anyStatus,
  AutoScavengeClusterArgs,
  call,
  completions,
  lastScavengeResult,
  rolesWhenStarted,
  statusOf,
  unlinkedNodeEvents,
  waitForFirstNodeScavenge,
  watchCycle,
  Work,
  writeScavengeableLog
} from "./autoScavengeClusterSupport.js"

/** Bounds, not expectations: the schedule fires at the next whole minute; a loaded machine is slow. */
const ELECTION_MS = 30_000
const CYCLE_MS = 150_000

let cluster: ProcessCluster
beforeAll(async () => {
  cluster = await startProcessCluster(3, { args: AutoScavengeClusterArgs })
}, 120_000)
afterAll(() => cluster?.dispose(), 30_000)

describe("auto-scavenge on a cluster of three node processes", () => {
  it("configures through any node, then runs a cycle paused and resumed midway, the leader last after it resigned", async () => {
    const { leader, followers } = await waitForRoles(cluster, cluster.members, ELECTION_MS)
    await writeScavengeableLog(leader, { prefix: "work", ...Work })

    // A follower passes the command on (202, no body), once it knows the leader from gossip.
    const viaFollower = await waitUntil(cluster, "configure through a follower", ELECTION_MS, async () => {
      const answer = await call(followers[0]!, "POST", "/auto-scavenge/configure", { schedule: "*/15 * * * *" })
      return answer.status === 500 ? undefined : answer
    })
    expect(viaFollower).toEqual({ status: 202, text: "" })
    expect((await statusOf(followers[1]!))?.schedule).toBe("0,15,30,45 * * * *")
    expect(await call(leader, "POST", "/auto-scavenge/configure", { schedule: "* * *" })).toEqual({
      status: 400,
      text: '"Invalid CRON expression"'
    })
    expect(await call(leader, "POST", "/auto-scavenge/configure", { schedule: "* * * * *" })).toEqual({
      status: 200,
      text: "{}"
    })
    for (const member of cluster.members) {
      const status = await statusOf(member)
      expect(status).toMatchObject({ state: "Waiting", schedule: "* * * * *", cycle: null })
      // At most a minute away, in the constant TimeSpan format: "00:00:37.1630000", or "00:01:00".
      expect(status?.timeUntilNextCycle).toMatch(/^00:(00:[0-5]\d(\.\d{7})?|01:00)$/)
    }

    // The cycle starts; pause it while its first node scavenge runs (none can be done yet, so one runs).
    const running = await waitForFirstNodeScavenge(cluster, CYCLE_MS)
    expect(running.designated).not.toBe(leader.httpPort)
    expect(await call(leader, "POST", "/auto-scavenge/pause")).toEqual({ status: 202, text: "" })
    await waitUntil(cluster, "paused", ELECTION_MS, async () =>
      (await statusOf(leader))?.state === "Paused" ? true : undefined
    )
    expect(await call(leader, "POST", "/auto-scavenge/pause")).toEqual({ status: 200, text: "{}" })
    // A proxied command is 202 whatever the leader answered.
    expect(await call(followers[1]!, "POST", "/auto-scavenge/pause")).toEqual({ status: 202, text: "" })
    const paused = await statusOf(followers[0]!)
    expect(paused).toMatchObject({ state: "Paused", timeUntilNextCycle: "00:00:00" })
    expect(await call(leader, "POST", "/auto-scavenge/resume")).toEqual({ status: 200, text: "{}" })
    expect(await call(leader, "POST", "/auto-scavenge/resume")).toEqual({ status: 200, text: "{}" })

    const cycle = await watchCycle(cluster, running.clusterScavengeId, CYCLE_MS)
    const types = cycle.events.map((event) => event.eventType)
    expect(types[0]).toBe("$cluster-scavenge-started")
    expect(types.at(-1)).toBe("$cluster-scavenge-completed")
    // Nothing happened between paused and resumed.
    const pausedAt = types.indexOf("$paused")
    expect(types.slice(types.indexOf("$pause-requested"), pausedAt + 2)).toEqual([
      "$pause-requested",
      "$paused",
      "$resumed"
    ])
    expect(unlinkedNodeEvents(cycle.events)).toEqual([])
    const done = completions(cycle.events)
    expect(done.map((c) => c.result)).toEqual(["Success", "Success", "Success"])
    expect(
      done
        .slice(0, 2)
        .map((c) => c.port)
        .sort()
    ).toEqual(followers.map((f) => f.httpPort).sort())
    expect(done[2]?.port).toBe(leader.httpPort)
    // When the leader's own scavenge started, another node led.
    const roles = rolesWhenStarted(cycle, leader, cluster.members)
    expect(roles.own).not.toBe("leader")
    expect(roles.leaders).toBe(1)

    const after = await anyStatus(cluster.members)
    expect(after).toMatchObject({ state: "Waiting", schedule: "* * * * *", cycle: null })
    for (const member of cluster.members) expect(await lastScavengeResult(member)).toBe("Success")
  }, 300_000)
})
