/**
 * Route matching, as the reference's trie router does it: templates are matched
 * segment by segment against the percent-decoded path, case-sensitively; among the templates that match,
 * the one with a literal at the leftmost differing segment wins over a placeholder (`{name}`), which wins
 * over a greedy placeholder (`{*name}`, one or more trailing segments). The allowed methods of a path are
 * those of every template that matches it (for OPTIONS and 405).
 */
import type { Method, RouteDef } from "./Route.js"
import { decodeSegment } from "./requestTarget.js"

type Segment =
  | { readonly kind: "literal"; readonly text: string }
  | { readonly kind: "param"; readonly name: string }
  | { readonly kind: "greedy"; readonly name: string }

const Rank = { greedy: 0, param: 1, literal: 2 } as const

interface Compiled<R> {
  readonly route: RouteDef<R>
  readonly segments: ReadonlyArray<Segment>
  readonly order: number
}

export interface Bound<R> {
  readonly route: RouteDef<R>
  readonly params: Readonly<Record<string, string>>
}

export type RouteMatch<R> =
  | { readonly _tag: "NotFound" }
  | {
      readonly _tag: "Found"
      /** Methods of every matching template, least specific first, without duplicates. */
      readonly allowed: ReadonlyArray<Method>
      /** The most specific matching route for the method, if any. */
      readonly forMethod: (method: string) => Bound<R> | undefined
    }

const compileSegment = (text: string): Segment => {
  const placeholder = /^\{(\*?)([^{}]+)\}$/.exec(text)
  if (placeholder === null) return { kind: "literal", text: decodeSegment(text) ?? text }
  return placeholder[1] === "*" ? { kind: "greedy", name: placeholder[2]! } : { kind: "param", name: placeholder[2]! }
}

/** The path part of a template (query-string template variables are optional and ignored). */
const templatePath = (path: string): string => {
  const mark = path.indexOf("?")
  return mark < 0 ? path : path.slice(0, mark)
}

/** Binds a template to decoded segments, or undefined when it does not match. */
const bind = (segments: ReadonlyArray<Segment>, path: ReadonlyArray<string>): Record<string, string> | undefined => {
  const params: Record<string, string> = {}
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!
    if (segment.kind === "greedy") {
      if (i !== segments.length - 1 || path.length <= i) return undefined
      params[segment.name] = path.slice(i).join("/")
      return params
    }
    const value = path[i]
    if (value === undefined) return undefined
    if (segment.kind === "literal") {
      if (value !== segment.text) return undefined
    } else {
      // A placeholder never binds an empty segment (`/streams//x`, or the trailing slash of `/streams/`).
      if (value === "") return undefined
      params[segment.name] = value
    }
  }
  return segments.length === path.length ? params : undefined
}

/** Negative when `a` is less specific than `b`: compares segment kinds from the left. */
const compareSpecificity = (a: ReadonlyArray<Segment>, b: ReadonlyArray<Segment>): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const d = Rank[a[i]!.kind] - Rank[b[i]!.kind]
    if (d !== 0) return d
  }
  return a.length - b.length
}

export interface Router<R> {
  readonly match: (segments: ReadonlyArray<string>) => RouteMatch<R>
}

export const makeRouter = <R>(routes: ReadonlyArray<RouteDef<R>>): Router<R> => {
  const compiled: Array<Compiled<R>> = routes.map((route, order) => ({
    route,
    order,
    segments: templatePath(route.path).slice(1).split("/").map(compileSegment)
  }))
  // Candidates by segment count and first literal segment, so a request is bound against a handful of
  // templates instead of all of them (binding every template was 5% of a request's CPU).
  const byShape = new Map<string, Array<Compiled<R>>>()
  const greedy: Array<Compiled<R>> = []
  for (const c of compiled) {
    if (c.segments.some((segment) => segment.kind === "greedy")) {
      greedy.push(c)
      continue
    }
    const first = c.segments[0]
    const key = `${c.segments.length}:${first?.kind === "literal" ? first.text : "*"}`
    const list = byShape.get(key)
    if (list === undefined) byShape.set(key, [c])
    else list.push(c)
  }
  // The templates a request of a given shape may match, most specific first: specificity compares the
  // templates alone, so the order is fixed per shape and computed once (not sorted per request).
  const candidatesByShape = new Map<string, ReadonlyArray<Compiled<R>>>()
  const candidatesFor = (segments: ReadonlyArray<string>): ReadonlyArray<Compiled<R>> => {
    const shape = `${segments.length}:${segments[0] ?? ""}`
    let list = candidatesByShape.get(shape)
    if (list === undefined) {
      list = [...(byShape.get(shape) ?? []), ...(byShape.get(`${segments.length}:*`) ?? []), ...greedy].sort(
        (a, b) => compareSpecificity(b.segments, a.segments) || b.order - a.order
      )
      // Shapes come from request paths: keep the memo bounded (first literals are client-chosen text).
      if (candidatesByShape.size < 1024) candidatesByShape.set(shape, list)
    }
    return list
  }
  return {
    match: (segments) => {
      const candidates = candidatesFor(segments)
      let hits: Array<{ readonly route: RouteDef<R>; readonly params: Record<string, string> }> | undefined
      for (const c of candidates) {
        const params = bind(c.segments, segments)
        if (params !== undefined) (hits ??= []).push({ route: c.route, params })
      }
      if (hits === undefined) return { _tag: "NotFound" }
      const found = hits
      // `allowed` lists methods least specific first, as before.
      const allowed: Array<Method> = []
      for (let i = found.length - 1; i >= 0; i--)
        if (!allowed.includes(found[i]!.route.method)) allowed.push(found[i]!.route.method)
      return {
        _tag: "Found",
        allowed,
        forMethod: (method) => {
          for (const hit of found) if (hit.route.method === method) return hit
          return undefined
        }
      }
    }
  }
}
