/**
 * The part of RFC 8941 (Structured Field Values) that RFC 9421 needs: parsing a Dictionary
 * (`Signature-Input`, `Signature`, `Signature-Agent`, §3.2) and an Item (a legacy
 * `Signature-Agent`), and serializing an Inner List with its parameters (§4.1.1.1), which is
 * how RFC 9421 §2.3 writes `@signature-params`. Strict: anything else is a SyntaxError with a
 * short message that never echoes the input.
 */

export type BareItem = string | number | boolean | Uint8Array | Token;
export type Parameters = Map<string, BareItem>;
export interface Item {
  value: BareItem;
  params: Parameters;
}
export interface InnerList {
  items: Item[];
  params: Parameters;
}
export type Member = Item | InnerList;

/** A Token (RFC 8941 §3.3.4), kept apart from a String so that serializing keeps its form. */
export class Token {
  constructor(readonly text: string) {}
}

export function isInnerList(member: Member): member is InnerList {
  return "items" in member;
}

class Parser {
  pos = 0;
  constructor(readonly text: string) {}

  fail(what: string): never {
    throw new SyntaxError(`${what} at offset ${this.pos}`);
  }
  peek(): string {
    return this.text[this.pos] ?? "";
  }
  skipSP(): void {
    while (this.peek() === " ") this.pos++;
  }
  skipOWS(): void {
    while (this.peek() === " " || this.peek() === "\t") this.pos++;
  }
  done(): boolean {
    return this.pos >= this.text.length;
  }

  key(): string {
    const match = /^[a-z*][a-z0-9_\-.*]*/.exec(this.text.slice(this.pos, this.pos + 256));
    if (!match) this.fail("expected a key");
    this.pos += match[0].length;
    return match[0];
  }

  params(): Parameters {
    const params: Parameters = new Map();
    while (this.peek() === ";") {
      this.pos++;
      this.skipSP();
      const key = this.key();
      let value: BareItem = true;
      if (this.peek() === "=") {
        this.pos++;
        value = this.bareItem();
      }
      params.set(key, value);
    }
    return params;
  }

  bareItem(): BareItem {
    const c = this.peek();
    if (c === "-" || (c >= "0" && c <= "9")) return this.number();
    if (c === '"') return this.string();
    if (c === ":") return this.bytes();
    if (c === "?") return this.boolean();
    if (c === "*" || /[A-Za-z]/.test(c)) return this.token();
    return this.fail("expected an item");
  }

  number(): number {
    const match = /^-?\d{1,15}(\.\d{1,3})?/.exec(this.text.slice(this.pos, this.pos + 20));
    if (!match) this.fail("expected a number");
    if (!match[1] && match[0].replace("-", "").length > 15) this.fail("integer too long");
    this.pos += match[0].length;
    return Number(match[0]);
  }

  string(): string {
    this.pos++;
    let out = "";
    for (;;) {
      const c = this.text[this.pos++];
      if (c === undefined) this.fail("unterminated string");
      if (c === "\\") {
        const next = this.text[this.pos++];
        if (next !== '"' && next !== "\\") this.fail("bad escape in string");
        out += next;
      } else if (c === '"') {
        return out;
      } else {
        const code = c.charCodeAt(0);
        if (code < 0x20 || code > 0x7e) this.fail("non-ASCII character in string");
        out += c;
      }
    }
  }

  token(): Token {
    const match = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/.exec(this.text.slice(this.pos));
    if (!match) this.fail("expected a token");
    this.pos += match[0].length;
    return new Token(match[0]);
  }

  bytes(): Uint8Array {
    const end = this.text.indexOf(":", this.pos + 1);
    if (end < 0) this.fail("unterminated byte sequence");
    const b64 = this.text.slice(this.pos + 1, end);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0) {
      this.fail("bad base64 in byte sequence");
    }
    this.pos = end + 1;
    const raw = atob(b64);
    return Uint8Array.from(raw, (ch) => ch.charCodeAt(0));
  }

  boolean(): boolean {
    const value = this.text.slice(this.pos, this.pos + 2);
    if (value !== "?0" && value !== "?1") this.fail("expected a boolean");
    this.pos += 2;
    return value === "?1";
  }

  item(): Item {
    const value = this.bareItem();
    return { value, params: this.params() };
  }

  innerList(): InnerList {
    this.pos++;
    const items: Item[] = [];
    for (;;) {
      this.skipSP();
      if (this.peek() === ")") {
        this.pos++;
        return { items, params: this.params() };
      }
      items.push(this.item());
      const c = this.peek();
      if (c !== " " && c !== ")") this.fail("expected a space or ')' in inner list");
    }
  }

  member(): Member {
    return this.peek() === "(" ? this.innerList() : this.item();
  }
}

/** Parses a Dictionary (RFC 8941 §4.2.2); a repeated key keeps its last value, as §3.2 says. */
export function parseDictionary(text: string): Map<string, Member> {
  const p = new Parser(text);
  const dict = new Map<string, Member>();
  p.skipSP();
  while (!p.done()) {
    const key = p.key();
    let member: Member;
    if (p.peek() === "=") {
      p.pos++;
      member = p.member();
    } else {
      member = { value: true, params: p.params() };
    }
    dict.set(key, member);
    p.skipOWS();
    if (p.done()) break;
    if (p.peek() !== ",") p.fail("expected ','");
    p.pos++;
    p.skipOWS();
    if (p.done()) p.fail("trailing comma");
  }
  return dict;
}

/** Parses an Item (RFC 8941 §4.2.3). */
export function parseItem(text: string): Item {
  const p = new Parser(text);
  p.skipSP();
  const item = p.item();
  p.skipSP();
  if (!p.done()) p.fail("unexpected characters after the item");
  return item;
}

/** Serializes a bare item (RFC 8941 §4.1.3). */
export function serializeBareItem(value: BareItem): string {
  if (value instanceof Token) return value.text;
  if (typeof value === "boolean") return value ? "?1" : "?0";
  if (typeof value === "number") return String(value);
  if (value instanceof Uint8Array) return `:${btoa(String.fromCharCode(...value))}:`;
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

export function serializeParams(params: Parameters): string {
  let out = "";
  for (const [key, value] of params) {
    out += value === true ? `;${key}` : `;${key}=${serializeBareItem(value)}`;
  }
  return out;
}

export function serializeItem(item: Item): string {
  return serializeBareItem(item.value) + serializeParams(item.params);
}

export function serializeInnerList(list: InnerList): string {
  return `(${list.items.map(serializeItem).join(" ")})${serializeParams(list.params)}`;
}

export function serializeMember(member: Member): string {
  return isInnerList(member) ? serializeInnerList(member) : serializeItem(member);
}
