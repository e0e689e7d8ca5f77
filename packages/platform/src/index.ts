// @vellum/platform: the world as services (Disk, Clock, Random) with live and simulated layers.
export * from "./Disk.js"
export * from "./JsonLogger.js"
export * from "./MemoryDisk.js"
export * as NodeDisk from "./live/NodeDisk.js"
export * from "./Prng.js"
export * from "./sim/SimClock.js"
export * from "./sim/SimScheduler.js"
export * from "./sim/SimRuntime.js"
