/**
 * A document built from text and already encoded UTF-8 pieces (the entries kept with their records), ending
 * as one buffer: each piece is copied once into a buffer of the exact size, so a page never exists as one
 * long string that must be flattened and encoded again for the socket.
 */

/** What `write` writes, as text. */
export const textOf = (write: (out: Utf8Out) => void): string => {
  const out = new Utf8Out()
  write(out)
  return out.toString()
}

/** What `write` writes, as one buffer of UTF-8. */
export const bytesOf = (write: (out: Utf8Out) => void): Buffer => {
  const out = new Utf8Out()
  write(out)
  return out.toBuffer()
}

export class Utf8Out {
  private readonly pieces: Array<string | Uint8Array> = []
  private pending = ""

  /** Appends text (runs of text are joined before they are encoded). */
  text(s: string): void {
    this.pending += s
  }

  /** Appends encoded bytes, kept by reference (they must not change until the document is taken). */
  bytes(b: Uint8Array): void {
    if (this.pending !== "") {
      this.pieces.push(this.pending)
      this.pending = ""
    }
    this.pieces.push(b)
  }

  toBuffer(): Buffer {
    if (this.pending !== "") {
      this.pieces.push(this.pending)
      this.pending = ""
    }
    let total = 0
    for (const piece of this.pieces)
      total += typeof piece === "string" ? Buffer.byteLength(piece, "utf8") : piece.length
    const out = Buffer.allocUnsafe(total)
    let at = 0
    for (const piece of this.pieces) {
      if (typeof piece === "string") at += out.write(piece, at, "utf8")
      else {
        out.set(piece, at)
        at += piece.length
      }
    }
    return out
  }

  toString(): string {
    let s = ""
    for (const piece of this.pieces)
      s +=
        typeof piece === "string" ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.length).toString("utf8")
    return s + this.pending
  }
}
