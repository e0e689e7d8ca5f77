/**
 * Password hashing: known-answer vectors (the derivations are the real scrypt / PBKDF2), the encoded format,
 * verification, salts from Effect's Random (deterministic under a seed), and rejection of unreadable or
 * out-of-bounds stored hashes.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect, Random } from "effect"
import {
  cheapHashParams,
  decodeHash,
  hashPassword,
  hashPasswordWithSalt,
  invalidHashParams,
  KeyBytes,
  productionHashParams,
  randomSalt,
  SaltBytes,
  verifyPassword,
  type HashParams
} from "../src/index.js"

const b64 = (hex: string) => Buffer.from(hex, "hex").toString("base64").replace(/=+$/, "")

describe("password hashing", () => {
  it("scrypt matches the RFC 7914 test vector (first 32 bytes)", () => {
    const encoded = hashPasswordWithSalt("password", Buffer.from("NaCl"), {
      algorithm: "scrypt",
      logN: 10,
      r: 8,
      p: 16
    })
    const expected = "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
    assert.strictEqual(encoded, `$scrypt$ln=10,r=8,p=16$${b64(Buffer.from("NaCl").toString("hex"))}$${b64(expected)}`)
  })

  it("PBKDF2-HMAC-SHA256 matches the known vector (P=password, S=salt, c=1)", () => {
    const encoded = hashPasswordWithSalt("password", Buffer.from("salt"), { algorithm: "pbkdf2-sha256", iterations: 1 })
    assert.strictEqual(encoded.split("$")[4], b64("120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"))
    assert.match(encoded, /^\$pbkdf2-sha256\$i=1\$c2FsdA\$/)
  })

  const algorithms: ReadonlyArray<HashParams> = [cheapHashParams, { algorithm: "pbkdf2-sha256", iterations: 10 }]
  for (const params of algorithms) {
    it(`${params.algorithm}: verify accepts the password and nothing else`, () => {
      const salt = Buffer.alloc(SaltBytes, 7)
      const encoded = hashPasswordWithSalt("chänge:it", salt, params)
      assert.isTrue(verifyPassword("chänge:it", encoded))
      for (const wrong of ["change:it", "chänge:it ", "", "chänge:iT"])
        assert.isFalse(verifyPassword(wrong, encoded), wrong)
      // Pure given the salt; another salt gives another hash of the same password.
      assert.strictEqual(hashPasswordWithSalt("chänge:it", salt, params), encoded)
      assert.notStrictEqual(hashPasswordWithSalt("chänge:it", Buffer.alloc(SaltBytes, 8), params), encoded)
    })
  }

  it("the encoded hash records its parameters, so a cost change keeps old hashes verifying", () => {
    const old = hashPasswordWithSalt("pw", Buffer.alloc(16, 1), { algorithm: "scrypt", logN: 5, r: 2, p: 1 })
    const decoded = decodeHash(old)!
    assert.deepStrictEqual(decoded.params, { algorithm: "scrypt", logN: 5, r: 2, p: 1 })
    assert.strictEqual(decoded.salt.length, 16)
    assert.strictEqual(decoded.key.length, KeyBytes)
    assert.isTrue(verifyPassword("pw", old))
  })

  it("unreadable or out-of-bounds stored hashes never verify", () => {
    const good = hashPasswordWithSalt("pw", Buffer.alloc(16, 1), cheapHashParams)
    const [, , , salt, key] = good.split("$")
    const bad = [
      "",
      "pw",
      "$scrypt$ln=4,r=1,p=1$" + salt,
      `$md5$i=1$${salt}$${key}`,
      `$scrypt$ln=4,r=1$${salt}$${key}`,
      `$scrypt$ln=4,r=1,p=1,p=1$${salt}$${key}`,
      `$scrypt$ln=40,r=1,p=1$${salt}$${key}`,
      `$pbkdf2-sha256$i=0$${salt}$${key}`,
      `$pbkdf2-sha256$i=99999999$${salt}$${key}`,
      `$scrypt$ln=4,r=1,p=1$${salt}$${key}=`,
      `$scrypt$ln=4,r=1,p=1$AAAA$${key}`,
      `$scrypt$ln=4,r=1,p=1$${salt}$AAAA`,
      `x$scrypt$ln=4,r=1,p=1$${salt}$${key}`
    ]
    for (const encoded of bad) {
      assert.isUndefined(decodeHash(encoded), encoded)
      assert.isFalse(verifyPassword("pw", encoded), encoded)
    }
    assert.isTrue(verifyPassword("pw", good))
  })

  it("parameters are bounded; production and cheap parameters are valid", () => {
    assert.isUndefined(invalidHashParams(productionHashParams))
    assert.isUndefined(invalidHashParams(cheapHashParams))
    assert.match(invalidHashParams({ algorithm: "scrypt", logN: 0, r: 8, p: 1 })!, /scrypt parameters/)
    assert.match(invalidHashParams({ algorithm: "pbkdf2-sha256", iterations: 1.5 })!, /iterations/)
    assert.throws(
      () => hashPasswordWithSalt("pw", Buffer.alloc(16), { algorithm: "scrypt", logN: 30, r: 8, p: 1 }),
      /scrypt parameters/
    )
  })

  it.effect("salts come from Effect's Random: 16 bytes, fresh per hash, reproducible under a seed", () =>
    Effect.gen(function* () {
      const salt = yield* randomSalt
      assert.strictEqual(salt.length, SaltBytes)
      const a = yield* hashPassword("pw", cheapHashParams)
      const b = yield* hashPassword("pw", cheapHashParams)
      assert.notStrictEqual(a, b)
      assert.isTrue(verifyPassword("pw", a) && verifyPassword("pw", b))
      const seeded = (seed: number) => Effect.withRandom(hashPassword("pw", cheapHashParams), Random.make(seed))
      assert.strictEqual(yield* seeded(42), yield* seeded(42))
      assert.notStrictEqual(yield* seeded(42), yield* seeded(43))
    })
  )
})
