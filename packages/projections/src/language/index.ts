export * from "./compileProjection.js"
export * from "./languageErrors.js"
export * from "./SourceDefinition.js"
export * from "./validateSourceDefinition.js"
