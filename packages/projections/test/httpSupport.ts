/**
 * The projection routes in-process: the HTTP pipeline over `projectionRoutes` and a test double of the
 * management service (httpFakeProjections.ts), with the stream tests' authenticator. Users: `admin:changeit`
 * ($admins), `ops:changeit` ($ops), `user:pass` (no group); no credentials is anonymous.
 */
import { Effect } from "effect"
import { Authenticator } from "@vellum/security"
import { defaultHttpSettings, makeHandler, type HttpRequest, type HttpSettings, type Reply } from "@vellum/http"
import { testAuthenticator } from "../../http/test/streams-harness.js"
import { projectionRoutes } from "../src/http/routes.js"
import { Projections } from "../src/service/Projections.js"
import { makeFakeProjections, type FakeProjections } from "./httpFakeProjections.js"

export { AdminAuth, UserAuth, basic } from "../../http/test/streams-harness.js"

export const OpsAuth = `Basic ${Buffer.from("ops:changeit").toString("base64")}`

export interface RequestOptions {
  readonly headers?: Record<string, string>
  readonly body?: string
  readonly auth?: string
}

export interface ProjectionsNode {
  readonly fake: FakeProjections
  /** The pipeline itself, for a request as a server hands it over. */
  readonly handle: (request: HttpRequest) => Promise<Reply>
  readonly request: (method: string, url: string, options?: RequestOptions) => Promise<Reply>
}

export const makeProjectionsNode = (settings: Partial<HttpSettings> = {}): ProjectionsNode => {
  const fake = makeFakeProjections()
  const pipeline = makeHandler(projectionRoutes, { ...defaultHttpSettings, ...settings })
  const handle: ProjectionsNode["handle"] = (request) =>
    Effect.runPromise(
      pipeline(request).pipe(
        Effect.provideService(Authenticator, testAuthenticator()),
        Effect.provideService(Projections, fake.service)
      )
    )
  const request: ProjectionsNode["request"] = (method, url, options = {}) =>
    handle({
      method,
      url,
      headers: {
        Host: "localhost:2113",
        ...(options.auth !== undefined ? { Authorization: options.auth } : {}),
        ...options.headers
      },
      body: options.body === undefined ? undefined : Buffer.from(options.body, "utf8")
    })
  return { fake, handle, request }
}

export const text = (reply: Reply): string =>
  reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : Buffer.from(reply.body).toString("utf8")

export const json = (reply: Reply): any => JSON.parse(text(reply))

export const header = (reply: Reply, name: string): string | undefined => {
  const found = Object.entries(reply.headers).find(([key]) => key.toLowerCase() === name.toLowerCase())
  return found === undefined ? undefined : String(found[1])
}
