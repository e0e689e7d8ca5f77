/**
 * The simulator's speed for `npm run bench:cluster`: a batch of 3-node seeds (`npm run sim -- --seeds N
 * --nodes 3`: clients appending and reading through every member under the fault driver, then the liveness
 * phase) against, as its peer, a batch of single-node seeds of the same count, both run here as their own
 * processes through the simulator's command line. Each batch ends with the line `simulated X s in Y s of
 * wall time (Zx)`, which gives simulated seconds per wall second. Before the simulator has a multi-node runner
 * (simulation/src/cluster/), the figure is reported as not measurable.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { repoRoot } from "./httpProcesses.js"

export const SIMULATOR_CLUSTER_DIR = path.join(repoRoot, "simulation/src/cluster")

export interface SimulatorSpeed {
  readonly simulatedSecs: number
  readonly wallSecs: number
  /** Simulated seconds per wall second. */
  readonly ratio: number
}

/** The speed a batch's last lines report, if they hold the line. */
export const parseSimulatorSpeed = (output: string): SimulatorSpeed | undefined => {
  const match = /simulated ([\d.]+) s in ([\d.]+) s of wall time/.exec(output)
  if (match === null) return undefined
  const simulatedSecs = Number(match[1])
  const wallSecs = Number(match[2])
  return { simulatedSecs, wallSecs, ratio: wallSecs > 0 ? simulatedSecs / wallSecs : 0 }
}

/** Runs the simulator's command line with `args` (under tsx, as `npm run sim` does) and reads its speed. */
export const simulatorBatch = (args: ReadonlyArray<string>): Promise<SimulatorSpeed> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "simulation/src/cli.ts", ...args, "--no-coverage"], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.once("error", reject)
    child.once("exit", (code) => {
      const speed = parseSimulatorSpeed(output)
      if (code === 0 && speed !== undefined) resolve(speed)
      else reject(new Error(`npm run sim -- ${args.join(" ")} exited with ${code}:\n${output.slice(-2000)}`))
    })
  })

export const hasClusterSimulator = () => fs.existsSync(SIMULATOR_CLUSTER_DIR)
