/**
 * Authenticator layers: who a request acts as.
 *
 * - `layer`: Basic credentials checked against Users; else, when enabled, the trusted-auth
 *   header; else anonymous (no header, or a scheme other than `Basic`).
 * - `layerInsecure` (`--insecure`): everyone is the system account, credentials are ignored, so
 *   nothing ever answers 401.
 */
import { Effect, Either, Layer } from "effect"
import { parseBasicAuthorization, parseTrustedAuth, trustedAuthHeader } from "./BasicAuth.js"
import { anonymousPrincipal, Authenticator, systemPrincipal, type AuthenticatorService } from "./Principal.js"
import { Users } from "./Users.js"

export interface AuthenticationOptions {
  /** Accept `Kurrent-TrustedAuth` / `ES-TrustedAuth` (`EnableTrustedAuth`, off by default). */
  readonly enableTrustedAuth: boolean
}

export const makeAuthenticator = (options: AuthenticationOptions): Effect.Effect<AuthenticatorService, never, Users> =>
  Effect.map(Users, (users) => ({
    authenticate: (headers) => {
      const basic = parseBasicAuthorization(headers["authorization"])
      if (Either.isLeft(basic)) return Effect.fail(basic.left)
      if (basic.right !== undefined) return users.authenticate(basic.right.login, basic.right.password)
      const trusted = options.enableTrustedAuth ? trustedAuthHeader(headers) : undefined
      if (trusted === undefined) return Effect.succeed(anonymousPrincipal)
      return Either.match(parseTrustedAuth(trusted), {
        onLeft: Effect.fail,
        onRight: ({ login, groups }) => Effect.succeed({ name: login, groups, anonymous: false })
      })
    }
  }))

export const layer = (options: AuthenticationOptions): Layer.Layer<Authenticator, never, Users> =>
  Layer.effect(Authenticator, makeAuthenticator(options))

export const layerInsecure: Layer.Layer<Authenticator> = Layer.succeed(Authenticator, {
  authenticate: () => Effect.succeed(systemPrincipal)
})
