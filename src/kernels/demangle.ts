/**
 * An Itanium C++ ABI demangler (https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling) for the subset
 * GPU kernel names use: nested and local names, templates and template parameters, substitutions (`S_`,
 * `S<n>_`, `St`, `Sa`, `Ss`...), literals (`Lb0E`, `Lj256E`, enum values), pointers, references, cv-qualifiers,
 * function and array types, vendor types, argument packs, ABI tags, lambdas and unnamed types, constructors and
 * destructors, common operator names.
 *
 * The output copies LLVM's llvm/include/llvm/Demangle/ItaniumDemangle.h (what `llvm-cxxfilt` prints): `T const*`,
 * `A<B<int>>` without a space, `5u` / `(char)97` / `(E)1` literals, the return type printed only for template
 * functions. Anything outside the subset (expressions, `decltype`, floating-point literals...) gives
 * `undefined` and the caller shows the mangled name: `demangle` never throws, and gives up after a bounded
 * amount of work so a hostile name costs nothing.
 */

/** A printed fragment in two halves, LLVM's printLeft / printRight (a function pointer's `(*` ... `)(int)`). */
interface Type {
  left: string;
  right: string;
  /** What a pointer or reference to it must wrap in parentheses (function and array types). */
  readonly wrap?: boolean;
  /** The type is a function: parameters and qualifiers are in `right`. */
  readonly fn?: boolean;
}

class Fail extends Error {}

const BUILTINS: Readonly<Record<string, string>> = {
  v: "void", w: "wchar_t", b: "bool", c: "char", a: "signed char", h: "unsigned char", s: "short", t: "unsigned short",
  i: "int", j: "unsigned int", l: "long", m: "unsigned long", x: "long long", y: "unsigned long long", n: "__int128",
  o: "unsigned __int128", f: "float", d: "double", e: "long double", g: "__float128", z: "...",
};
const D_BUILTINS: Readonly<Record<string, string>> = {
  d: "decimal64", e: "decimal128", f: "decimal32", h: "half", i: "char32_t", s: "char16_t", u: "char8_t", a: "auto",
  c: "decltype(auto)", n: "std::nullptr_t",
};
/** Integer literal types: suffix when LLVM prints one, else a `(type)` cast. */
const LITERAL_SUFFIX: Readonly<Record<string, string>> = { i: "", j: "u", l: "l", m: "ul", x: "ll", y: "ull" };
const OPERATORS: Readonly<Record<string, string>> = {
  nw: "new", na: "new[]", dl: "delete", da: "delete[]", ps: "+", ng: "-", ad: "&", de: "*", co: "~", pl: "+", mi: "-",
  ml: "*", dv: "/", rm: "%", an: "&", or: "|", eo: "^", aS: "=", pL: "+=", mI: "-=", mL: "*=", dV: "/=", rM: "%=",
  aN: "&=", oR: "|=", eO: "^=", ls: "<<", rs: ">>", lS: "<<=", rS: ">>=", eq: "==", ne: "!=", lt: "<", gt: ">", le: "<=",
  ge: ">=", ss: "<=>", nt: "!", aa: "&&", oo: "||", pp: "++", mm: "--", cm: ",", pm: "->*", pt: "->", cl: "()", ix: "[]",
};
const SPECIAL_SUBSTITUTIONS: Readonly<Record<string, string>> = {
  a: "std::allocator", b: "std::basic_string", s: "std::string", i: "std::istream", o: "std::ostream", d: "std::iostream",
};
const SPECIAL_CTOR_NAMES: Readonly<Record<string, string>> = {
  a: "allocator", b: "basic_string", s: "basic_string", i: "basic_istream", o: "basic_ostream", d: "basic_iostream",
};

/** `_ZTV`, `_ZTI`, `_ZTS`, `_ZTT`: a class's vtable and type info, named for the type that follows. */
const SPECIAL_NAMES: Readonly<Record<string, string>> = { TV: "vtable for ", TI: "typeinfo for ", TS: "typeinfo name for ", TT: "VTT for " };

/** The longest name demangled and the most steps spent on one (each step consumes input or builds a node). */
const MAX_NAME = 16384;
const MAX_DEPTH = 256;

