// The cluster's options: what `toClusterSettings` derives from them (the settings the cluster service runs
// with), and the rules that refuse a node whose cluster options cannot work together, each with its reason.
import { describe, expect, it } from "vitest"
import { isSingleNode } from "@vellum/cluster"
import { defaultConfig, formatEffectiveConfig, toClusterSettings } from "../src/config/index.js"
import { fail, load } from "./configSupport.js"

const SECRET = "a development secret"
const withSecret = { VELLUM_CLUSTER_SECRET: SECRET }
/** The first node of a 3-node cluster on one machine, plus `extra`. */
const node1 = ["--cluster-size=3", "--gossip-seed=127.0.0.1:1122,127.0.0.1:1132"]

const voter = (extra: ReadonlyArray<string> = [], env: Record<string, string> = withSecret) =>
  load({ argv: [...node1, ...extra], env })
const problemsOf = (argv: ReadonlyArray<string>, env: Record<string, string> = withSecret) =>
  fail({ argv, env }).problems.map((p) => ({ option: p.option, reason: p.reason }))

describe("toClusterSettings", () => {
  it("with no options (npm start) is a single node, with the reference's timings", () => {
    const loaded = load({})
    const settings = toClusterSettings(loaded.config)
    expect(isSingleNode(settings)).toBe(true)
    expect(loaded.warnings).toEqual([])
    expect(settings).toEqual({
      clusterSize: 1,
      gossipSeeds: [],
      internal: { host: "127.0.0.1", port: 1112 },
      httpAdvertised: { host: "127.0.0.1", port: 2113 },
      nodePriority: 0,
      readOnlyReplica: false,
      clusterSecret: "",
      gossipIntervalMs: 2000,
      gossipTimeoutMs: 2500,
      gossipAllowedDifferenceMs: 60_000,
      deadMemberRemovalPeriodSec: 1800,
      leaderElectionTimeoutMs: 1000,
      commitTimeoutMs: 2000,
      heartbeatIntervalMs: 700,
      heartbeatTimeoutMs: 700,
      maxTruncationBytes: 256 * 1024 * 1024
    })
    expect(toClusterSettings(defaultConfig)).toEqual(settings)
  })

  it("a voting node of three: its size, the other voters' seeds in one spelling, its endpoints and secret", () => {
    const settings = toClusterSettings(
      load({
        argv: [
          "--cluster-size=3",
          "--gossip-seed=LocalHost:01122,[::1]:1132",
          "--replication-port=1142",
          "--node-port=2143",
          "--node-priority=5"
        ],
        env: withSecret
      }).config
    )
    expect(isSingleNode(settings)).toBe(false)
    expect(settings).toMatchObject({
      clusterSize: 3,
      gossipSeeds: ["localhost:1122", "[::1]:1132"],
      internal: { host: "127.0.0.1", port: 1142 },
      httpAdvertised: { host: "127.0.0.1", port: 2143 },
      nodePriority: 5,
      readOnlyReplica: false,
      clusterSecret: SECRET
    })
    expect(settings.internalListen).toBeUndefined()
  })

  it("a read-only replica lists every voter and is never a single node", () => {
    const settings = toClusterSettings(
      load({
        argv: ["--read-only-replica", "--cluster-size=3", "--gossip-seed=10.0.0.1:1112,10.0.0.2:1112,10.0.0.3:1112"],
        env: withSecret
      }).config
    )
    expect(settings).toMatchObject({ readOnlyReplica: true, clusterSize: 3 })
    expect(settings.gossipSeeds).toHaveLength(3)
    expect(isSingleNode(settings)).toBe(false)
  })

  it.each([
    ["--gossip-interval-ms", "gossipIntervalMs", 1500],
    ["--gossip-timeout-ms", "gossipTimeoutMs", 3000],
    ["--gossip-allowed-difference-ms", "gossipAllowedDifferenceMs", 5000],
    ["--leader-election-timeout-ms", "leaderElectionTimeoutMs", 4000],
    ["--dead-member-removal-period-sec", "deadMemberRemovalPeriodSec", 60],
    ["--commit-timeout-ms", "commitTimeoutMs", 3500],
    ["--replication-heartbeat-interval", "heartbeatIntervalMs", 250],
    ["--replication-heartbeat-timeout", "heartbeatTimeoutMs", 900],
    ["--max-truncation", "maxTruncationBytes", 1_048_576],
    ["--max-truncation", "maxTruncationBytes", -1]
  ] as const)("%s %s reaches %s", (flag, field, value) => {
    expect(toClusterSettings(voter([flag, String(value)]).config)[field]).toBe(value)
  })

  it("listens on ReplicationIp and is reached at the advertised internal endpoint when one is set", () => {
    const settings = toClusterSettings(
      voter([
        "--replication-ip=0.0.0.0",
        "--replication-host-advertise-as=node1.internal",
        "--replication-tcp-port-advertise-as=2112"
      ]).config
    )
    expect(settings.internal).toEqual({ host: "node1.internal", port: 2112 })
    expect(settings.internalListen).toEqual({ host: "0.0.0.0", port: 1112 })
  })

  it("advertises NodeHostAdvertiseAs:NodePortAdvertiseAs to clients, for the redirects to it when it leads", () => {
    const settings = toClusterSettings(
      voter(["--node-ip=0.0.0.0", "--node-host-advertise-as=db1.example.com", "--node-port-advertise-as=443"]).config
    )
    expect(settings.httpAdvertised).toEqual({ host: "db1.example.com", port: 443 })
  })

  it("accepts the older names IntIp, IntTcpPort and HttpPortAdvertiseAs, with a warning", () => {
    const loaded = voter(["--int-ip=127.0.0.2", "--int-tcp-port=1212", "--http-port-advertise-as=8080"])
    expect(toClusterSettings(loaded.config)).toMatchObject({
      internal: { host: "127.0.0.2", port: 1212 },
      httpAdvertised: { port: 8080 }
    })
    expect(loaded.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^IntIp is the old name of ReplicationIp/),
        expect.stringMatching(/^IntTcpPort is the old name of ReplicationPort/),
        expect.stringMatching(/^HttpPortAdvertiseAs is the old name of NodePortAdvertiseAs/)
      ])
    )
  })
})

