// @vellum/projections: projections (issue 21). Begun: not wired into the node; `/projections` answers 501
// (docs/architecture.md says what is built).
export * from "./system/index.js"