interface Name {
  text: string;
  /** The last component without template arguments: what a constructor is named after. */
  base: string;
  /** Whether the name ends with template arguments (its encoding then states the return type). */
  templated: boolean;
  /** Constructor, destructor or conversion: no return type even when templated. */
  special: boolean;
  /** cv / ref qualifiers of a member function (` const`, ` &&`). */
  qualifiers: string;
}

class Parser {
  at = 0;
  depth = 0;
  readonly subs: Type[] = [];
  /** The template arguments `T_`, `T0_`... refer to: the last ones parsed at the encoding's level. */
  params: Type[] = [];

  constructor(readonly text: string) {}

  peek(offset = 0): string {
    return this.text[this.at + offset] ?? "";
  }
  eat(prefix: string): boolean {
    if (!this.text.startsWith(prefix, this.at)) return false;
    this.at += prefix.length;
    return true;
  }
  expect(prefix: string): void {
    if (!this.eat(prefix)) throw new Fail();
  }
  number(): number {
    const m = /^n?\d+/.exec(this.text.slice(this.at, this.at + 24));
    if (m === null) throw new Fail();
    this.at += m[0].length;
    return m[0][0] === "n" ? -Number(m[0].slice(1)) : Number(m[0]);
  }
  /** `<seq-id>`: base 36 digits and upper-case letters, then `_`; empty means 0 (S_ is the first, S0_ the second). */
  seqId(): number {
    let n = 0;
    let digits = 0;
    while (/[0-9A-Z]/.test(this.peek())) {
      n = n * 36 + parseInt(this.peek(), 36);
      this.at++;
      digits++;
    }
    this.expect("_");
    return digits === 0 ? 0 : n + 1;
  }
  enter(): void {
    if (++this.depth > MAX_DEPTH) throw new Fail();
  }

  /** `<encoding>`: a function name and its parameters, or a data name. */
  encoding(): string {
    this.enter();
    const name = this.name(true);
    if (this.at >= this.text.length || this.peek() === "E" || this.peek() === ".") {
      this.depth--;
      return name.text;
    }
    let ret = "";
    let retRight = "";
    if (name.templated && !name.special) {
      const r = this.type();
      ret = r.left;
      retRight = r.right;
    }
    const params = this.parameters();
    this.depth--;
    if (!name.templated || name.special) return `${name.text}(${params})${name.qualifiers}`;
    return `${ret}${retRight === "" ? " " : ""}${name.text}(${params})${retRight}${name.qualifiers}`;
  }

  parameters(): string {
    if (this.peek() === "v" && (this.at + 1 >= this.text.length || "E.".includes(this.peek(1)))) {
      this.at++;
      return "";
    }
    const list: string[] = [];
    while (this.at < this.text.length && this.peek() !== "E" && this.peek() !== ".") list.push(print(this.type()));
    if (list.length === 0) throw new Fail();
    return list.join(", ");
  }

  /** `<name>`: nested, local, unscoped (with `St`), or a substituted template name with arguments. */
  name(encodingLevel: boolean): Name {
    this.enter();
    try {
      if (this.peek() === "N") return this.nested(encodingLevel);
      if (this.peek() === "Z") return this.local(encodingLevel);
      let text: string;
      let base: string;
      if (this.peek() === "S" && this.peek(1) !== "t") {
        const sub = this.substitution();
        if (this.peek() !== "I") throw new Fail();
        text = sub.text;
        base = sub.base;
      } else {
        const std = this.eat("St");
        // `L`: internal linkage (a static function), which the printed name does not show.
        this.eat("L");
        const part = this.unqualified("");
        text = (std ? "std::" : "") + part.text;
        base = part.base;
        if (this.peek() === "I") this.subs.push({ left: text, right: "" });
      }
      if (this.peek() === "I") {
        const args = this.templateArgs(encodingLevel);
        return { text: text + args, base, templated: true, special: false, qualifiers: "" };
      }
      return { text, base, templated: false, special: false, qualifiers: "" };
    } finally {
      this.depth--;
    }
  }

