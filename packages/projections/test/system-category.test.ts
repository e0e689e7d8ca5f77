import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { byCategory, streamByCategory } from "../src/index.js"
import { CategoryConfigFaults, parseCategoryConfig } from "../src/system/category.js"
import { faultOf } from "./systemEvents.js"

const categoryOf = (query: string, stream: string) => Either.getOrThrow(parseCategoryConfig(query))(stream)

describe("category extraction", () => {
  it("splits at the first separator under `first` (the default) and at the last under `last`", () => {
    expect(categoryOf("first\r\n-", "account-9E76-4F1A")).toBe("account")
    expect(categoryOf("first\r\n-", "shopping-cart-1")).toBe("shopping")
    expect(categoryOf("last\r\n-", "shopping-cart-1")).toBe("shopping-cart")
    expect(categoryOf("first\n-", "account-000-01")).toBe("account")
    expect(categoryOf("last\n-", "account-000-01")).toBe("account-000")
  })

  it("gives no category without a separator, or with it only at index 0", () => {
    expect(categoryOf("first\r\n-", "stream")).toBeUndefined()
    expect(categoryOf("first\r\n-", "-stream")).toBeUndefined()
    expect(categoryOf("last\r\n-", "-stream")).toBeUndefined()
    expect(categoryOf("last\r\n-", "-a-b")).toBe("-a")
  })

  it("never categorises a `$` stream", () => {
    expect(categoryOf("first\r\n-", "$ce-account")).toBeUndefined()
    expect(categoryOf("first\r\n-", "$$account-1")).toBeUndefined()
    expect(categoryOf("_", "$x_y")).toBeUndefined()
  })

  it("takes one character as the separator, split at its last occurrence", () => {
    expect(categoryOf("_", "a_b_c")).toBe("a_b")
    expect(categoryOf("  _ \r\n", "a_b_c")).toBe("a_b")
    expect(categoryOf("-", "shopping-cart-1")).toBe("shopping-cart")
  })

  it("reads the direction case-insensitively and trims it", () => {
    expect(categoryOf("FIRST\n.", "a.b.c")).toBe("a")
    expect(categoryOf("  Last \r\n.", "a.b.c")).toBe("a.b")
  })

  it("refuses any other config with the reference's messages", () => {
    expect(parseCategoryConfig("")).toEqual(Either.left(CategoryConfigFaults.missing))
    expect(parseCategoryConfig("   ")).toEqual(Either.left(CategoryConfigFaults.notTwoLines))
    expect(parseCategoryConfig("first")).toEqual(Either.left(CategoryConfigFaults.notTwoLines))
    expect(parseCategoryConfig("first\n-\nx")).toEqual(Either.left(CategoryConfigFaults.notTwoLines))
    expect(parseCategoryConfig("middle\n-")).toEqual(Either.left(CategoryConfigFaults.direction))
    expect(parseCategoryConfig("first\n--")).toEqual(Either.left(CategoryConfigFaults.separator))
    expect(parseCategoryConfig("first\n -")).toEqual(Either.left(CategoryConfigFaults.separator))
    const format = "Configuration format is: \r\nfirst|last\r\nseparator"
    expect(CategoryConfigFaults).toEqual({
      missing: `Cannot initialize categorization projection handler.  One symbol separator or configuration must be supplied in the source.  ${format}`,
      notTwoLines: `Cannot initialize categorization projection handler.  Invalid configuration  ${format}`,
      direction: `Cannot initialize categorization projection handler.  Invalid direction specifier.  Expected 'first' or 'last'. ${format}`,
      separator: `Cannot initialize categorization projection handler.  Single separator expected. ${format}`
    })
  })

  it("faults both categorising projections, naming the projection", () => {
    expect(faultOf(byCategory, "first\n--")).toBe(
      `SystemProjectionConfigInvalid $by_category: ${CategoryConfigFaults.separator}`
    )
    expect(faultOf(streamByCategory, "")).toBe(
      `SystemProjectionConfigInvalid $stream_by_category: ${CategoryConfigFaults.missing}`
    )
    expect(faultOf(byCategory, "last\r\n_")).toBe("configured")
  })
})
