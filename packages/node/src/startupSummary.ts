/**
 * The start-up line an operator reads first: version, where it listens, where the data is, which config
 * file was read, and whether this start created the default users; plus a warning in insecure mode.
 */
import type { LoadedConfig } from "./config/LoadedConfig.js"

export interface StartupFacts {
  readonly version: string
  /** The resolved database directory, or undefined for an in-memory database. */
  readonly dbDir: string | undefined
  /** The config file read, resolved (undefined when none). */
  readonly configFile: string | undefined
  readonly createdDefaultUsers: ReadonlyArray<string>
  /** A cluster member: its state, and the default users are the leader's to create. */
  readonly cluster?: { readonly size: number; readonly readOnlyReplica: boolean }
}

export const startupSummary = (loaded: LoadedConfig, facts: StartupFacts): string => {
  const config = loaded.config
  return [
    `Vellum ${facts.version} listening on http://${config.NodeIp}:${config.NodePort}`,
    facts.dbDir === undefined ? "data in memory (MemDb)" : `data in ${facts.dbDir}`,
    facts.configFile === undefined ? "no config file" : `config file ${facts.configFile}`,
    facts.cluster !== undefined
      ? `${facts.cluster.readOnlyReplica ? "read-only replica of" : "member of"} a ${facts.cluster.size}-node cluster; the leader creates the default users`
      : facts.createdDefaultUsers.length === 0
        ? "default users not created (they exist already)"
        : `default users created: ${facts.createdDefaultUsers.join(", ")}`
  ].join("; ")
}

export const INSECURE_WARNING =
  "Insecure mode: authentication and authorization are off, every request acts as the system user; do not expose this node"
