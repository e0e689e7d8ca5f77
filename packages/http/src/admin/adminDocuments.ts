/**
 * The admin replies' bodies as the reference's codecs write its small result DTOs (ScavengeResultDto,
 * ScavengeGetCurrentResultDto, …): text is the DTO's `ToString()` (`Name: value, Name: value`), JSON is
 * indented camelCase Newtonsoft, XML is XmlSerializer output (declaration, the DTO's class name as root with
 * the serializer's namespace attributes, one PascalCase element per property, in declaration order).
 */
import { formatOf, indentedJson } from "../endpoints/replies.js"
import { SERIALIZER_NAMESPACES, XML_DECLARATION, textElement, wrapElement } from "../endpoints/xml.js"

export type DtoValue = string | number | ReadonlyArray<DtoField>

export interface DtoField {
  /** The .NET property name (PascalCase); JSON uses it camelCased. */
  readonly name: string
  readonly value: DtoValue
  /** False for fields the text form leaves out (Vellum's additions that the reference's ToString lacks). */
  readonly inText?: boolean
}

export interface Dto {
  /** The .NET class name: the XML root element. */
  readonly type: string
  readonly fields: ReadonlyArray<DtoField>
}

const camelCase = (name: string): string => name.charAt(0).toLowerCase() + name.slice(1)

const jsonValue = (value: DtoValue): unknown =>
  typeof value === "object" ? Object.fromEntries(value.map((f) => [camelCase(f.name), jsonValue(f.value)])) : value

const xmlFields = (fields: ReadonlyArray<DtoField>): string =>
  fields
    .map((f) =>
      typeof f.value === "object" ? wrapElement(f.name, xmlFields(f.value)) : textElement(f.name, String(f.value))
    )
    .join("")

const textForm = (fields: ReadonlyArray<DtoField>): string =>
  fields
    .filter((f) => f.inText !== false)
    .map((f) => `${f.name}: ${typeof f.value === "object" ? "" : f.value}`)
    .join(", ")

/** The DTO in the format of the negotiated `responseType`. */
export const renderDto = (responseType: string, dto: Dto): string => {
  switch (formatOf(responseType)) {
    case "text":
      return textForm(dto.fields)
    case "xml":
      return XML_DECLARATION + wrapElement(dto.type, xmlFields(dto.fields), SERIALIZER_NAMESPACES)
    case "json":
      return indentedJson(jsonValue(dto.fields))
  }
}

/**
 * A bare string as the codecs write one (the reply of `DELETE /admin/scavenge/{id}`): a JSON string literal,
 * XmlSerializer's `<string>` document (primitives get no namespace attributes), or the text itself.
 */
export const renderString = (responseType: string, value: string): string => {
  switch (formatOf(responseType)) {
    case "text":
      return value
    case "xml":
      return XML_DECLARATION + textElement("string", value)
    case "json":
      return JSON.stringify(value)
  }
}
