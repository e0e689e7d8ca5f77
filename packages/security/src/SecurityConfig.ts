/**
 * The security settings the node's configuration hands down (the node owns parsing CLI/YAML/env; this is
 * the validated shape and its defaults).
 */
import { cheapHashParams, productionHashParams, type HashParams } from "./Password.js"

export interface SecurityConfig {
  /** Cost of new password hashes (existing hashes keep the parameters they were made with). */
  readonly passwordHash: HashParams
  /** Password of the `admin` user created on first start (`--default-admin-password`). */
  readonly defaultAdminPassword: string
  /** Password of the `ops` user created on first start (`--default-ops-password`). */
  readonly defaultOpsPassword: string
  /** Create `admin` and `ops` when their streams do not exist (the reference's standard users). */
  readonly createDefaultUsers: boolean
  /** Accept `Kurrent-TrustedAuth` / `ES-TrustedAuth` headers (`EnableTrustedAuth`; off by default). */
  readonly enableTrustedAuth: boolean
  /** Users (known and unknown logins) whose data stays in memory for authentication. */
  readonly userCacheCapacity: number
}

export const defaultSecurityConfig: SecurityConfig = {
  passwordHash: productionHashParams,
  defaultAdminPassword: "changeit",
  defaultOpsPassword: "changeit",
  createDefaultUsers: true,
  enableTrustedAuth: false,
  userCacheCapacity: 10_000
}

/** For tests and the simulator: cheap hashes, everything else as in production. */
export const testSecurityConfig: SecurityConfig = { ...defaultSecurityConfig, passwordHash: cheapHashParams }
