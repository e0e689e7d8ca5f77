/**
 * A single-precision float as the reference's JSON writer prints one (statistics' `progress` is a .NET
 * `float`): the shortest digits that read back as the same single, in .NET's round-trip form (scientific from
 * an exponent of -5 down: `1E-05`, `1.5E-07`), with `.0` added to a whole number (`100.0`, `-1.0`, `0.0`).
 */

/** The shortest decimal digits and exponent of `value` that round to the same single as `value` does. */
const shortestSingle = (value: number): { readonly digits: string; readonly exponent: number } => {
  const target = Math.fround(value)
  for (let precision = 1; precision <= 9; precision++) {
    const text = Math.abs(target).toExponential(precision - 1)
    if (Math.fround(Number(text)) === Math.abs(target)) {
      const [mantissa, exponent] = text.split("e")
      return { digits: mantissa!.replace(".", "").replace(/0+$/, "") || "0", exponent: Number(exponent) }
    }
  }
  const [mantissa, exponent] = Math.abs(target).toExponential(8).split("e")
  return { digits: mantissa!.replace(".", "").replace(/0+$/, ""), exponent: Number(exponent) }
}

const fixed = (digits: string, exponent: number): string => {
  if (exponent < 0) return `0.${"0".repeat(-exponent - 1)}${digits}`
  if (digits.length <= exponent + 1) return digits + "0".repeat(exponent + 1 - digits.length)
  return `${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`
}

const scientific = (digits: string, exponent: number): string => {
  const mantissa = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`
  const sign = exponent < 0 ? "-" : "+"
  return `${mantissa}E${sign}${String(Math.abs(exponent)).padStart(2, "0")}`
}

export const formatSingle = (value: number): string => {
  if (Math.fround(value) === 0) return "0.0"
  const { digits, exponent } = shortestSingle(value)
  const sign = value < 0 ? "-" : ""
  // Scientific below 1E-04 (`1E-05`); very large values (never a percentage) too.
  if (exponent < -4 || exponent >= 15) return sign + scientific(digits, exponent)
  const text = fixed(digits, exponent)
  return sign + (text.includes(".") ? text : `${text}.0`)
}
