//! Builds the archives the archive and install tests need (shared by `tests/archive.rs`
//! and `tests/install.rs` through `#[path]`).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;
use tar::{EntryType, Header};
use zip::ZipWriter;
use zip::write::SimpleFileOptions;

/// The smallest valid package.
pub const HELLO: &str = r#"{"name":"@acme/hello","version":"1.0.0","spiritExtension":{"displayName":"Hello","supportedHosts":["cli","desktop"]}}"#;

/// A package named `name` at `version` with `main` = `dist/index.js`.
pub fn with_main(name: &str, version: &str) -> String {
    format!(
        r#"{{"name":"{name}","version":"{version}","main":"dist/index.js","spiritExtension":{{"displayName":"Hello","supportedHosts":["cli","desktop"],"activationEvents":["onStartup"]}}}}"#
    )
}

/// The script of [`with_main`] packages.
pub const INDEX_JS: &str = "export function activate() {}\n";

/// One entry of a test archive.
#[derive(Debug, Clone)]
pub enum Item {
    /// A regular file with an optional Unix mode.
    File(String, Vec<u8>, Option<u32>),
    /// A folder.
    Dir(String),
    /// A symbolic link to a target.
    Symlink(String, String),
    /// A hard link to a target (tar only).
    HardLink(String, String),
    /// A FIFO (tar only).
    Fifo(String),
    /// A character device (tar only).
    CharDevice(String),
}

pub fn file(name: &str, content: impl AsRef<[u8]>) -> Item {
    Item::File(name.to_owned(), content.as_ref().to_vec(), None)
}

pub fn file_mode(name: &str, content: impl AsRef<[u8]>, mode: u32) -> Item {
    Item::File(name.to_owned(), content.as_ref().to_vec(), Some(mode))
}

pub fn dir(name: &str) -> Item {
    Item::Dir(name.to_owned())
}

/// Writes a ZIP (deflate) of `items` at `dir/name`.
pub fn zip(dir: &Path, name: &str, items: &[Item]) -> PathBuf {
    let path = dir.join(name);
    let mut writer = ZipWriter::new(File::create(&path).unwrap());
    for item in items {
        match item {
            Item::File(name, content, mode) => {
                let mut options = SimpleFileOptions::default();
                if let Some(mode) = mode {
                    options = options.unix_permissions(*mode);
                }
                writer.start_file(name.as_str(), options).unwrap();
                writer.write_all(content).unwrap();
            }
            Item::Dir(name) => writer
                .add_directory(name.as_str(), SimpleFileOptions::default())
                .unwrap(),
            Item::Symlink(name, target) => writer
                .add_symlink(name.as_str(), target.as_str(), SimpleFileOptions::default())
                .unwrap(),
            other => panic!("a ZIP cannot hold {other:?}"),
        }
    }
    writer.finish().unwrap();
    path
}

/// Writes a ZIP with one deflated entry `name` of `size` zero bytes after `items`.
pub fn zip_with_zeros(
    dir: &Path,
    file_name: &str,
    items: &[Item],
    name: &str,
    size: u64,
) -> PathBuf {
    let path = dir.join(file_name);
    let mut writer = ZipWriter::new(File::create(&path).unwrap());
    for item in items {
        if let Item::File(name, content, _) = item {
            writer
                .start_file(name.as_str(), SimpleFileOptions::default())
                .unwrap();
            writer.write_all(content).unwrap();
        }
    }
    writer
        .start_file(
            name,
            SimpleFileOptions::default().compression_level(Some(9)),
        )
        .unwrap();
    write_zeros(&mut writer, size);
    writer.finish().unwrap();
    path
}

pub fn write_zeros(out: &mut impl Write, size: u64) {
    let chunk = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        out.write_all(&chunk[..n]).unwrap();
        left -= n as u64;
    }
}

/// The offset of the end-of-central-directory record of a ZIP without comment.
fn eocd(bytes: &[u8]) -> usize {
    let at = bytes.len() - 22;
    assert_eq!(&bytes[at..at + 4], b"PK\x05\x06");
    at
}

fn u16_at(bytes: &[u8], at: usize) -> usize {
    u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize
}

fn u32_at(bytes: &[u8], at: usize) -> usize {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize
}

/// Calls `edit(bytes, central record offset, local header offset)` for the entry
/// `name` of the ZIP at `path`.
pub fn patch_zip_entry(path: &Path, name: &str, edit: impl Fn(&mut Vec<u8>, usize, usize)) {
    let mut bytes = fs::read(path).unwrap();
    let end = eocd(&bytes);
    let mut at = u32_at(&bytes, end + 16);
    let mut found = false;
    while &bytes[at..at + 4] == b"PK\x01\x02" {
        let name_len = u16_at(&bytes, at + 28);
        let extra = u16_at(&bytes, at + 30);
        let comment = u16_at(&bytes, at + 32);
        if &bytes[at + 46..at + 46 + name_len] == name.as_bytes() {
            let local = u32_at(&bytes, at + 42);
            edit(&mut bytes, at, local);
            found = true;
        }
        at += 46 + name_len + extra + comment;
    }
    assert!(found, "no entry {name}");
    fs::write(path, bytes).unwrap();
}

