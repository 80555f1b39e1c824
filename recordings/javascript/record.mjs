// Records what JavaScript's String.prototype.trim removes: every code point c for which
// String.fromCodePoint(c).trim() is empty, as ranges. Run: node record.mjs > trim.json
const trimmed = [];
for (let c = 0; c <= 0x10ffff; c++) {
  if (c >= 0xd800 && c <= 0xdfff) continue; // not scalar values
  if (String.fromCodePoint(c).trim() === "") trimmed.push(c);
}
const hex = (c) => "U+" + c.toString(16).toUpperCase().padStart(4, "0");
const points = (s) => Array.from(s, (ch) => hex(ch.codePointAt(0))).join(" ");
const facts = {
  provenance: {
    recorded_with: `node ${process.version} (V8 ${process.versions.v8})`,
    how: "String.fromCodePoint(c).trim() === \"\" for every Unicode scalar value c",
  },
  trimmed: trimmed.map(hex),
  // Also: trim removes them at both ends only, and trimStart/trimEnd use the same set.
  checks: {
    "\\u0085x\\u0085": points("\u0085x\u0085".trim()),
    "\\ufeffx\\ufeff": points("\ufeffx\ufeff".trim()),
    "\\ufeffx\\ufeff trimStart": points("\ufeffx\ufeff".trimStart()),
    "\\ufeffx\\ufeff trimEnd": points("\ufeffx\ufeff".trimEnd()),
    "a\\u3000b": points("a\u3000b".trim()),
  },
};
console.log(JSON.stringify(facts, null, 1));
