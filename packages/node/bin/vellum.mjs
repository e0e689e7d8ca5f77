#!/usr/bin/env node
// The `vellum` command: runs the node's main module through tsx (the project ships TypeScript sources).
import { register } from "tsx/esm/api"
register()
await import("../src/main.ts")