  /** `N [<CV-qualifiers>] [<ref-qualifier>] <prefix> <unqualified-name> E`. */
  nested(encodingLevel: boolean): Name {
    this.expect("N");
    let qualifiers = "";
    if (this.eat("r")) qualifiers += " restrict";
    if (this.eat("V")) qualifiers += " volatile";
    if (this.eat("K")) qualifiers = " const" + qualifiers;
    if (this.eat("R")) qualifiers += " &";
    else if (this.eat("O")) qualifiers += " &&";
    let soFar: string | undefined;
    let base = "";
    let templated = false;
    let special = false;
    let pushed = 0;
    while (!this.eat("E")) {
      this.eat("L");
      if (this.peek() === "I") {
        if (soFar === undefined || templated) throw new Fail();
        soFar += this.templateArgs(encodingLevel);
        templated = true;
      } else if (this.peek() === "T") {
        if (soFar !== undefined) throw new Fail();
        soFar = print(this.templateParam());
        templated = false;
      } else if (this.peek() === "S") {
        if (soFar !== undefined) throw new Fail();
        if (this.eat("St")) {
          const part = this.unqualified("std::");
          soFar = `std::${part.text}`;
          base = part.base;
          special = part.special;
          templated = false;
        } else {
          const sub = this.substitution();
          soFar = sub.text;
          base = sub.base;
          continue;
        }
      } else {
        const part = this.unqualified(base);
        soFar = soFar === undefined ? part.text : `${soFar}::${part.text}`;
        base = part.base;
        special = part.special;
        templated = false;
      }
      this.subs.push({ left: soFar, right: "" });
      pushed++;
      this.eat("M");
      if (this.at >= this.text.length) throw new Fail();
    }
    if (soFar === undefined || pushed === 0) throw new Fail();
    this.subs.pop();
    return { text: soFar, base, templated, special, qualifiers };
  }

  /** `Z <encoding> E <entity name> [<discriminator>]`, or `... E s` for a string literal. */
  local(encodingLevel: boolean): Name {
    this.expect("Z");
    const outer = this.encoding();
    this.expect("E");
    if (this.eat("s")) {
      this.discriminator();
      return { text: `${outer}::string literal`, base: "string literal", templated: false, special: false, qualifiers: "" };
    }
    if (this.eat("d")) {
      this.eat("n");
      while (/\d/.test(this.peek())) this.at++;
      this.expect("_");
    }
    const inner = this.name(encodingLevel);
    this.discriminator();
    return { ...inner, text: `${outer}::${inner.text}` };
  }

  discriminator(): void {
    if (this.eat("__")) {
      while (/\d/.test(this.peek())) this.at++;
      this.expect("_");
    } else if (this.peek() === "_" && /\d/.test(this.peek(1))) {
      this.at += 2;
    }
  }

  /** `<unqualified-name>`: a source name, operator, constructor/destructor, lambda or unnamed type, with ABI tags. */
  unqualified(enclosing: string): { text: string; base: string; special: boolean } {
    let text: string;
    let special = false;
    const c = this.peek();
    if (/\d/.test(c)) text = this.sourceName();
    else if (c === "C" && /[1-5I]/.test(this.peek(1))) {
      this.at++;
      this.eat("I");
      this.at++;
      if (enclosing === "") throw new Fail();
      text = enclosing;
      special = true;
    } else if (c === "D" && /[0-5]/.test(this.peek(1))) {
      this.at += 2;
      if (enclosing === "") throw new Fail();
      text = `~${enclosing}`;
      special = true;
    } else if (c === "U" && this.peek(1) === "t") {
      this.at += 2;
      const n = this.peek() === "_" ? "" : String(this.number() + 1);
      this.expect("_");
      text = `'unnamed${n}'`;
    } else if (c === "U" && this.peek(1) === "l") {
      this.at += 2;
      const params = this.parameters();
      this.expect("E");
      const n = this.peek() === "_" ? "" : String(this.number() + 1);
      this.expect("_");
      text = `'lambda${n}'(${params})`;
    } else if (c === "c" && this.peek(1) === "v") {
      this.at += 2;
      text = `operator ${print(this.type())}`;
      special = true;
    } else {
      const op = OPERATORS[this.text.slice(this.at, this.at + 2)];
      if (op === undefined) throw new Fail();
      this.at += 2;
      text = /^[a-z]/.test(op) ? `operator ${op}` : `operator${op}`;
    }
    const base = text;
    while (this.eat("B")) text += `[abi:${this.sourceName()}]`;
    return { text, base, special };
  }

