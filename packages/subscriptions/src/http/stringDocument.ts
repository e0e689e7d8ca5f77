/**
 * A string as the negotiated codec writes one: a JSON string literal, or the .NET XML serializer's `<string>`
 * document (a refused group read's reason, restart's `Restarting`).
 */
import { XML_DECLARATION, documentReply, escapeXmlText, type Reply } from "@vellum/http"
import { isXml } from "./mediaTypes.js"

export const stringDocument = (status: number, phrase: string, responseType: string, text: string): Reply =>
  documentReply(
    status,
    phrase,
    responseType,
    isXml(responseType) ? `${XML_DECLARATION}<string>${escapeXmlText(text)}</string>` : JSON.stringify(text)
  )
