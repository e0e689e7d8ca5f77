/**
 * The users the node has looked at, in memory, so that authenticating a request reads neither the log nor
 * (after the first success) runs the slow password hash.
 *
 * An entry holds what reading `$user-{login}` gave (the user, or "missing" — unknown logins are cached too,
 * so a flood of made-up logins does not turn into log reads) and, once a password has been verified the slow
 * way, a keyed digest of that password (SHA-256 of a per-process random key and the password): a later
 * request with the same password matches the digest in constant time. The plaintext is never kept.
 *
 * Why a secret-prefix SHA-256 and not an HMAC: the digest runs on every authenticated request, and node's
 * one-shot `crypto.hash` costs a third of building an Hmac object (~2 µs against ~5–7 µs here, 6% of a
 * single-event HTTP append). The digest is never shown to anyone, only compared, so the length extension
 * an HMAC guards against gives nothing: it forges digests of longer inputs, not a password matching a
 * stored digest. The digest is kept as base64 text and compared with a loop over every character (no early
 * exit): asking `hash` for a Buffer and comparing with `timingSafeEqual` allocated a native buffer per
 * request (a check took ~2.0–2.4 µs that way, ~1.1–1.3 µs this way, in a micro-benchmark).
 *
 * Invalidation: any change to a user stream drops its entry (the Users service after its own writes, and a
 * commit listener for writes that bypass it). A load that started before an invalidation is not stored
 * (generation check), so a slow read cannot put stale data back.
 */
import { hash } from "node:crypto"
import type { StoredUser } from "./UserRecord.js"

export type LoadedUser =
  | { readonly _tag: "Found"; readonly user: StoredUser; readonly eventNumber: number; readonly updatedMicros: number }
  | { readonly _tag: "Missing"; readonly hardDeleted: boolean }
  /** The last event is not a user (written around the service): the user cannot be used, only deleted. */
  | { readonly _tag: "Unreadable"; readonly eventNumber: number; readonly reason: string }

export interface CacheEntry {
  readonly loaded: LoadedUser
  /** Keyed digest (base64) of the last password verified against `loaded`'s hash. */
  verified: string | undefined
}

export class UserCache {
  private readonly entries = new Map<string, CacheEntry>()
  private generation = 0

  /** The digest key as the prefix of every digested string (hex, so a password cannot run into it). */
  private readonly digestPrefix: string

  constructor(
    private readonly capacity: number,
    digestKey: Uint8Array
  ) {
    this.digestPrefix = `${Buffer.from(digestKey).toString("hex")}:`
  }

  get(loginName: string): CacheEntry | undefined {
    return this.entries.get(loginName)
  }

  /** The current generation; pass it back to `store` so a load that raced an invalidation is dropped. */
  begin(): number {
    return this.generation
  }

  store(loginName: string, loaded: LoadedUser, generation: number): CacheEntry {
    const entry: CacheEntry = { loaded, verified: undefined }
    if (generation !== this.generation) return entry
    if (this.entries.size >= this.capacity && !this.entries.has(loginName)) {
      // Oldest first (Map keeps insertion order): cheap and good enough for a login cache.
      const oldest = this.entries.keys().next()
      if (oldest.done !== true) this.entries.delete(oldest.value)
    }
    this.entries.set(loginName, entry)
    return entry
  }

  invalidate(loginName: string): void {
    this.generation++
    this.entries.delete(loginName)
  }

  digest(password: string): string {
    return hash("sha256", this.digestPrefix + password, "base64")
  }

  /** True when `password` is the one last verified for this entry (constant time). */
  matchesVerified(entry: CacheEntry, password: string): boolean {
    return entry.verified !== undefined && sameDigest(entry.verified, this.digest(password))
  }

  get size(): number {
    return this.entries.size
  }
}

/** Equality of two digests in time that depends only on their length (both are SHA-256 in base64). */
export const sameDigest = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}
