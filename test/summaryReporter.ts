// Prints the plain closing line "N passed, N failed" after a vitest run, so CI logs state the count in
// a form any reader (human or tool) recognises, whatever vitest's own summary looks like.
import type { Reporter, File, Task } from "vitest"

const count = (tasks: ReadonlyArray<Task>, acc: { passed: number; failed: number; skipped: number }) => {
  for (const task of tasks) {
    if (task.type === "suite") count(task.tasks, acc)
    else if (task.result?.state === "pass") acc.passed++
    else if (task.result?.state === "fail") acc.failed++
    else acc.skipped++
  }
  return acc
}

export default class SummaryReporter implements Reporter {
  onFinished(files: ReadonlyArray<File> = []) {
    const { passed, failed, skipped } = count(files, { passed: 0, failed: 0, skipped: 0 })
    console.log(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`)
  }
}