describe("the cluster secret", () => {
  it("is read from the environment or the config file", () => {
    expect(voter().config.ClusterSecret).toBe(SECRET)
    const fromFile = load({ argv: node1, files: { "vellum.conf": `ClusterSecret: ${SECRET}\n` } })
    expect(fromFile.config.ClusterSecret).toBe(SECRET)
  })

  it("is refused on the command line, where every user of the machine can read it", () => {
    expect(problemsOf([...node1, `--cluster-secret=${SECRET}`], {})[0]).toEqual({
      option: "ClusterSecret",
      reason:
        "can only be set with an environment variable (VELLUM_CLUSTER_SECRET) or in the config file (ClusterSecret)"
    })
  })

  it("is required by a cluster, and says how to give it", () => {
    expect(problemsOf(node1, {})).toEqual([
      { option: "ClusterSecret", reason: expect.stringMatching(/needs a secret .* set VELLUM_CLUSTER_SECRET/) }
    ])
  })

  it("must be at least 16 characters", () => {
    expect(problemsOf(node1, { VELLUM_CLUSTER_SECRET: "short" })).toEqual([
      { option: "ClusterSecret", reason: "must be at least 16 characters long" }
    ])
  })

  it("is never shown", () => {
    expect(formatEffectiveConfig(voter())).not.toContain(SECRET)
  })

  it("on a single node has no effect, and says so", () => {
    expect(load({ env: withSecret }).warnings).toEqual(["ClusterSecret has no effect on a single node (ClusterSize 1)"])
  })
})

describe("gossip seeds: membership is fixed by configuration", () => {
  it("a cluster of 3 with no seeds refuses to start, and says why", () => {
    expect(problemsOf(["--cluster-size=3"])).toEqual([
      {
        option: "ClusterSize",
        reason:
          "a cluster of 3 voting nodes needs GossipSeed: a voting node of a cluster of 3 lists the internal endpoints " +
          "of the other 2 (their ReplicationIp:ReplicationPort), since members are fixed by configuration; with none, " +
          "this node would find no one and never reach a quorum"
      }
    ])
  })

  it("a voting node lists ClusterSize - 1 seeds", () => {
    expect(problemsOf(["--cluster-size=3", "--gossip-seed=127.0.0.1:1122"])).toEqual([
      {
        option: "GossipSeed",
        reason: expect.stringMatching(
          /^lists 1 endpoint, but a voting node of a cluster of 3 lists the internal endpoints of the other 2: members are fixed by configuration, and every voting node must know the same voters/
        )
      }
    ])
    expect(problemsOf(["--cluster-size=3", "--gossip-seed=a:1,b:1,c:1"])[0]!.reason).toMatch(/^lists 3 endpoints/)
  })

  it("a read-only replica lists all ClusterSize voters", () => {
    expect(problemsOf(["--read-only-replica", ...node1])).toEqual([
      {
        option: "GossipSeed",
        reason: expect.stringMatching(
          /^lists 2 endpoints, but a read-only replica lists the internal endpoints of all 3 voting nodes/
        )
      }
    ])
  })

  it("a node does not list itself (its internal endpoint, as advertised)", () => {
    expect(problemsOf(["--cluster-size=3", "--gossip-seed=127.0.0.1:1112,127.0.0.1:1122"])).toEqual([
      {
        option: "GossipSeed",
        reason: "lists this node's own internal endpoint 127.0.0.1:1112: list only the other members"
      }
    ])
    const advertised = [
      "--cluster-size=3",
      "--gossip-seed=Node1.internal:1112,node2.internal:1112",
      "--replication-host-advertise-as=node1.internal"
    ]
    expect(problemsOf(advertised)[0]!.reason).toBe(
      "lists this node's own internal endpoint node1.internal:1112: list only the other members"
    )
    expect(problemsOf(["--replication-ip=::1", "--cluster-size=3", "--gossip-seed=[::1]:1112,[::1]:1122"])[0]).toEqual({
      option: "GossipSeed",
      reason: "lists this node's own internal endpoint [::1]:1112: list only the other members"
    })
  })

  it("a seed is listed once, however it is spelt", () => {
    expect(problemsOf(["--cluster-size=3", "--gossip-seed=Node2:1122,node2:01122"])).toEqual([
      { option: "GossipSeed", reason: "lists node2:1122 more than once: list each member once" }
    ])
  })

  it("a single node has no seeds", () => {
    expect(problemsOf(["--gossip-seed=127.0.0.1:1122"])).toEqual([
      { option: "GossipSeed", reason: expect.stringMatching(/^a single node \(ClusterSize 1\) has no peers/) }
    ])
  })
})

