/**
 * `LogFailedAuthenticationAttempts`: an authenticator that logs every rejected login as a warning, naming
 * the login and the reason (never the password), as the reference's internal provider does. The client's
 * address is not known here: the HTTP layer adds it to every log line of the request as the `client`
 * annotation.
 */
import { Effect, Either } from "effect"
import { parseBasicAuthorization } from "./BasicAuth.js"
import type { AuthenticatorService } from "./Principal.js"

const loginOf = (authorization: string | undefined): string => {
  const parsed = parseBasicAuthorization(authorization)
  return Either.isRight(parsed) && parsed.right !== undefined ? JSON.stringify(parsed.right.login) : "(no login)"
}

export const logFailedAuthentication = (authenticator: AuthenticatorService): AuthenticatorService => ({
  authenticate: (headers) =>
    Effect.tapError(authenticator.authenticate(headers), (error) =>
      error._tag === "AuthenticationFailed"
        ? Effect.logWarning(`Authentication failed for ${loginOf(headers["authorization"])}: ${error.message}`)
        : Effect.void
    )
})
