/**
 * The summary of `npm run bench:peers`: one row per workload with each server's events per second, Vellum's
 * ratio to each peer and each server's CPU per event, as JSON (one line a row) and as a markdown table.
 */
import { PEER_TITLES, type Peer, type Workload } from "./peersPlan.js"

/** One server's figure for one workload in one run. */
export interface Figure {
  readonly workload: string
  readonly peer: Peer
  readonly eventsPerSec: number
  readonly serverCpuUsPerEvent?: number
  readonly errors: number
}

export interface SummaryRow {
  readonly workload: string
  readonly title: string
  readonly eventsPerSec: Partial<Record<Peer, number>>
  readonly cpuUsPerEvent: Partial<Record<Peer, number>>
  /** Vellum's events/s ÷ the peer's; absent without both valid figures. */
  readonly vellumOverPostgres?: number
  readonly vellumOverRedis?: number
  /** Servers whose run had errors: their figures are left out. */
  readonly invalid: ReadonlyArray<Peer>
}

const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0 ? undefined : Math.round((a / b) * 100) / 100

export const summarize = (workloads: ReadonlyArray<Workload>, figures: ReadonlyArray<Figure>): Array<SummaryRow> =>
  workloads.map((workload) => {
    const eventsPerSec: Partial<Record<Peer, number>> = {}
    const cpuUsPerEvent: Partial<Record<Peer, number>> = {}
    const invalid: Array<Peer> = []
    for (const figure of figures.filter((f) => f.workload === workload.name)) {
      if (figure.errors > 0) {
        invalid.push(figure.peer)
        continue
      }
      eventsPerSec[figure.peer] = Math.round(figure.eventsPerSec)
      if (figure.serverCpuUsPerEvent !== undefined) cpuUsPerEvent[figure.peer] = figure.serverCpuUsPerEvent
    }
    const overPostgres = ratio(eventsPerSec.vellum, eventsPerSec.postgres)
    const overRedis = ratio(eventsPerSec.vellum, eventsPerSec.redis)
    return {
      workload: workload.name,
      title: workload.title,
      eventsPerSec,
      cpuUsPerEvent,
      ...(overPostgres !== undefined ? { vellumOverPostgres: overPostgres } : {}),
      ...(overRedis !== undefined ? { vellumOverRedis: overRedis } : {}),
      invalid
    }
  })

const DASH = "—"

const count = (n: number | undefined) => (n === undefined ? DASH : n.toLocaleString("en-US"))
const times = (n: number | undefined) => (n === undefined ? DASH : `${n.toFixed(2)}×`)
const micros = (n: number | undefined) => (n === undefined ? DASH : n.toFixed(1))

/** A server's cell: its figure, "errors" for an invalid run, "—" where it has none. */
const cell = (row: SummaryRow, peer: Peer, text: (row: SummaryRow) => string) =>
  row.invalid.includes(peer) ? "errors" : text(row)

const PEER_ORDER: ReadonlyArray<Peer> = ["vellum", "postgres", "redis"]

export const markdownTable = (rows: ReadonlyArray<SummaryRow>): string => {
  const header = [
    "workload",
    ...PEER_ORDER.map((p) => `${PEER_TITLES[p]} ev/s`),
    "Vellum÷PostgreSQL",
    "Vellum÷Redis",
    ...PEER_ORDER.map((p) => `${PEER_TITLES[p]} CPU µs/ev`)
  ]
  const lines = rows.map((row) => [
    row.title,
    ...PEER_ORDER.map((p) => cell(row, p, (r) => count(r.eventsPerSec[p]))),
    times(row.vellumOverPostgres),
    times(row.vellumOverRedis),
    ...PEER_ORDER.map((p) => cell(row, p, (r) => micros(r.cpuUsPerEvent[p])))
  ])
  const align = header.map((_, i) => (i === 0 ? "---" : "---:"))
  return [header, align, ...lines].map((cells) => `| ${cells.join(" | ")} |`).join("\n")
}
