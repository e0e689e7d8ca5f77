// @vellum/security: users, password hashing, roles, stream ACLs, authentication.
export * from "./Principal.js"
