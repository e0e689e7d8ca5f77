// The script run in a projection's sandbox before the user's own: it installs the definition functions and the
// builder, and records what the user's script declares. It runs after the sandbox's own prelude (no string
// compilation, a virtual clock) and before the user's script, as a script of its own.
//
// What it leaves on the global object:
// - the definition functions (`options`, `fromAll`, `fromStream`, `fromStreams`, `fromCategory`, `fromCategories`,
//   `on_event`, `on_any`): writable, configurable, not enumerable, so that the end of the definition removes them;
// - `log`, a no-op available in both phases;
// - `__projectionEndDefinition()` (the host calls it through a batch of one item): ends the definition phase, removes
//   the definition functions and the builder's methods, and returns `{ definition }` or `{ fault }`;
// - `__projectionRecorded()`: after the end of the definition, the frozen record of the handlers, by name, for the
//   execution phase (`init`, `initShared`, `any`, `created`, `deleted`, `byType`, `partitionBy`, `transforms`).
//
// The builder is one object with no prototype; after each call only the methods allowed next are on it, so a call
// that is not allowed is a TypeError. A definition function given a wrong argument throws, and the first such
// error stays the projection's fault even if the script catches it: in the reference these errors end the script.
// Built-ins are taken at start, so a script that replaces them cannot change how its definition is recorded.
export const definitionPrelude = String.raw`(function () {
  "use strict"
  const ownKeys = Reflect.ownKeys
  const describe = Object.getOwnPropertyDescriptor
  const defineProperty = Object.defineProperty
  const deleteProperty = Reflect.deleteProperty
  const isArray = Array.isArray
  const freeze = Object.freeze
  const trim = String.prototype.trim
  const call = Function.prototype.call.bind(Function.prototype.call)
  const RealError = Error
  const floor = Math.floor
  const fromCharCode = String.fromCharCode
  const global = globalThis

  const def = {
    allStreams: false, categories: [], streams: [], allEvents: true, events: [], byStream: false,
    byCustomPartitions: false, definesFold: false, producesResults: false, definesStateTransform: false,
    handlesDeletedNotifications: false, includeLinks: false, reorderEvents: false, processingLag: 0,
    isBiState: false, resultStreamName: null, partitionResultStreamNamePattern: null
  }
  const recorded = {
    init: undefined, initShared: undefined, any: undefined, created: [], deleted: undefined,
    byType: Object.create(null), partitionBy: undefined, transforms: []
  }
  let fault = null
  let ended = false

  // A definition error: remembered (the first one is the fault) and thrown to stop the script.
  const fail = function (message) {
    if (fault === null) fault = message
    throw new RealError(message)
  }
  const argument = function (message, parameter) { return fail(message + " (Parameter '" + parameter + "')") }
  const append = function (list, value) { list[list.length] = value }
  const blankToNull = function (s) { return call(trim, s) === "" ? null : s }
  const isFunction = function (v) { return typeof v === "function" }
  // A data property's own value; an accessor's getter is not run (its value counts as absent).
  const valueOf = function (object, key) {
    const d = describe(object, key)
    return d !== undefined && "value" in d ? d.value : undefined
  }

  const builder = Object.create(null)
  const method = function (name, fn) { defineProperty(fn, "name", { value: name }); return fn }
  const methods = Object.create(null)
  const allowedAfter = {
    fromAll: ["when", "partitionBy", "outputState", "foreachStream"],
    fromCategory: ["when", "partitionBy", "outputState", "foreachStream"],
    fromStream: ["when", "partitionBy", "outputState"],
    fromStreams: ["when", "partitionBy", "outputState"],
    partitionBy: ["when"],
    foreachStream: ["when"],
    when: ["transformBy", "filterBy", "outputState", "outputTo", "$defines_state_transform"],
    outputState: ["transformBy", "filterBy", "outputTo"],
    transformBy: ["transformBy", "filterBy", "outputState", "outputTo"],
    filterBy: ["transformBy", "filterBy", "outputState", "outputTo"],
    outputTo: [],
    execution: []
  }
  // Leaves on the builder exactly the methods allowed after the step just taken.
  const restrict = function (step) {
    const allowed = allowedAfter[step]
    const keys = ownKeys(builder)
    for (let i = 0; i < keys.length; i++) deleteProperty(builder, keys[i])
    for (let i = 0; i < allowed.length; i++)
      defineProperty(builder, allowed[i], { value: methods[allowed[i]], writable: true, enumerable: false, configurable: true })
    return builder
  }

  const addHandler = function (name, handler) {
    if (name === "$init") recorded.init = handler
    else if (name === "$initShared") { def.isBiState = true; recorded.initShared = handler }
    else if (name === "$any") { recorded.any = handler; def.allEvents = true }
    else if (name === "$created") append(recorded.created, handler)
    else if (name === "$deleted") {
      if (def.isBiState) fail("Cannot handle deletes in bi-state projections")
      def.handlesDeletedNotifications = true
      recorded.deleted = handler
    } else {
      def.allEvents = false
      append(def.events, name)
      if (describe(recorded.byType, name) !== undefined)
        fail("An item with the same key has already been added. Key: " + name)
      recorded.byType[name] = handler
    }
  }

  methods.when = method("when", function (handlers) {
    if ((typeof handlers === "object" && handlers !== null) || isFunction(handlers)) {
      const keys = ownKeys(handlers)
      for (let i = 0; i < keys.length; i++) {
        const value = typeof keys[i] === "string" ? valueOf(handlers, keys[i]) : undefined
        if (isFunction(value)) addHandler(keys[i], value)
      }
    }
    def.definesFold = true
    return restrict("when")
  })
  methods.partitionBy = method("partitionBy", function (fn) {
    if (!isFunction(fn)) fail("partitionBy")
    def.byCustomPartitions = true
    recorded.partitionBy = fn
    return restrict("partitionBy")
  })
  methods.foreachStream = method("foreachStream", function () {
    def.byStream = true
    return restrict("foreachStream")
  })
  methods.outputState = method("outputState", function () {
    restrict("outputState")
    def.producesResults = true
    return builder
  })
  methods.outputTo = method("outputTo", function (...args) {
    if (args.length !== 1 && args.length !== 2) fail("invalid number of parameters")
    if (typeof args[0] !== "string") argument("expected string value", "resultStream")
    if (args.length === 2 && typeof args[1] !== "string") argument("expected string value", "partitionResultStreamPattern")
    def.resultStreamName = blankToNull(args[0])
    if (args.length === 2) def.partitionResultStreamNamePattern = blankToNull(args[1])
    return restrict("outputTo")
  })
  methods.$defines_state_transform = method("$defines_state_transform", function () {
    def.definesStateTransform = true
    def.producesResults = true
    return undefined
  })
  const shaping = function (kind) {
    return method(kind, function (fn) {
      if (!isFunction(fn)) fail("expected function")
      def.definesStateTransform = true
      def.producesResults = true
      append(recorded.transforms, freeze({ kind: kind === "transformBy" ? "transform" : "filter", fn }))
      return restrict(kind)
    })
  }
  methods.transformBy = shaping("transformBy")
  methods.filterBy = shaping("filterBy")

  const definitions = Object.create(null)
  definitions.fromAll = function () {
    def.allStreams = true
    return restrict("fromAll")
  }
  definitions.fromStream = function (stream) {
    if (typeof stream !== "string") fail("stream")
    append(def.streams, stream)
    return restrict("fromStream")
  }
  definitions.fromStreams = function (...args) {
    const streams = isArray(args[0]) ? args[0] : args
    for (let i = 0; i < streams.length; i++) {
      if (typeof streams[i] !== "string") fail("streams")
      append(def.streams, streams[i])
    }
    return restrict("fromStreams")
  }
  // One category reads its category stream; several (or an array) become the streams of their categories.
  definitions.fromCategory = function (...args) {
    if (args.length === 0) return builder
    const several = args.length === 1 && isArray(args[0]) ? args[0] : args.length > 1 ? args : null
    if (several === null) {
      if (typeof args[0] !== "string") fail("category")
      append(def.categories, args[0])
    } else
      for (let i = 0; i < several.length; i++) {
        if (typeof several[i] !== "string") fail("categories")
        append(def.streams, "$ce-" + several[i])
      }
    return restrict("fromCategory")
  }
  definitions.fromCategories = definitions.fromCategory
  definitions.on_event = function (...args) {
    if (args.length !== 2) fail("invalid number of parameters")
    if (typeof args[0] !== "string") fail("eventName")
    if (!isFunction(args[1])) fail("eventHandler")
    addHandler(args[0], args[1])
  }
  definitions.on_any = function (...args) {
    if (args.length !== 1) fail("invalid number of parameters")
    if (!isFunction(args[0])) fail("eventHandler")
    addHandler("$any", args[0])
  }
  // Option names match ignoring ASCII case; each value has one type.
  const optionSetters = {
    $includelinks: function (v) { if (typeof v !== "boolean") fail("Invalid value"); def.includeLinks = v },
    reorderevents: function (v) { if (typeof v !== "boolean") fail("Invalid value"); def.reorderEvents = v },
    processinglag: function (v) { if (typeof v !== "number") fail("Invalid value"); def.processingLag = toInt32(v) },
    resultstreamname: function (v) { if (typeof v !== "string") fail("Invalid value"); def.resultStreamName = blankToNull(v) },
    bistate: function (v) { if (typeof v !== "boolean") fail("Invalid value"); def.isBiState = v }
  }
  const asciiLower = function (s) {
    let out = ""
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i)
      out += c >= 65 && c <= 90 ? fromCharCode(c + 32) : s[i]
    }
    return out
  }
  // A number cast to an int: truncated toward zero, saturated at the int range, NaN as 0.
  const toInt32 = function (n) {
    if (n !== n) return 0
    if (n >= 2147483647) return 2147483647
    if (n <= -2147483648) return -2147483648
    return n < 0 ? -floor(-n) : floor(n)
  }
  definitions.options = function (opts) {
    if ((typeof opts === "object" && opts !== null) || isFunction(opts)) {
      const keys = ownKeys(opts)
      for (let i = 0; i < keys.length; i++) {
        if (typeof keys[i] !== "string") continue
        const name = asciiLower(keys[i])
        const setter = describe(optionSetters, name) !== undefined ? optionSetters[name] : undefined
        if (setter === undefined) fail("Unrecognized option: " + keys[i])
        setter(valueOf(opts, keys[i]))
      }
    }
    return undefined
  }

  const definitionNames = ownKeys(definitions)
  for (let i = 0; i < definitionNames.length; i++) {
    const name = definitionNames[i]
    defineProperty(global, name, { value: method(name, definitions[name]), writable: true, enumerable: false, configurable: true })
  }
  const hidden = function (name, value) {
    defineProperty(global, name, { value, writable: false, enumerable: false, configurable: false })
  }
  hidden("log", function log() { return undefined })

  let outcome
  hidden("__projectionEndDefinition", function () {
    if (ended) return outcome
    ended = true
    restrict("execution")
    for (let i = 0; i < definitionNames.length; i++) deleteProperty(global, definitionNames[i])
    freeze(recorded.created)
    freeze(recorded.transforms)
    freeze(recorded.byType)
    freeze(recorded)
    outcome = fault !== null ? { fault } : { definition: {
      allEvents: def.allEvents, allStreams: def.allStreams, byStream: def.byStream,
      byCustomPartitions: def.byCustomPartitions, categories: def.categories, events: def.events, streams: def.streams,
      options: {
        resultStreamName: def.resultStreamName, partitionResultStreamNamePattern: def.partitionResultStreamNamePattern,
        reorderEvents: def.reorderEvents, processingLag: def.processingLag, isBiState: def.isBiState,
        definesStateTransform: def.definesStateTransform, producesResults: def.producesResults,
        definesFold: def.definesFold, handlesDeletedNotifications: def.handlesDeletedNotifications,
        includeLinks: def.includeLinks
      }
    } }
    return outcome
  })
  hidden("__projectionRecorded", function () { return ended ? recorded : undefined })
})()`
