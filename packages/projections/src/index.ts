// @vellum/projections: projections (issue 21). Begun: not wired into the node; `/projections` answers 501
// (docs/architecture.md says what is built).
export * from "./runtime/sandbox.js"
export * from "./runtime/sandboxErrors.js"
export * from "./system/index.js"
export * from "./language/index.js"
export * from "./persisted/index.js"
export * from "./sources/SourceReader.js"
export * from "./engine/ProjectionHandler.js"
export * from "./engine/ProjectionRunner.js"
export * from "./engine/OutputWriter.js"
export * from "./engine/output/makeOutputWriter.js"
export * from "./service/Projections.js"
export * from "./service/RunnerFactory.js"
