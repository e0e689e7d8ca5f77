// @vellum/http: the AtomPub HTTP API — routes, content negotiation, JSON/XML codecs, auth, errors.
export * from "./Reply.js"
export * from "./Route.js"