  sourceName(): string {
    const length = this.number();
    if (length <= 0 || length > this.text.length - this.at) throw new Fail();
    const id = this.text.slice(this.at, this.at + length);
    this.at += length;
    return id.startsWith("_GLOBAL__N") ? "(anonymous namespace)" : id;
  }

  /** `S_`, `S<seq-id>_`, `Sa`, `Sb`, `Ss`, `Si`, `So`, `Sd`. */
  substitution(): { text: string; base: string } {
    this.expect("S");
    const special = SPECIAL_SUBSTITUTIONS[this.peek()];
    if (special !== undefined && /[a-z]/.test(this.peek())) {
      const ctorName = SPECIAL_CTOR_NAMES[this.peek()]!;
      this.at++;
      return { text: special, base: ctorName };
    }
    const index = this.seqId();
    const found = this.subs[index];
    if (found === undefined) throw new Fail();
    const text = print(found);
    return { text, base: baseOf(text) };
  }

  templateParam(): Type {
    this.expect("T");
    const index = this.seqId();
    const found = this.params[index];
    if (found === undefined) throw new Fail();
    return found;
  }

  /** `I <template-arg>+ E`; at the encoding's level they become what `T_` refers to. */
  templateArgs(encodingLevel: boolean): string {
    this.expect("I");
    this.enter();
    const args: Type[] = [];
    while (!this.eat("E")) {
      if (this.at >= this.text.length) throw new Fail();
      args.push(this.templateArg());
    }
    this.depth--;
    if (encodingLevel) this.params = args;
    const text = args.map(print).filter((a) => a !== "").join(", ");
    return `<${text}>`;
  }

  templateArg(): Type {
    if (this.peek() === "L") return { left: this.literal(), right: "" };
    if (this.eat("J")) {
      const pack: Type[] = [];
      while (!this.eat("E")) {
        if (this.at >= this.text.length) throw new Fail();
        pack.push(this.templateArg());
      }
      return { left: pack.map(print).join(", "), right: "" };
    }
    if (this.peek() === "X") throw new Fail();
    return this.type();
  }

  /** `L <type> <value> E`, `L _Z <encoding> E`, `LDnE`. */
  literal(): string {
    this.expect("L");
    if (this.eat("_Z")) {
      const text = this.encoding();
      this.expect("E");
      return text;
    }
    if (this.eat("DnE") || this.eat("Dn0E")) return "nullptr";
    const c = this.peek();
    if (c === "b" && (this.peek(1) === "0" || this.peek(1) === "1") && this.peek(2) === "E") {
      this.at += 3;
      return this.text[this.at - 2] === "1" ? "true" : "false";
    }
    if ("wcahstijlmxyno".includes(c) && c !== "") {
      this.at++;
      const value = this.integerText();
      this.expect("E");
      const suffix = LITERAL_SUFFIX[c];
      return suffix !== undefined ? value + suffix : `(${BUILTINS[c]})${value}`;
    }
    if ("fdeg".includes(c) && c !== "") throw new Fail();
    const type = print(this.type());
    const value = this.integerText();
    this.expect("E");
    return `(${type})${value}`;
  }

  integerText(): string {
    const negative = this.eat("n");
    const m = /^\d+/.exec(this.text.slice(this.at, this.at + 64));
    if (m === null) throw new Fail();
    this.at += m[0].length;
    return (negative ? "-" : "") + m[0];
  }