/// Makes the ZIP at `path` declare `size` uncompressed bytes for `name` (both headers).
pub fn lie_about_size(path: &Path, name: &str, size: u32) {
    patch_zip_entry(path, name, |bytes, central, local| {
        bytes[central + 24..central + 28].copy_from_slice(&size.to_le_bytes());
        bytes[local + 22..local + 26].copy_from_slice(&size.to_le_bytes());
    });
}

/// Renames entry `from` to `to` (same length) in both headers, e.g. to make a duplicate.
pub fn rename_zip_entry(path: &Path, from: &str, to: &str) {
    assert_eq!(from.len(), to.len());
    patch_zip_entry(path, from, |bytes, central, local| {
        let n = to.len();
        bytes[central + 46..central + 46 + n].copy_from_slice(to.as_bytes());
        bytes[local + 30..local + 30 + n].copy_from_slice(to.as_bytes());
    });
}

/// A tar header with the name written as is (no checks), GNU format.
pub fn raw_header(name: &str, kind: EntryType, size: u64, mode: u32) -> Header {
    let mut header = Header::new_gnu();
    let bytes = name.as_bytes();
    assert!(bytes.len() <= 100, "name too long for a raw header: {name}");
    header.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
    header.set_entry_type(kind);
    header.set_size(size);
    header.set_mode(mode);
    header.set_mtime(0);
    header.set_cksum();
    header
}

/// Appends `items` to a tar builder.
pub fn append_items<W: Write>(builder: &mut tar::Builder<W>, items: &[Item]) {
    for item in items {
        match item {
            Item::File(name, content, mode) => {
                let header = raw_header(
                    name,
                    EntryType::Regular,
                    content.len() as u64,
                    mode.unwrap_or(0o644),
                );
                builder.append(&header, content.as_slice()).unwrap();
            }
            Item::Dir(name) => {
                let header = raw_header(name, EntryType::Directory, 0, 0o755);
                builder.append(&header, std::io::empty()).unwrap();
            }
            Item::Symlink(name, target) | Item::HardLink(name, target) => {
                let kind = if matches!(item, Item::Symlink(..)) {
                    EntryType::Symlink
                } else {
                    EntryType::Link
                };
                let mut header = raw_header(name, kind, 0, 0o777);
                header.set_link_name_literal(target.as_bytes()).unwrap();
                header.set_cksum();
                builder.append(&header, std::io::empty()).unwrap();
            }
            Item::Fifo(name) => {
                let header = raw_header(name, EntryType::Fifo, 0, 0o644);
                builder.append(&header, std::io::empty()).unwrap();
            }
            Item::CharDevice(name) => {
                let header = raw_header(name, EntryType::Char, 0, 0o644);
                builder.append(&header, std::io::empty()).unwrap();
            }
        }
    }
}

/// Writes a gzip-compressed tar of `items` at `dir/name`.
pub fn tgz(dir: &Path, name: &str, items: &[Item]) -> PathBuf {
    tgz_with(dir, name, |builder| append_items(builder, items))
}

/// Writes a gzip-compressed tar filled by `fill` at `dir/name`.
pub fn tgz_with(
    dir: &Path,
    name: &str,
    fill: impl FnOnce(&mut tar::Builder<GzEncoder<File>>),
) -> PathBuf {
    let path = dir.join(name);
    let encoder = GzEncoder::new(File::create(&path).unwrap(), Compression::best());
    let mut builder = tar::Builder::new(encoder);
    fill(&mut builder);
    builder.into_inner().unwrap().finish().unwrap();
    path
}

/// A tar entry `name` of `size` zeros, streamed (never held in memory).
pub fn append_zeros<W: Write>(builder: &mut tar::Builder<W>, name: &str, size: u64) {
    let header = raw_header(name, EntryType::Regular, size, 0o644);
    builder
        .append(&header, std::io::repeat(0).take(size))
        .unwrap();
}

/// The names in a folder, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    match fs::read_dir(dir) {
        Ok(entries) => {
            let mut names: Vec<String> = entries
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
        Err(_) => Vec::new(),
    }
}

/// Every file under `dir` with its bytes, relative paths sorted.
pub fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                out.push((format!("{relative}/"), Vec::new()));
                walk(root, &path, out);
            } else {
                out.push((relative, fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}
