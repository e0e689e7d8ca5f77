export type { EmittedWrite } from "../src/index.js"
export type { QueuedItem as QueuedItemForTest } from "../src/engine/output/streamLane.js"
