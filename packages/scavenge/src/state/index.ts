// The persisted scavenge state: tables, checkpoint, transactions (see ScavengeState.ts for the design).
export * from "./types.js"
export type { StateTransaction } from "./StateTransaction.js"
export { openScavengeState, type ScavengeState, type ScavengeStateOptions } from "./ScavengeState.js"
export { openStateSession, type StateAccess, type StateError, type StateSession } from "./StateSession.js"
