/**
 * The `text/html` representation of feeds and entries: a page whose script holds the
 * document's JSON and sends the browser to the web UI at `/web/index.html#/streams/<stream>[/<n>]`.
 */

/** Wraps a JSON document; `</` is escaped so event data cannot close the script element. */
export const htmlRedirectPage = (json: string): string =>
  `<!DOCTYPE html>
<html>
<head>
</head>
<body>
<script>
    var data = ${json
      .replace(/<\//g, "<\\/")
      .replace(/\u2028/g, "\\u2028")
      .replace(/\u2029/g, "\\u2029")};
    var newLocation = '/web/index.html#/streams/' + data.streamId;
    if ('positionEventNumber' in data) {
        newLocation = newLocation + '/' + data.positionEventNumber;
    }
    window.location.replace(newLocation);
</script>
</body>
</html>
`
