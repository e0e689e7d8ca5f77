// The script that runs a projection's handlers (the execution phase). It is evaluated in the sandbox BEFORE the
// definition prelude and the user's script, so that the built-ins it keeps are the real ones whatever the script
// replaces later; it only defines hidden functions (non-writable, non-configurable) that the host calls through
// batches. The emitting functions (`emit`, `linkTo`, `linkStreamTo`, `copyTo`) are installed only when the host
// starts the execution (`__projectionStartExecution`), so the script's top level cannot reach them.
//
// Items and outcomes are positional arrays (see itemCodec.ts): an item is
//   [index in batch, kind (0 event, 1 deleted), partition, state|null, shared|null, ...event]
// and the event is [eventType, streamId, sequenceNumber, eventId, isJson, bodyRaw, metadataRaw, linkMetadataRaw,
// category]. An outcome is [state, shared|null, changed, result|null|1 (= the state), emitted, created] or
// { f: message, s: stack }.
//
// Rules kept here, as the reference's runtime has them:
// - the live state stays between items of one partition (an item without a state goes on with it), so a null state
//   or a transform's mutation is seen by the next item;
// - a string state is stored as it is; any other state through the state serializer (`serialize`): own properties,
//   non-enumerable ones too, in key order, accessors and functions left out, `toJSON` ignored, BigInt as a string of
//   its digits, numbers written as .NET writes a double (`5E+123`, `1E-05`);
// - errors of the emitting functions' arguments fault the item even if the handler catches them: in the reference
//   they are host exceptions that script code cannot catch.
export const executionPrelude = String.raw`(function () {
  "use strict"
  const global = globalThis
  const parse = JSON.parse
  const quote = JSON.stringify
  const defineProperty = Object.defineProperty
  const describe = Object.getOwnPropertyDescriptor
  const ownKeys = Reflect.ownKeys
  const isArray = Array.isArray
  const call = Function.prototype.call.bind(Function.prototype.call)
  const toExponential = Number.prototype.toExponential
  const stringSlice = String.prototype.slice
  const stringIndexOf = String.prototype.indexOf
  const RealError = Error
  const RealInternalError = global.InternalError
  const ObjectProto = Object.prototype
  const create = Object.create
  const floor = Math.floor

  const hidden = function (name, value) {
    defineProperty(global, name, { value, writable: false, enumerable: false, configurable: false })
  }
  // Appends without going through a setter the script may have put on Array.prototype.
  const put = function (list, value) {
    defineProperty(list, list.length, { value, writable: true, enumerable: true, configurable: true })
  }

  // ---- numbers as .NET writes a double (shortest round trip; scientific past 15 digits or below 1E-04)
  const zeros = function (n) { let s = ""; for (let i = 0; i < n; i++) s += "0"; return s }
  const netNumber = function (n) {
    if (n !== n) return "NaN"
    if (n === Infinity) return "Infinity"
    if (n === -Infinity) return "-Infinity"
    if (n === 0) return 1 / n < 0 ? "-0" : "0"
    const a = n < 0 ? -n : n
    if (a >= 1e-4 && a < 1e15) return "" + n
    const text = call(toExponential, a)
    const e = call(stringIndexOf, text, "e")
    const mantissa = call(stringSlice, text, 0, e)
    const exponent = +call(stringSlice, text, e + 1)
    const digits = mantissa.length > 1 ? mantissa[0] + call(stringSlice, mantissa, 2) : mantissa
    const scale = exponent + 1
    const max = digits.length > 15 ? digits.length : 15
    let out
    if (scale > max || scale < -3) {
      const abs = exponent < 0 ? -exponent : exponent
      out = digits[0] + (digits.length > 1 ? "." + call(stringSlice, digits, 1) : "") + "E" + (exponent < 0 ? "-" : "+") + (abs < 10 ? "0" : "") + abs
    } else if (scale <= 0) out = "0." + zeros(-scale) + digits
    else if (scale >= digits.length) out = digits + zeros(scale - digits.length)
    else out = call(stringSlice, digits, 0, scale) + "." + call(stringSlice, digits, scale)
    return n < 0 ? "-" + out : out
  }

  // ---- the state serializer
  const MAX_DEPTH = 400
  const tooDeep = function () {
    return fail("The value is nested more than " + MAX_DEPTH + " levels deep (or refers to itself) and cannot be serialized")
  }
  // undefined: nothing to write (an object member is left out, an array item is written null).
  const write = function (v, depth) {
    switch (typeof v) {
      case "string": return quote(v)
      case "number": return v === v && v !== Infinity && v !== -Infinity ? netNumber(v) : "null"
      case "boolean": return v ? "true" : "false"
      case "bigint": return '"' + v + '"'
      case "object": break
      default: return undefined
    }
    if (v === null) return "null"
    if (depth >= MAX_DEPTH) return tooDeep()
    if (isArray(v)) {
      let out = "["
      const n = v.length
      for (let i = 0; i < n; i++) {
        const item = write(v[i], depth + 1)
        out += (i === 0 ? "" : ",") + (item === undefined ? "null" : item)
      }
      return out + "]"
    }
    const keys = ownKeys(v)
    let out = "{"
    let first = true
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]
      if (typeof key !== "string") continue
      const d = describe(v, key)
      if (d === undefined) continue
      let value
      if ("value" in d) value = d.value
      else if (d.get === lazyBody || d.get === lazyMetadata || d.get === lazyLinkMetadata) value = call(d.get, v)
      else continue
      const text = write(value, depth + 1)
      if (text === undefined) continue
      out += (first ? "" : ",") + quote(key) + ":" + text
      first = false
    }
    return out + "}"
  }
  const serialize = function (v) {
    const text = write(v, 0)
    return text === undefined ? "null" : text
  }
  const serializeOrEmpty = function (v) { return v === null || v === undefined ? "" : serialize(v) }
  // A state as stored: a string as it is, null and undefined as "", anything else serialized.
  const stateText = function (v) { return typeof v === "string" ? v : serializeOrEmpty(v) }

  // ---- faults the script cannot catch (the reference's host exceptions)
  let pendingFault = null
  const fail = function (message) {
    if (pendingFault === null) pendingFault = message
    throw new RealError(message)
  }
  const nullArgument = function (parameter) { return fail("Value cannot be null. (Parameter '" + parameter + "')") }
  const badArgument = function (message, parameter) { return fail(message + " (Parameter '" + parameter + "')") }

  // ---- the event envelope
  const EVENT_TYPE = 0, STREAM = 1, SEQUENCE = 2, EVENT_ID = 3, IS_JSON = 4, BODY = 5, METADATA = 6, LINK_METADATA = 7, CATEGORY = 8
  const defineProperties = Object.defineProperties
  const settle = function (e, name, value) {
    defineProperty(e, name, { value, writable: false, enumerable: true, configurable: false })
  }
  // The lazy members parse on first read, then become plain data members; body and data are one object.
  const lazyBody = function () {
    const raw = this.bodyRaw
    const body = raw === null ? null : parse(raw)
    if (typeof body !== "object" || body === null) fail("The event's data is JSON but not an object or an array")
    settle(this, "body", body)
    settle(this, "data", body)
    return body
  }
  const lazyParsed = function (e, name, raw) {
    const value = raw === null ? null : parse(raw)
    settle(e, name, value)
    return value
  }
  const lazyMetadata = function () { return lazyParsed(this, "metadata", this.metadataRaw) }
  const lazyLinkMetadata = function () { return lazyParsed(this, "linkMetadata", this.linkMetadataRaw) }
  // One set of descriptors per envelope shape, reused: each envelope only changes their values, and one call
  // defines every member (a descriptor object per member and envelope cost twice as much).
  const member = function () { return { value: undefined, writable: false, enumerable: true, configurable: false } }
  const lazy = function (get) { return { get, enumerable: true, configurable: true } }
  const shape = function (json) {
    const d = {
      partition: member(), bodyRaw: member(), metadataRaw: member(), streamId: member(), eventId: member(),
      eventType: member(), linkMetadataRaw: member(), isJson: member(), category: member(), sequenceNumber: member()
    }
    if (json) { d.body = lazy(lazyBody); d.data = lazy(lazyBody) }
    d.metadata = lazy(lazyMetadata)
    d.linkMetadata = lazy(lazyLinkMetadata)
    return d
  }
  const jsonShape = shape(true)
  const rawShape = shape(false)

  const envelope = function (ev, partition, category) {
    const d = ev[IS_JSON] === 1 ? jsonShape : rawShape
    d.partition.value = partition
    d.bodyRaw.value = ev[BODY]
    d.metadataRaw.value = ev[METADATA]
    d.streamId.value = ev[STREAM]
    d.eventId.value = ev[EVENT_ID]
    d.eventType.value = ev[EVENT_TYPE]
    d.linkMetadataRaw.value = ev[LINK_METADATA]
    d.isJson.value = ev[IS_JSON] === 1
    d.category.value = category
    d.sequenceNumber.value = ev[SEQUENCE]
    return defineProperties(create(ObjectProto), d)
  }

  // ---- the emitting functions
  let emitted = []
  const nonBlankString = function (v, parameter) {
    if (typeof v === "string") {
      for (let i = 0; i < v.length; i++) {
        const c = v.charCodeAt(i)
        if (!(c === 32 || (c >= 9 && c <= 13) || c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
          c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000)) return v
      }
      return nullArgument(parameter)
    }
    if (v === null || v === undefined) return nullArgument(parameter)
    return badArgument("string expected", parameter)
  }
  const isObject = function (v) { return (typeof v === "object" && v !== null) || typeof v === "function" }
  const nonNullObject = function (v, parameter) {
    if (v === null || v === undefined) return nullArgument(parameter)
    if (!isObject(v)) return badArgument("object expected", parameter)
    return v
  }
  // The value of an own member, reading the envelope's lazy members; undefined for any other accessor.
  const ownValue = function (o, key) {
    const d = describe(o, key)
    if (d === undefined) return undefined
    if ("value" in d) return d.value
    if (d.get === lazyBody || d.get === lazyMetadata || d.get === lazyLinkMetadata) return call(d.get, o)
    return undefined
  }
  const stringKeys = function (o) {
    const all = ownKeys(o)
    const keys = []
    for (let i = 0; i < all.length; i++) if (typeof all[i] === "string") put(keys, all[i])
    return keys
  }
  // emit's metadata: each member as JSON, undefined ones left out.
  const jsonMembers = function (o) {
    const keys = stringKeys(o)
    const members = []
    for (let i = 0; i < keys.length; i++) {
      const value = ownValue(o, keys[i])
      if (value === undefined) continue
      const text = write(value, 1)
      if (text !== undefined) put(members, [keys[i], text])
    }
    return members
  }
  // linkTo's metadata: strings quoted without escaping, numbers as .NET writes them, null and undefined as null.
  const rawMembers = function (o) {
    const keys = stringKeys(o)
    const members = []
    for (let i = 0; i < keys.length; i++) {
      const value = ownValue(o, keys[i])
      let text
      if (typeof value === "string") text = '"' + value + '"'
      else if (typeof value === "number") text = netNumber(value)
      else if (typeof value === "boolean") text = value ? "true" : "false"
      else if (value === null || value === undefined) text = "null"
      else {
        text = write(value, 1)
        if (text === undefined) text = "null"
      }
      put(members, [keys[i], text])
    }
    return members
  }
  const plainText = function (v) {
    if (isObject(v)) return isArray(v) ? "" : "[object Object]"
    if (typeof v === "symbol") return "Symbol()"
    return "" + v
  }
  const emit = function emit(streamId, eventName, eventBody, metadata) {
    const n = arguments.length
    if (n < 3) fail("invalid number of parameters")
    const stream = nonBlankString(streamId, "streamId")
    const type = nonBlankString(eventName, "eventName")
    const body = nonNullObject(eventBody, "eventBody")
    if (n === 4 && !isObject(metadata)) badArgument("object expected", "metadata")
    const data = serialize(body)
    put(emitted, [stream, type, 1, data, n === 4 ? jsonMembers(metadata) : []])
    return undefined
  }
  const linkTo = function linkTo(streamId, event, metadata) {
    const n = arguments.length
    if (n !== 2 && n !== 3) fail("wrong number of parameters")
    const stream = nonBlankString(streamId, "streamId")
    const target = nonNullObject(event, "event")
    const number = target.sequenceNumber
    const source = target.streamId
    if (typeof number !== "number" || typeof source !== "string")
      fail("Invalid link to event " + plainText(number) + "@" + plainText(source))
    const members = n === 3 ? rawMembers(nonNullObject(metadata, "metaData")) : []
    const truncated = number < 0 ? -floor(-number) : floor(number)
    put(emitted, [stream, "$>", 0, truncated + "@" + source, members])
    return undefined
  }
  const linkStreamTo = function linkStreamTo(streamId, linkedStreamId, metadata) {
    const stream = nonBlankString(streamId, "streamId")
    const linked = nonBlankString(linkedStreamId, "linkedStreamId")
    // The reference reads the metadata from an argument that is never there: passing it always fails.
    if (arguments.length === 3) fail("The value is not an object")
    put(emitted, [stream, "$@", 0, linked, []])
    return undefined
  }
  const copyTo = function copyTo(streamId, event, metadata) { return undefined }
  const takeEmitted = function () {
    const list = emitted
    emitted = []
    return list
  }

  // ---- the fold
  let rec = null
  let biState = false
  let transforming = false
  // The live state: the partition's (or, in bi-state, the [partition, shared] pair) and its stored texts.
  let live = undefined
  let liveText = ""
  let sharedText = ""
  let faulted = false
  let outcomes = []

  const faultOf = function (error) {
    const message = pendingFault !== null ? pendingFault
      : error instanceof RealError ? "" + error.message
      : typeof error === "object" && error !== null ? plainText(error) : "" + plainText(error)
    let stack = ""
    if (pendingFault === null && error instanceof RealError && typeof error.stack === "string") stack = error.stack
    pendingFault = null
    faulted = true
    emitted = []
    live = undefined
    return { f: message, s: stack }
  }
  const outOfMemory = function (error) {
    return error instanceof RealInternalError && error.message === "out of memory"
  }
  const initial = function (fn) { return fn === undefined ? {} : fn() }
  const loadState = function (text) { return text === "" ? initial(rec.init) : parse(text) }

  // A pair's partition text; its shared text when it has one (a shorter array leaves the shared state as it was).
  const pairTexts = function (pair) {
    if (pair.length > 1) sharedText = serializeOrEmpty(pair[1])
    return pair.length > 0 ? serializeOrEmpty(pair[0]) : ""
  }
  // The transform chain over the live state: a filter must return true; a null or undefined value is no result.
  const transformed = function (value) {
    let current = value
    const chain = rec.transforms
    for (let i = 0; i < chain.length; i++) {
      const step = chain[i]
      if (step.kind === "transform") current = step.fn(current)
      else if (step.fn(current) !== true) return null
      if (current === null || current === undefined) return null
    }
    return serialize(current)
  }

  const processItem = function (item) {
    const kind = item[1]
    const partition = item[2]
    const storedState = item[3]
    const storedShared = item[4]
    let created = false
    let before
    if (storedState !== null) {
      before = storedState
      const value = loadState(storedState)
      created = storedState === ""
      if (biState) live = [value, live === undefined ? undefined : live[1]]
      else live = value
      liveText = storedState
    } else before = liveText
    if (biState && storedShared !== null) {
      live[1] = storedShared === "" ? initial(rec.initShared) : parse(storedShared)
      sharedText = storedShared
    }
    let partitionText
    if (kind === 1) {
      if (rec.deleted !== undefined) rec.deleted(live, null, partition, false)
      partitionText = serializeOrEmpty(live)
    } else {
      const ev = item[5]
      if (created && rec.created.length > 0) {
        const e = envelope(ev, partition, "")
        for (let i = 0; i < rec.created.length; i++) rec.created[i](live, e)
      }
      const body = ev[BODY]
      let returned
      if (!(ev[IS_JSON] === 1 && isBlank(body))) {
        const handler = rec.byType[ev[EVENT_TYPE]] !== undefined ? rec.byType[ev[EVENT_TYPE]] : rec.any
        returned = handler !== undefined ? handler(live, envelope(ev, partition, ev[CATEGORY])) : body
      }
      if (biState && returned !== undefined && !isArray(returned)) {
        // Bi-state: a value that is not a pair is the partition's state; the shared state stays as it was.
        live = [returned, live[1]]
        partitionText = stateText(returned)
      } else {
        if (returned !== undefined) live = returned
        partitionText = biState ? pairTexts(live) : stateText(live)
      }
    }
    liveText = partitionText
    const changed = partitionText !== before
    // Without a transform the result is the state text itself: 1 says so without sending the text twice.
    const result = !changed ? null : transforming ? transformed(live) : partitionText === "" ? null : 1
    return [partitionText, biState ? sharedText : null, changed ? 1 : 0, result, takeEmitted(), created ? 1 : 0]
  }
  const isBlank = function (text) {
    if (text === null) return true
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (!(c === 32 || c === 9 || c === 10 || c === 13 || c === 11 || c === 12)) return false
    }
    return true
  }

  // An entry the host calls once per item of a batch. The first item starts the batch afresh; after an item
  // faults, the rest of the batch is skipped (null). Running out of memory goes up to the sandbox, as a stop.
  const entry = function (name, body) {
    hidden(name, function (item) {
      if (item[0] === 0) { faulted = false; outcomes = [] }
      if (faulted) return null
      let outcome
      try {
        outcome = body(item)
        if (pendingFault !== null) outcome = faultOf(null)
      } catch (error) {
        if (outOfMemory(error)) throw error
        outcome = faultOf(error)
      }
      // A plain store (a setter the script put on Array.prototype could swallow it: the host then finds the
      // outcomes unreadable, a fault of this projection only).
      outcomes[outcomes.length] = outcome
      return outcome
    })
  }
  entry("__projectionProcess", processItem)
  // partitionBy: a string is the partition, a number its .NET text, anything else skips the item (null).
  entry("__projectionPartition", function (item) {
    const key = rec.partitionBy(envelope(item[1], "", item[1][CATEGORY]))
    return typeof key === "string" ? [key] : typeof key === "number" ? [netNumber(key)] : [null]
  })

  // What the items of the batch that stopped had produced (the host asks after a stop the script cannot catch).
  hidden("__projectionOutcomes", function () {
    live = undefined
    emitted = []
    pendingFault = null
    return outcomes
  })

  hidden("__projectionStartExecution", function (config) {
    if (rec !== null) return true
    rec = global.__projectionRecorded()
    biState = config.biState === true
    transforming = config.definesStateTransform === true
    const names = ["emit", "linkTo", "linkStreamTo", "copyTo"]
    const fns = [emit, linkTo, linkStreamTo, copyTo]
    for (let i = 0; i < names.length; i++)
      defineProperty(global, names[i], { value: fns[i], writable: true, enumerable: false, configurable: true })
    return true
  })
})()`