  /** `<type>`; pushes what the ABI makes substitutable. */
  type(): Type {
    this.enter();
    try {
      const c = this.peek();
      const builtin = BUILTINS[c];
      if (builtin !== undefined && c !== "") {
        this.at++;
        return { left: builtin, right: "" };
      }
      let result: Type;
      switch (c) {
        case "K":
        case "V":
        case "r": {
          let quals = "";
          while ("rVK".includes(this.peek()) && this.peek() !== "") {
            const q = this.peek();
            this.at++;
            quals = (q === "K" ? " const" : q === "V" ? " volatile" : " restrict") + quals;
          }
          const inner = this.type();
          result = inner.fn ? { ...inner, right: inner.right + quals } : { left: inner.left + quals, right: inner.right, wrap: inner.wrap };
          break;
        }
        case "P":
        case "R":
        case "O": {
          this.at++;
          const inner = this.type();
          const mark = c === "P" ? "*" : c === "R" ? "&" : "&&";
          result = inner.wrap
            ? { left: `${inner.left}${inner.fn ? "" : " "}(${mark}`, right: `)${inner.right}` }
            : { left: inner.left + mark, right: inner.right };
          break;
        }
        case "F": {
          this.at++;
          this.eat("Y");
          const ret = this.type();
          const params = this.parameters();
          let quals = "";
          if (this.eat("R")) quals = " &";
          else if (this.eat("O")) quals = " &&";
          this.expect("E");
          result = { left: `${ret.left} `, right: `(${params})${ret.right}${quals}`, wrap: true, fn: true };
          break;
        }
        case "A": {
          this.at++;
          const size = /\d/.test(this.peek()) ? String(this.number()) : "";
          this.expect("_");
          const element = this.type();
          result = { left: element.left, right: ` [${size}]${element.right.replace(/^ \[/, "[")}`, wrap: true };
          break;
        }
        case "M": {
          this.at++;
          const cls = print(this.type());
          const member = this.type();
          result = member.wrap
            ? { left: `${member.left}(${cls}::*`, right: `)${member.right}` }
            : { left: `${member.left} ${cls}::*`, right: member.right };
          break;
        }
        case "T": {
          result = this.templateParam();
          if (this.peek() === "I") {
            this.subs.push(result);
            result = { left: print(result) + this.templateArgs(false), right: "" };
          }
          break;
        }
        case "S": {
          if (this.peek(1) !== "t") {
            const sub = this.substitution();
            if (this.peek() !== "I") return { left: sub.text, right: "" };
            result = { left: sub.text + this.templateArgs(false), right: "" };
            break;
          }
          result = { left: this.name(false).text, right: "" };
          break;
        }
        case "u": {
          this.at++;
          result = { left: this.sourceName(), right: "" };
          break;
        }
        case "D": {
          const d = this.peek(1);
          if (d === "p") {
            this.at += 2;
            const inner = this.type();
            result = inner;
            break;
          }
          if (d === "v") {
            this.at += 2;
            const size = this.number();
            this.expect("_");
            const element = this.type();
            result = { left: `${print(element)} vector[${size}]`, right: "" };
            break;
          }
          if (d === "F") {
            this.at += 2;
            const bits = this.number();
            this.expect("_");
            return { left: `_Float${bits}`, right: "" };
          }
          const name = D_BUILTINS[d];
          if (name === undefined) throw new Fail();
          this.at += 2;
          return { left: name, right: "" };
        }
        case "N":
        case "Z":
        default: {
          if (c !== "N" && c !== "Z" && !/\d/.test(c)) throw new Fail();
          result = { left: this.name(false).text, right: "" };
        }
      }
      this.subs.push(result);
      return result;
    } finally {
      this.depth--;
    }
  }
}

/** The last component of a qualified name without its template arguments: what a constructor is named after. */
function baseOf(text: string): string {
  let depth = 0;
  let end = text.length;
  let start = 0;
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text[i];
    if (c === ">") depth++;
    else if (c === "<") {
      depth--;
      if (depth === 0) end = i;
    } else if (c === ":" && depth === 0 && text[i - 1] === ":") {
      start = i + 1;
      break;
    }
  }
  return text.slice(start, end);
}

function print(type: Type): string {
  return type.left + type.right;
}

/**
 * The demangled form of an Itanium-mangled name (`_Z...`, a `.suffix` kept as ` (.suffix)` as LLVM does);
 * `undefined` for anything else or anything outside the subset. Never throws.
 */
export function demangle(mangled: string): string | undefined {
  if (!mangled.startsWith("_Z") || mangled.length > MAX_NAME) return undefined;
  const parser = new Parser(mangled);
  parser.at = 2;
  try {
    const special = SPECIAL_NAMES[mangled.slice(2, 4)];
    if (special !== undefined) parser.at = 4;
    const text = special !== undefined ? special + print(parser.type()) : parser.encoding();
    if (parser.at === mangled.length) return text;
    if (parser.peek() === ".") return `${text} (${mangled.slice(parser.at)})`;
    return undefined;
  } catch (e) {
    if (e instanceof Fail || e instanceof RangeError) return undefined;
    throw e;
  }
}

/** `demangle`, or the name itself when it cannot be demangled. */
export function demangleOrKeep(name: string): string {
  return demangle(name) ?? name;
}
