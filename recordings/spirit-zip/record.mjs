// Records how the Spirit app imports ZIP archives (Settings → Extensions → import):
// each case's archive is built here, byte by byte, and handed to the app's own
// `importExtensionArchive` (packages/host-internal/src/extensions.ts of
// SpiritAgents/SpiritAgent), run with `tsx`; what it answers and what it leaves in a
// fresh data folder are printed as JSON. Nothing of the app is copied here: it is
// imported from a checkout given on the command line.
//
//   cd APP_HOST_INTERNAL_DIR && node --import tsx RECORDINGS/spirit-zip/record.mjs . > cases.json
//
// where APP_HOST_INTERNAL_DIR is `packages/host-internal` of the app's source, with
// `fflate` (the version its package.json names) and `tsx` resolvable from it (see
// README.md).

import { Buffer } from "node:buffer";
import { mkdtempSync, readdirSync, readFileSync, lstatSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const [appDir] = process.argv.slice(2);
if (!appDir) {
  console.error("usage: node record.mjs APP_HOST_INTERNAL_DIR");
  process.exit(2);
}

// `fflate` as the app's folder resolves it (TypeScript is loaded by `--import tsx`).
const resolve = createRequire(path.join(path.resolve(appDir), "package.json")).resolve;
const app = await import(pathToFileURL(path.join(appDir, "src/extensions.ts")).href);

const MANIFEST = JSON.stringify({
  name: "@acme/zip",
  version: "1.0.0",
  spiritExtension: { displayName: "Zip", supportedHosts: ["cli", "desktop"] },
});

// CRC-32 (IEEE), as the ZIP format wants it.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// A stored (uncompressed) ZIP of `entries`: {name | nameHex, utf8?, content?, mode?}.
// `mode` is a Unix mode put in the external attributes (made by Unix).
function buildZip(entries) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const entry of entries) {
    const name = entry.nameHex ? Buffer.from(entry.nameHex, "hex") : Buffer.from(entry.name, "utf8");
    const content = Buffer.from(entry.content ?? "", "utf8");
    const flags = entry.utf8 ? 0x800 : 0;
    const crc = crc32(content);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(content.length, 18);
    local.writeUInt32LE(content.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(content.length, 20);
    central.writeUInt32LE(content.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((entry.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, content);
    centrals.push(central, name);
    offset += local.length + name.length + content.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const manifest = (at = "package.json") => ({ name: at, content: MANIFEST });

const CASES = [
  {
    id: "beside-a-nested-root",
    why: "entries outside the package root are skipped, whatever their names",
    entries: [
      manifest("pkg/package.json"),
      { name: "pkg/index.js", content: "ok" },
      { name: "../x.txt", content: "up" },
      { name: "/x.txt", content: "absolute" },
      { name: "C:x.txt", content: "drive" },
      { name: "pkgx/y.txt", content: "a sibling named like the root" },
      { name: "__MACOSX/pkg/._index.js", content: "resource fork" },
    ],
  },
  {
    id: "dotdot-at-the-root",
    why: "at the archive's root a `..` entry is the package's, and refused",
    entries: [manifest(), { name: "../x.txt", content: "up" }],
  },
  {
    id: "absolute-at-the-root",
    why: "at the archive's root an absolute entry is refused",
    entries: [manifest(), { name: "/x.txt", content: "absolute" }],
  },
  {
    id: "second-leading-dot",
    why: "a second leading ./ is dropped",
    entries: [manifest(), { name: "././b.txt", content: "b" }, { name: ".\\.\\c.txt", content: "c" }],
  },
  {
    id: "third-leading-dot",
    why: "a third leading ./ is a . segment",
    entries: [manifest(), { name: "./././b.txt", content: "b" }],
  },
  {
    id: "inner-dot-segment",
    why: "an empty or . segment inside a name",
    entries: [manifest(), { name: "a//b.txt", content: "b" }],
  },
  {
    id: "same-name-twice",
    why: "a name given twice keeps its last copy",
    entries: [manifest(), { name: "a.txt", content: "one" }, { name: "a.txt", content: "two" }],
  },
  {
    id: "two-spellings",
    why: "a/b.txt then ./a/b.txt: the one written last stays",
    entries: [manifest(), { name: "a/b.txt", content: "one" }, { name: "./a/b.txt", content: "two" }],
  },
  {
    id: "two-spellings-reversed",
    why: "./a/b.txt then a\\b.txt",
    entries: [manifest(), { name: "./a/b.txt", content: "one" }, { name: "a\\b.txt", content: "two" }],
  },
  {
    id: "array-index-names",
    why: "names that are array indices come first in a JavaScript object",
    entries: [
      manifest(),
      { name: "./10", content: "spelled" },
      { name: "10", content: "index" },
    ],
  },
  {
    id: "folder-entries",
    why: "a folder entry makes no folder; the folders of files are made",
    entries: [
      { name: "empty/" },
      { name: "dist/" },
      { name: "dist/index.js", content: "x" },
      manifest(),
      { name: "../up/" },
    ],
  },
  {
    id: "folder-mode-without-slash",
    why: "only the name tells a folder",
    entries: [manifest(), { name: "folder", mode: 0o040755 }],
  },
  {
    id: "symlink-entries",
    why: "a symbolic-link entry is a file holding its target",
    entries: [
      manifest("pkg/package.json"),
      { name: "pkg/up", content: "../x/../package/package.json", mode: 0o120777 },
      { name: "pkg/self", content: "../package", mode: 0o120777 },
      { name: "pkg/abs", content: "/etc/passwd", mode: 0o120777 },
    ],
  },
  {
    id: "latin1-name",
    why: "a name without the UTF-8 flag is one character per byte",
    entries: [manifest(), { nameHex: Buffer.from("caf\xe9.txt", "latin1").toString("hex"), content: "x" }],
  },
  {
    id: "utf8-name-with-bom",
    why: "a UTF-8 name's leading byte-order mark is dropped by the decoder",
    entries: [manifest(), { nameHex: "efbbbf" + Buffer.from("bom.txt").toString("hex"), utf8: true, content: "x" }],
  },
  {
    id: "file-and-folder",
    why: "a file that another entry needs as a folder",
    entries: [manifest(), { name: "a", content: "file" }, { name: "./a/b", content: "inside" }],
  },
  {
    id: "two-manifests-by-spelling",
    why: "package.json and ./package.json are two candidates",
    entries: [manifest(), manifest("./package.json")],
  },
  { id: "zero-bytes", why: "an empty file", bytes: "" },
];

function tree(root) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const rel = path.relative(root, full).split(path.sep).join("/");
      const stat = lstatSync(full);
      if (stat.isDirectory()) {
        out.push(`${rel}/`);
        walk(full);
      } else if (stat.isSymbolicLink()) {
        out.push(`${rel} -> link`);
      } else {
        out.push(rel);
      }
    }
  };
  walk(root);
  return out;
}

const results = [];
for (const item of CASES) {
  const bytes = item.bytes !== undefined ? Buffer.from(item.bytes, "utf8") : buildZip(item.entries);
  const data = mkdtempSync(path.join(os.tmpdir(), "spirit-zip-record-"));
  let installs = false;
  let error = null;
  let directoryName = null;
  try {
    const installed = await app.importExtensionArchive(
      { spiritDataDir: data, hostKind: "cli" },
      { archiveBase64: bytes.toString("base64"), fileName: `${item.id}.zip` },
    );
    installs = true;
    directoryName = installed.directoryName ?? null;
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
  }
  const files = {};
  const pkg = directoryName ? path.join(data, "extensions/cli", directoryName) : null;
  if (pkg) {
    for (const rel of tree(pkg)) {
      if (!rel.endsWith("/") && !rel.endsWith(" -> link")) {
        files[rel] = readFileSync(path.join(pkg, rel), "utf8");
      }
    }
  }
  results.push({
    id: item.id,
    why: item.why,
    archive_hex: bytes.toString("hex"),
    real: {
      installs,
      error,
      tree: tree(data).filter((rel) => !rel.endsWith("extensions.json")),
      package_files: files,
    },
  });
  rmSync(data, { recursive: true, force: true });
}

console.log(
  JSON.stringify(
    {
      provenance: {
        app: "SpiritAgents/SpiritAgent packages/host-internal (importExtensionArchive)",
        node: process.version,
        fflate: JSON.parse(readFileSync(resolve("fflate/package.json"), "utf8")).version,
      },
      cases: results,
    },
    null,
    2,
  ),
);
