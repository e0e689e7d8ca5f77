#!/usr/bin/env node
// The `vellum` command of the packed package (`npm pack`, `npm install -g vellum-<version>.tgz`): runs the
// node compiled into dist/ by `prepack`, with its registry dependencies from node_modules; no TypeScript.
// In the repository, `npx vellum` runs packages/node/bin/vellum.mjs (the sources, through tsx) instead.
process.setSourceMapsEnabled(true)
await import("../dist/main.mjs")
