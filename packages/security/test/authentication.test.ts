/**
 * The Authenticator layers: Basic against the user store, unsupported schemes as
 * anonymous, malformed Basic as MalformedCredentials, trusted auth only when enabled, and `--insecure`
 * (everyone is the system account, credentials ignored).
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { anonymousPrincipal, Authenticator, systemPrincipal, Authentication } from "../src/index.js"
import { usersStack } from "./support.js"

const basic = (login: string, password: string) => "Basic " + Buffer.from(`${login}:${password}`).toString("base64")

const authenticate = (headers: Record<string, string>) =>
  Effect.flatMap(Authenticator, (a) =>
    Effect.match(a.authenticate(headers), { onFailure: (e) => `${e._tag}: ${e.message}`, onSuccess: (p) => p })
  )

const withTrusted = (enableTrustedAuth: boolean) =>
  Layer.provide(Authentication.layer({ enableTrustedAuth }), usersStack())

describe("Authenticator", () => {
  it.scoped("Basic credentials of a user give its principal; wrong ones fail; other schemes are anonymous", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* authenticate({ authorization: basic("admin", "changeit") }), {
        name: "admin",
        groups: ["$admins"],
        anonymous: false
      })
      assert.strictEqual(
        yield* authenticate({ authorization: basic("admin", "wrong") }),
        "AuthenticationFailed: Invalid login or password"
      )
      assert.strictEqual(
        yield* authenticate({ authorization: basic("ghost", "changeit") }),
        "AuthenticationFailed: Invalid login or password"
      )
      assert.deepStrictEqual(yield* authenticate({}), anonymousPrincipal)
      assert.deepStrictEqual(yield* authenticate({ authorization: "Bearer token" }), anonymousPrincipal)
      assert.deepStrictEqual(
        yield* authenticate({ authorization: "basic " + Buffer.from("admin:changeit").toString("base64") }),
        anonymousPrincipal
      )
      assert.strictEqual(
        yield* authenticate({ authorization: "Basic %%%" }),
        "MalformedCredentials: The Basic credentials are not valid base64"
      )
      // Trusted auth is off: the header is ignored.
      assert.deepStrictEqual(yield* authenticate({ "kurrent-trustedauth": "admin; $admins" }), anonymousPrincipal)
    }).pipe(Effect.provide(withTrusted(false)))
  )

  it.scoped("trusted auth, when enabled: Kurrent-/ES-TrustedAuth name the principal; Basic still wins", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* authenticate({ "kurrent-trustedauth": "svc; $ops, readers" }), {
        name: "svc",
        groups: ["$ops", "readers"],
        anonymous: false
      })
      assert.deepStrictEqual(yield* authenticate({ "es-trustedauth": "legacy" }), {
        name: "legacy",
        groups: [],
        anonymous: false
      })
      assert.strictEqual(
        yield* authenticate({ "es-trustedauth": " ; x" }),
        "MalformedCredentials: The trusted auth header names no login"
      )
      assert.deepStrictEqual(
        yield* authenticate({ authorization: basic("ops", "changeit"), "kurrent-trustedauth": "svc" }),
        { name: "ops", groups: ["$ops"], anonymous: false }
      )
      assert.strictEqual(
        yield* authenticate({ authorization: basic("ops", "bad"), "kurrent-trustedauth": "svc" }),
        "AuthenticationFailed: Invalid login or password"
      )
    }).pipe(Effect.provide(withTrusted(true)))
  )

  it.effect("--insecure: everyone is the system account, whatever the headers say", () =>
    Effect.gen(function* () {
      const requests: ReadonlyArray<Record<string, string>> = [
        {},
        { authorization: basic("admin", "wrong") },
        { authorization: "Basic %%%" }
      ]
      for (const headers of requests) {
        assert.deepStrictEqual(yield* authenticate(headers), systemPrincipal)
      }
    }).pipe(Effect.provide(Authentication.layerInsecure))
  )
})
