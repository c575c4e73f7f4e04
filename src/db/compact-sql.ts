/**
 * A statement's text without its comments and indentation: every run of whitespace and every
 * comment outside a quoted literal or identifier becomes one space, or nothing at either end
 * and beside a parenthesis or a comma.
 * Over HTTP a statement's text travels with every request (Neon keeps no prepared statements
 * between them), and the hot path's statements are mostly layout: a quarter of the bytes of the
 * identity statement, when it was still sent as text, on the wire and through the driver on
 * every assessment (docs/performance.md, "A Worker's SQL round trip, taken apart").
 *
 * Text this scanner does not read whole (dollar quotes, `E'…'` strings with backslash escapes,
 * nested or unterminated comments and quotes) is answered unchanged.
 */
export function compactSql(text: string): string {
  if (DOLLAR_QUOTE.test(text) || ESCAPE_STRING.test(text)) return text;
  let out = "";
  let space = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    const next = text[i + 1];
    if (ch === "-" && next === "-") {
      const end = text.indexOf("\n", i);
      i = end === -1 ? text.length : end + 1;
      space = true;
    } else if (ch === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      // PostgreSQL nests block comments; the first `*/` would not end an outer one.
      if (end === -1 || text.slice(i + 2, end).includes("/*")) return text;
      i = end + 2;
      space = true;
    } else if (WHITESPACE.test(ch)) {
      i++;
      space = true;
    } else {
      if (space && out.length > 0 && !TIGHT.has(ch) && !TIGHT.has(out.at(-1) as string)) {
        out += " ";
      }
      space = false;
      if (ch === "'" || ch === '"') {
        const end = closingQuote(text, i);
        if (end === -1) return text;
        out += text.slice(i, end + 1);
        i = end + 1;
      } else {
        out += ch;
        i++;
      }
    }
  }
  return out;
}

const WHITESPACE = /\s/;
/** Punctuation no token runs into: a space beside it separates nothing. */
const TIGHT = new Set(["(", ")", ","]);
/** `$$` or `$tag$` (a parameter is `$` and digits). */
const DOLLAR_QUOTE = /\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/;
/** `E'` or `e'` starting a token: a string whose backslashes escape. */
const ESCAPE_STRING = /(?:^|[^A-Za-z0-9_$])[Ee]'/;

/** The index of the quote that closes the one at `open` (a doubled quote is part of the text). */
function closingQuote(text: string, open: number): number {
  const quote = text[open];
  let i = open + 1;
  while (i < text.length) {
    if (text[i] === quote) {
      if (text[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i;
    }
    i++;
  }
  return -1;
}
