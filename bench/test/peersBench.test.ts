import { describe, expect, it } from "vitest"
import { DATA_BYTES, benchEvent, parseOptions, runsOn, WORKLOADS } from "../src/peersPlan.js"
import { markdownTable, summarize, type Figure } from "../src/peersTable.js"
import { parseProcStat, treeTicks, treeTicksBetween } from "../src/procStat.js"

const stat = (pid: number, command: string, ppid: number, utime: number, stime: number) =>
  `${pid} (${command}) S ${ppid} ${pid} ${pid} 0 -1 4194560 100 0 0 0 ${utime} ${stime} 0 0 20 0 1 0 12345 0 0`

describe("bench:peers options", () => {
  it("defaults to 10 s windows after 2 s of warm-up, every workload, every server, one run", () => {
    const options = parseOptions([])
    expect(options).toMatchObject({ durationSec: 10, warmupSec: 2, runs: 1, readStreams: 1000 })
    expect(options.workloads.map((w) => w.name)).toEqual(WORKLOADS.map((w) => w.name))
    expect(options.peers).toEqual(["vellum", "postgres", "redis"])
  })

  it("shortens everything with --quick, and takes explicit values over it", () => {
    expect(parseOptions(["--quick"])).toMatchObject({ durationSec: 3, warmupSec: 1, readStreams: 200 })
    expect(parseOptions(["--quick", "--duration", "5", "--warmup", "0.5", "--runs", "2"])).toMatchObject({
      durationSec: 5,
      warmupSec: 0.5,
      runs: 2
    })
  })

  it("selects workloads and servers by name, in the benchmark's order, and refuses unknown ones", () => {
    const options = parseOptions(["--only", "read-global-100, append-1", "--peers", "redis,vellum"])
    expect(options.workloads.map((w) => w.name)).toEqual(["append-1", "read-global-100"])
    expect(options.peers).toEqual(["vellum", "redis"])
    expect(() => parseOptions(["--only", "append-2"])).toThrow(/append-2/)
    expect(() => parseOptions(["--peers", "mysql"])).toThrow(/mysql/)
    expect(() => parseOptions(["--runs", "1.5"])).toThrow(/--runs/)
    expect(() => parseOptions(["--duration", "0"])).toThrow(/--duration/)
  })

  it("gives Redis no global-order workload", () => {
    const global = WORKLOADS.filter((w) => w.kind === "read-global")
    expect(global.length).toBe(2)
    expect(global.some((w) => runsOn("redis", w))).toBe(false)
    expect(global.every((w) => runsOn("postgres", w) && runsOn("vellum", w))).toBe(true)
  })

  it("sends events of 256 bytes of data, each with its own UUID", () => {
    const [a, b] = [benchEvent(), benchEvent()]
    expect(Buffer.byteLength(JSON.stringify(a.data))).toBe(DATA_BYTES)
    expect(a.eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(a.eventId).not.toBe(b.eventId)
  })
})

describe("bench:peers summary", () => {
  const workloads = WORKLOADS.filter((w) => w.name === "append-1" || w.name === "read-global-20")
  const figures: Array<Figure> = [
    { workload: "append-1", peer: "vellum", eventsPerSec: 3416.4, serverCpuUsPerEvent: 150.04, errors: 0 },
    { workload: "append-1", peer: "postgres", eventsPerSec: 4684, serverCpuUsPerEvent: 98.5, errors: 0 },
    { workload: "append-1", peer: "redis", eventsPerSec: 29422, serverCpuUsPerEvent: 11.25, errors: 0 },
    { workload: "read-global-20", peer: "vellum", eventsPerSec: 20000, serverCpuUsPerEvent: 20, errors: 3 },
    { workload: "read-global-20", peer: "postgres", eventsPerSec: 73989, errors: 0 }
  ]

  it("divides Vellum's events/s by each peer's, and leaves out figures of runs with errors", () => {
    const [appends, reads] = summarize(workloads, figures)
    expect(appends).toMatchObject({
      eventsPerSec: { vellum: 3416, postgres: 4684, redis: 29422 },
      vellumOverPostgres: 0.73,
      vellumOverRedis: 0.12,
      invalid: []
    })
    expect(reads!.eventsPerSec).toEqual({ postgres: 73989 })
    expect(reads!.invalid).toEqual(["vellum"])
    expect(reads).not.toHaveProperty("vellumOverPostgres")
    expect(reads).not.toHaveProperty("vellumOverRedis")
  })

  it("prints one markdown row per workload, with a dash where a server has no figure", () => {
    const lines = markdownTable(summarize(workloads, figures)).split("\n")
    expect(lines[0]).toBe(
      "| workload | Vellum ev/s | PostgreSQL ev/s | Redis ev/s | Vellum÷PostgreSQL | Vellum÷Redis " +
        "| Vellum CPU µs/ev | PostgreSQL CPU µs/ev | Redis CPU µs/ev |"
    )
    expect(lines[1]).toBe("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    expect(lines[2]).toBe(
      "| single-event appends, 64 clients | 3,416 | 4,684 | 29,422 | 0.73× | 0.12× | 150.0 | 98.5 | 11.3 |"
    )
    expect(lines[3]).toBe(
      "| 20-event reads in global order, 16 clients | errors | 73,989 | — | — | — | errors | — | — |"
    )
    expect(lines.length).toBe(4)
  })
})

describe("bench:peers server CPU from /proc", () => {
  it("reads a process's parent and CPU ticks, whatever its command name holds", () => {
    expect(parseProcStat(stat(42, "postgres: walwriter ", 7, 120, 30))).toEqual({ pid: 42, ppid: 7, ticks: 150 })
    expect(parseProcStat(stat(43, "a) S 1 (b", 7, 5, 6))).toEqual({ pid: 43, ppid: 7, ticks: 11 })
    expect(parseProcStat("")).toBeUndefined()
  })

  it("sums a server's whole process tree and nothing else", () => {
    const entries = [
      stat(1, "init", 0, 1000, 1000),
      stat(100, "postgres", 1, 50, 10),
      stat(101, "postgres: checkpointer ", 100, 1, 2),
      stat(102, "postgres: postgres postgres 127.0.0.1(5000) SELECT", 100, 300, 100),
      stat(200, "redis-server", 1, 70, 7),
      stat(300, "child of a backend", 102, 4, 0)
    ].map((text) => parseProcStat(text)!)
    const tree = treeTicks(entries, 100)
    expect([...tree.keys()].sort((a, b) => a - b)).toEqual([100, 101, 102, 300])
    expect(tree.get(102)).toBe(400)
    expect(treeTicks(entries, 999).size).toBe(0)
  })

  it("counts what each process used between the readings, all of it for a process born in between", () => {
    const start = new Map([
      [100, 60],
      [101, 3],
      [102, 400],
      [103, 9]
    ])
    // 103 ended in between; 104 was born in between.
    const end = new Map([
      [100, 70],
      [101, 3],
      [102, 650],
      [104, 5]
    ])
    expect(treeTicksBetween(start, end)).toBe(10 + 0 + 250 + 5)
  })
})
