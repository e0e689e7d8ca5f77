/**
 * Password hashing: salted, deliberately slow key derivation (scrypt or PBKDF2-HMAC-SHA256 from node:crypto),
 * encoded as a PHC-style string that records the algorithm and its parameters next to the salt and the key:
 *
 *   $scrypt$ln=15,r=8,p=1$<salt>$<key>          (N = 2^ln)
 *   $pbkdf2-sha256$i=600000$<salt>$<key>
 *
 * (salt and key in unpadded standard base64). Because every hash names its own parameters, the configured
 * cost can change later: old hashes keep verifying with the parameters they were made with, and a password
 * set after the change gets the new ones.
 *
 * Hashing is pure given the salt; the salt comes from Effect's `Random`, so the simulator stays
 * deterministic. The sync node:crypto functions are used (they are deterministic and need no thread pool
 * callback), which means a hash blocks the event loop for its whole cost: keep the production cost in the
 * tens to low hundreds of milliseconds, and rely on the verified-credentials cache (Users.ts) so that only
 * first logins and failures pay it.
 */
import { pbkdf2Sync, scryptSync, timingSafeEqual } from "node:crypto"
import { Effect, Random } from "effect"

export type HashParams =
  | { readonly algorithm: "scrypt"; readonly logN: number; readonly r: number; readonly p: number }
  | { readonly algorithm: "pbkdf2-sha256"; readonly iterations: number }

/** Production: scrypt N=2^15, r=8, p=1 (32 MiB, ≈ 0.1–0.2 s on a laptop core). */
export const productionHashParams: HashParams = { algorithm: "scrypt", logN: 15, r: 8, p: 1 }

/** Tests and the simulator: the same code path at a negligible cost (≈ 0.1 ms). Never for real users. */
export const cheapHashParams: HashParams = { algorithm: "scrypt", logN: 4, r: 1, p: 1 }

export const SaltBytes = 16
export const KeyBytes = 32

/**
 * Bounds on parameters read back from a stored hash. Stored hashes live in `$user-*` streams that admins can
 * write to directly, so a crafted hash must not be able to make one verification take minutes or gigabytes.
 */
const Limits = {
  logN: [1, 20],
  r: [1, 32],
  p: [1, 16],
  iterations: [1, 10_000_000],
  salt: [8, 64],
  key: [16, 64]
} as const

const within = (value: number, [min, max]: readonly [number, number]): boolean =>
  Number.isSafeInteger(value) && value >= min && value <= max

/** Why the parameters cannot be used, or undefined when they can. */
export const invalidHashParams = (params: HashParams): string | undefined => {
  if (params.algorithm === "scrypt") {
    return within(params.logN, Limits.logN) && within(params.r, Limits.r) && within(params.p, Limits.p)
      ? undefined
      : `scrypt parameters must be ln 1-20, r 1-32, p 1-16 (got ln=${params.logN}, r=${params.r}, p=${params.p})`
  }
  return within(params.iterations, Limits.iterations)
    ? undefined
    : `PBKDF2 iterations must be 1-10000000 (got ${params.iterations})`
}

const derive = (password: string, salt: Uint8Array, params: HashParams, keyBytes: number): Buffer => {
  if (params.algorithm === "pbkdf2-sha256") return pbkdf2Sync(password, salt, params.iterations, keyBytes, "sha256")
  const N = 2 ** params.logN
  // scrypt needs ≈ 128·N·r·p bytes; node refuses anything above maxmem (32 MiB by default, exactly our N=2^15 cost).
  return scryptSync(password, salt, keyBytes, {
    N,
    r: params.r,
    p: params.p,
    maxmem: 256 * N * params.r * params.p + 32 * 1024 * 1024
  })
}

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64").replace(/=+$/, "")

const paramsText = (params: HashParams): string =>
  params.algorithm === "scrypt" ? `ln=${params.logN},r=${params.r},p=${params.p}` : `i=${params.iterations}`

/** The encoded hash of `password` with the given salt (pure). */
export const hashPasswordWithSalt = (password: string, salt: Uint8Array, params: HashParams): string => {
  const invalid = invalidHashParams(params)
  if (invalid !== undefined) throw new Error(invalid) // a configuration bug, caught where the config is validated
  return `$${params.algorithm}$${paramsText(params)}$${b64(salt)}$${b64(derive(password, salt, params, KeyBytes))}`
}

/** A fresh random salt from Effect's Random (deterministic under the simulator's seed). */
export const randomSalt: Effect.Effect<Uint8Array> = Effect.map(
  Effect.replicateEffect(Random.nextIntBetween(0, 256), SaltBytes),
  (bytes) => Uint8Array.from(bytes)
)

/** Hashes a password with a fresh salt. */
export const hashPassword = (password: string, params: HashParams): Effect.Effect<string> =>
  Effect.map(randomSalt, (salt) => hashPasswordWithSalt(password, salt, params))

export interface DecodedHash {
  readonly params: HashParams
  readonly salt: Buffer
  readonly key: Buffer
}

const B64 = /^[A-Za-z0-9+/]+$/

const parseParams = (algorithm: string, text: string): HashParams | undefined => {
  const values = new Map<string, number>()
  for (const part of text.split(",")) {
    const m = /^([a-z]+)=([0-9]{1,9})$/.exec(part)
    if (m === null || values.has(m[1]!)) return undefined
    values.set(m[1]!, Number(m[2]))
  }
  if (algorithm === "scrypt" && values.size === 3) {
    const [logN, r, p] = [values.get("ln"), values.get("r"), values.get("p")]
    return logN === undefined || r === undefined || p === undefined ? undefined : { algorithm, logN, r, p }
  }
  if (algorithm === "pbkdf2-sha256" && values.size === 1) {
    const iterations = values.get("i")
    return iterations === undefined ? undefined : { algorithm, iterations }
  }
  return undefined
}

/** Parses an encoded hash; undefined when it is not one this module wrote (or its parameters are out of bounds). */
export const decodeHash = (encoded: string): DecodedHash | undefined => {
  const parts = encoded.split("$")
  if (parts.length !== 5 || parts[0] !== "") return undefined
  const [, algorithm, paramText, saltText, keyText] = parts as [string, string, string, string, string]
  const params = parseParams(algorithm, paramText)
  if (params === undefined || invalidHashParams(params) !== undefined) return undefined
  if (!B64.test(saltText) || !B64.test(keyText)) return undefined
  const salt = Buffer.from(saltText, "base64")
  const key = Buffer.from(keyText, "base64")
  if (!within(salt.length, Limits.salt) || !within(key.length, Limits.key)) return undefined
  return { params, salt, key }
}

/** True when `password` matches the encoded hash; compares in constant time. False for an unreadable hash. */
export const verifyPassword = (password: string, encoded: string): boolean => {
  const decoded = decodeHash(encoded)
  if (decoded === undefined) return false
  return timingSafeEqual(derive(password, decoded.salt, decoded.params, decoded.key.length), decoded.key)
}