describe("rules between the cluster's options", () => {
  it("a read-only replica needs a cluster to follow (ClusterSize 1 runs alone)", () => {
    expect(problemsOf(["--read-only-replica", "--gossip-seed=127.0.0.1:1122"])).toEqual([
      {
        option: "ReadOnlyReplica",
        reason: expect.stringMatching(/^a read-only replica follows the leader of a cluster, and ClusterSize 1/)
      }
    ])
  })

  it("a voting node keeps its log on disk; a read-only replica may use MemDb", () => {
    expect(problemsOf([...node1, "--mem-db"])).toEqual([
      {
        option: "MemDb",
        reason: expect.stringMatching(/^a voting node must keep its log and its votes across restarts/)
      }
    ])
    const replica = ["--read-only-replica", "--cluster-size=2", "--gossip-seed=127.0.0.1:1122,127.0.0.1:1132"]
    expect(load({ argv: [...replica, "--mem-db"], env: withSecret }).config.MemDb).toBe(true)
  })

  it("the internal interface and HTTP do not share a port on one address", () => {
    expect(problemsOf([...node1, "--replication-port=2113"])).toEqual([
      { option: "ReplicationPort", reason: expect.stringMatching(/^the internal interface cannot listen on the HTTP/) }
    ])
    expect(problemsOf([...node1, "--replication-port=2113", "--replication-ip=0.0.0.0"]).map((p) => p.option)).toEqual([
      "ReplicationIp",
      "ReplicationPort"
    ])
    expect(voter(["--replication-port=2113", "--replication-ip=127.0.0.2"]).config.ReplicationPort).toBe(2113)
  })

  it("an internal interface on every address needs the address peers reach it at", () => {
    expect(problemsOf([...node1, "--replication-ip=0.0.0.0"])).toEqual([
      {
        option: "ReplicationIp",
        reason: "peers cannot be sent to 0.0.0.0: set ReplicationHostAdvertiseAs to the address they reach this node at"
      }
    ])
  })

  it("an HTTP server on every address needs the address clients are redirected to", () => {
    expect(problemsOf([...node1, "--node-ip=0.0.0.0"])).toEqual([
      {
        option: "NodeIp",
        reason: expect.stringMatching(/^clients redirected to this node when it leads cannot be sent to 0\.0\.0\.0/)
      }
    ])
    expect(problemsOf([...node1, "--node-ip=::"])[0]!.option).toBe("NodeIp")
    expect(voter(["--node-ip=0.0.0.0", "--node-host-advertise-as=10.0.0.1"]).config.NodeIp).toBe("0.0.0.0")
  })

  it("the election timeout is at least 1000 ms, as in the reference", () => {
    expect(problemsOf([...node1, "--leader-election-timeout-ms=999"])).toEqual([
      { option: "LeaderElectionTimeoutMs", reason: "must be between 1000 and 2147483647, got 999" }
    ])
  })

  it.each([
    ["--replication-heartbeat-timeout=0", "ReplicationHeartbeatTimeout"],
    ["--replication-heartbeat-interval=0", "ReplicationHeartbeatInterval"],
    ["--commit-timeout-ms=0", "CommitTimeoutMs"],
    ["--gossip-interval-ms=0", "GossipIntervalMs"],
    ["--max-truncation=-2", "MaxTruncation"],
    ["--replication-port=0", "ReplicationPort"]
  ])("%s is refused", (arg, option) => {
    expect(problemsOf([...node1, arg]).map((p) => p.option)).toEqual([option])
  })

  it("PrepareTimeoutMs is refused but at its default: an append has one timeout, CommitTimeoutMs", () => {
    expect(problemsOf([...node1, "--prepare-timeout-ms=3000"])).toEqual([
      { option: "PrepareTimeoutMs", reason: expect.stringMatching(/CommitTimeoutMs alone/) }
    ])
  })

  it("an even cluster size starts, with a warning", () => {
    const loaded = load({
      argv: ["--cluster-size=4", "--gossip-seed=127.0.0.1:1122,127.0.0.1:1132,127.0.0.1:1142"],
      env: withSecret
    })
    expect(loaded.warnings).toEqual([
      "a cluster of 4 voting nodes survives no more failed nodes than one of 3 (a quorum is 3): an odd ClusterSize is better"
    ])
  })

  it("a well-formed node of three starts with no warning", () => {
    expect(voter().warnings).toEqual([])
  })
})
