// `npm run cluster`: a 3-node development cluster on this machine. Builds the node once, starts three node
// processes (HTTP 2113/2123/2133, internal 1112/1122/1132, data in ./data/cluster/node1..3), each seeded with
// the other two and given the cluster's secret (generated once into ./data/cluster/secret), prints each
// node's URL and, from /info, its state whenever it changes, and forwards the nodes' log lines prefixed with
// the node's name. Ctrl-C (SIGINT) or SIGTERM stops all three gracefully and exits.
//
//   npm run cluster                         three voting nodes
//   npm run cluster -- --quiet              only the URLs, states and exits (no log lines)
//   npm run cluster -- -- --insecure        options after a second `--` go to every node
import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { clearInterval, setInterval, setTimeout } from "node:timers"
import { fileURLToPath } from "node:url"
/* global fetch, AbortSignal */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dataDir = path.join(root, "data", "cluster")
const HOST = "127.0.0.1"
const POLL_MILLIS = 1000
/** How long the nodes get to stop gracefully before they are killed. */
const STOP_GRACE_MILLIS = 15_000

const args = process.argv.slice(2)
const passThrough = args.indexOf("--")
const ownArgs = passThrough < 0 ? args : args.slice(0, passThrough)
const nodeArgs = passThrough < 0 ? [] : args.slice(passThrough + 1)
const quiet = ownArgs.includes("--quiet")
for (const arg of ownArgs) {
  if (arg !== "--quiet") {
    process.stderr.write(`npm run cluster: unknown argument ${arg} (options for the nodes go after --)\n`)
    process.exit(2)
  }
}

const nodes = [1, 2, 3].map((n) => ({
  name: `node${n}`,
  httpPort: 2103 + 10 * n,
  internalPort: 1102 + 10 * n,
  db: path.join(dataDir, `node${n}`)
}))
const width = Math.max(...nodes.map((node) => node.name.length))
const label = (name) => name.padEnd(width)
const say = (line) => process.stdout.write(`${line}\n`)

/** The development cluster's secret: made once, kept beside the nodes' data, readable by this user only. */
const clusterSecret = () => {
  const file = path.join(dataDir, "secret")
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true })
    writeFileSync(file, `${randomBytes(24).toString("base64url")}\n`, { mode: 0o600 })
    say(`Generated the cluster secret in ${path.relative(process.cwd(), file)} (a development secret).`)
  }
  return { file, secret: readFileSync(file, "utf8").trim() }
}

/** One log line of a node: its JSON lines as "LEVEL message", anything else as it is. */
const formatLine = (line) => {
  try {
    const entry = JSON.parse(line)
    if (entry !== null && typeof entry === "object" && typeof entry.message === "string") {
      const level = typeof entry.level === "string" ? entry.level.padEnd(5) : "     "
      return `${level} ${entry.message}${typeof entry.cause === "string" ? `\n${entry.cause}` : ""}`
    }
  } catch {
    // not JSON: shown as it came
  }
  return line
}

const build = spawnSync(process.execPath, [path.join(root, "scripts", "build.mjs")], { cwd: root, stdio: "inherit" })
if (build.status !== 0) process.exit(build.status ?? 1)

const { file: secretFile, secret } = clusterSecret()
say(`A 3-node cluster on ${HOST} (cluster secret from ${path.relative(process.cwd(), secretFile)}):`)
for (const node of nodes) {
  say(
    `  ${label(node.name)}  http://${HOST}:${node.httpPort}  internal ${HOST}:${node.internalPort}  ` +
      `data ${path.relative(process.cwd(), node.db)}`
  )
}
say("Ctrl-C stops all three.")

let stopping = false
const children = new Map()
let poller

for (const node of nodes) {
  const seeds = nodes.filter((other) => other !== node).map((other) => `${HOST}:${other.internalPort}`)
  const child = spawn(
    process.execPath,
    [
      "--enable-source-maps",
      "--heap-growing-percent=50",
      path.join(root, "dist", "main.mjs"),
      "--db",
      node.db,
      "--cluster-size",
      "3",
      "--node-ip",
      HOST,
      "--node-port",
      String(node.httpPort),
      "--replication-ip",
      HOST,
      "--replication-port",
      String(node.internalPort),
      "--gossip-seed",
      seeds.join(","),
      ...nodeArgs
    ],
    {
      cwd: root,
      // The secret goes by environment, never on a command line other users can read.
      env: { ...process.env, MALLOC_MMAP_THRESHOLD_: "131072", VELLUM_CLUSTER_SECRET: secret },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  children.set(node.name, child)
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => {
      if (!quiet) say(`${label(node.name)} | ${formatLine(line)}`)
      // A node that refuses to start says why on stderr: show it even when quiet.
      else if (stream === child.stderr) say(`${label(node.name)} | ${line}`)
    })
  }
  child.on("exit", (code, signal) => {
    children.delete(node.name)
    say(`${label(node.name)} exited${signal === null ? ` with code ${code}` : ` on ${signal}`}`)
    if (children.size > 0) return
    clearInterval(poller)
    process.exit(stopping ? 0 : 1)
  })
}

/** What a node's /info says its state is, or why there is no answer. */
const stateOf = async (node) => {
  try {
    const response = await fetch(`http://${HOST}:${node.httpPort}/info`, {
      signal: AbortSignal.timeout(POLL_MILLIS - 100)
    })
    if (!response.ok) return `HTTP ${response.status}`
    const info = await response.json()
    return typeof info.state === "string" ? info.state : "no state in /info"
  } catch {
    return undefined
  }
}

const lastState = new Map()
let allAnswered = false
let polling = false
const poll = async () => {
  if (polling || stopping) return
  polling = true
  try {
    const states = await Promise.all(
      nodes.map(async (node) => [node, children.has(node.name) ? await stateOf(node) : "exited"])
    )
    if (stopping) return
    for (const [node, state] of states) {
      const shown = state ?? "not answering"
      const before = lastState.get(node.name)
      if (before === shown || (before === undefined && state === undefined)) continue
      lastState.set(node.name, shown)
      const url = `http://${HOST}:${node.httpPort}`
      say(
        before === undefined
          ? `${label(node.name)}  ${url}  ${shown}`
          : `${label(node.name)}  ${url}  ${before} -> ${shown}`
      )
    }
    if (!allAnswered && states.every(([, state]) => state !== undefined && state !== "exited")) {
      allAnswered = true
      say(`All three answer: ${states.map(([node, state]) => `${node.name} ${state}`).join(", ")}`)
    }
  } finally {
    polling = false
  }
}
poller = setInterval(() => void poll(), POLL_MILLIS)

const stop = (signal) => {
  if (stopping) {
    // A second Ctrl-C: do not wait for a graceful stop.
    for (const child of children.values()) child.kill("SIGKILL")
    return
  }
  stopping = true
  clearInterval(poller)
  say(`Stopping the cluster (${signal})...`)
  for (const child of children.values()) child.kill("SIGTERM")
  setTimeout(() => {
    for (const [name, child] of children) {
      say(`${label(name)} did not stop within ${STOP_GRACE_MILLIS / 1000} s: killing it`)
      child.kill("SIGKILL")
    }
  }, STOP_GRACE_MILLIS).unref()
}
process.on("SIGINT", () => stop("SIGINT"))
process.on("SIGTERM", () => stop("SIGTERM"))
