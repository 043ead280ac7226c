//! The on-disk program cache: built programs are stored as device binaries
//! (`CL_PROGRAM_BINARIES`) so that a later process loads them instead of compiling.
//!
//! A file is named by a hash of its key and holds the whole key (source, build options,
//! platform name and version, device name, driver version, lazycl version), the binary,
//! and a checksum of everything before it. A file is used only when its magic, lengths,
//! checksum and full key all match; anything else (truncated, corrupt, foreign, of an
//! older format) is rebuilt from source and replaced. The binary carries its key too:
//! every program is compiled with an empty kernel named by the key's hash
//! ([`DiskCache::identity`]), which `program::obtain` looks for in a loaded binary, so a
//! file whose header is right but whose binary is another program's is not used either.
//! Files are written to a unique
//! temporary file (`tempfile`) and renamed into place, so processes racing on one key all
//! succeed. A directory that cannot be written degrades to in-memory caching with a
//! one-time warning.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use xxhash_rust::xxh3::xxh3_64;

use crate::backend::device::DeviceInfo;
use crate::env;
use crate::error::Result;

/// The file format's magic and version. Version 3: binaries carry their identity kernel
/// (version 2's do not, so their files are misses, rebuilt and replaced). The checksum is
/// xxh3 of every byte before it since version 2 (version 1's was FNV-1a of the key and
/// binary, and its files were named by FNV-1a, so this version never opens them; they
/// stay until the directory is cleared).
const MAGIC: &[u8; 8] = b"LZCLBIN3";

/// Where (and whether) programs are cached on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheDir {
    /// `LAZYCL_CACHE=off` disables; else `LAZYCL_CACHE_DIR`, or `lazycl` in the user's
    /// cache directory (`dirs::cache_dir()`: `$XDG_CACHE_HOME` or `~/.cache` on Linux,
    /// `~/Library/Caches` on macOS, the local app data folder on Windows); no disk cache
    /// when there is none.
    FromEnv,
    /// No disk cache (programs are still cached in memory for the context's life).
    Off,
    /// This directory.
    Dir(PathBuf),
}

impl CacheDir {
    /// The directory to use, `None` for no disk cache; an unusable `LAZYCL_CACHE` value
    /// is an error (see [`crate::env`]).
    pub(crate) fn resolve(&self) -> Result<Option<PathBuf>> {
        Ok(match self {
            CacheDir::Off => None,
            CacheDir::Dir(p) => Some(p.clone()),
            CacheDir::FromEnv => {
                if crate::env::switch("LAZYCL_CACHE")? == Some(false) {
                    return Ok(None);
                }
                if let Some(d) = env::path("LAZYCL_CACHE_DIR") {
                    return Ok(Some(PathBuf::from(d)));
                }
                dirs::cache_dir().map(|d| d.join("lazycl"))
            }
        })
    }
}

/// The largest table file read: a table of every shape class a device can meet is a few
/// kilobytes; a larger file is not one lazycl wrote, and is ignored (then replaced).
const MAX_TABLE_BYTES: u64 = 1 << 20;

/// A context's disk cache.
pub(crate) struct DiskCache {
    dir: Option<PathBuf>,
    warned: AtomicBool,
    /// The device part of every key.
    device_key: String,
}

/// xxh3 (64 bits) does both of the cache's hashing jobs, so one crate serves them: it
/// names files (a name only needs to be fast and well spread, since the full key is
/// compared on load; xxh3's output is fixed by its specification, so names stay stable
/// across crate versions) and checks their contents (random damage goes unnoticed with
/// odds of 2^-64, a 32-bit CRC's 2^-32). Not a security boundary. Chosen over the FNV-1a
/// it replaces, crc32fast and blake3 on a load's cost (RESULTS.md#rule-cache-checksum):
/// a load's read and check 4 to 14 times cheaper than with FNV-1a; slower than crc32fast
/// by 2 µs for PoCL's median binary (64 KiB), 12 µs at 256 KiB.
fn hash(bytes: &[u8]) -> u64 {
    xxh3_64(bytes)
}

impl DiskCache {
    pub(crate) fn new(setting: &CacheDir, device: &DeviceInfo) -> Result<Self> {
        let device_key = format!(
            "platform={}|platform_version={}|device={}|driver={}|lazycl={}",
            device.platform_name,
            device.platform_version,
            device.name,
            device.driver_version,
            env!("CARGO_PKG_VERSION")
        );
        Ok(DiskCache {
            dir: setting.resolve()?,
            warned: AtomicBool::new(false),
            device_key,
        })
    }

    fn key(&self, source: &str, options: &str) -> String {
        format!("{}|options={options}|source={source}", self.device_key)
    }

    /// The name of the empty kernel that every program of `source` and `options` is
    /// compiled with on this device: `lazycl_id_` and the hash of the full key. Found in
    /// a binary, it says the binary was compiled from this key's source, whatever the
    /// file around it says.
    pub(crate) fn identity(&self, source: &str, options: &str) -> String {
        format!("lazycl_id_{:016x}", hash(self.key(source, options).as_bytes()))
    }

    fn path(&self, dir: &Path, key: &str) -> PathBuf {
        dir.join(format!("{:016x}.bin", hash(key.as_bytes())))
    }

    /// The cached binary for this source and options, if a valid file exists.
    pub(crate) fn load(&self, source: &str, options: &str) -> Option<Vec<u8>> {
        let dir = self.dir.as_ref()?;
        let key = self.key(source, options);
        let data = fs::read(self.path(dir, &key)).ok()?;
        parse(&data, key.as_bytes()).map(<[u8]>::to_vec)
    }

    /// Deletes the entry for this source and options, if there is one (a binary that
    /// loaded but does not fit its program: see `program::obtain`).
    pub(crate) fn remove(&self, source: &str, options: &str) {
        if let Some(dir) = &self.dir {
            let _ = fs::remove_file(self.path(dir, &self.key(source, options)));
        }
    }

    /// Stores a binary (atomically: temporary file, then rename). Failures only warn once.
    pub(crate) fn store(&self, source: &str, options: &str, binary: &[u8]) {
        let Some(dir) = &self.dir else { return };
        let key = self.key(source, options);
        let path = self.path(dir, &key);
        self.write(dir, &path, &encode(key.as_bytes(), binary));
    }

    /// The file of this device's table `name` (a text file of lines, such as the GEMM
    /// tiles its searches chose).
    fn table_path(&self, dir: &Path, name: &str) -> PathBuf {
        dir.join(format!("{name}-{:016x}.txt", hash(self.device_key.as_bytes())))
    }

    /// This device's table `name`, if one was written: the lines after its first, which
    /// names the device (a file of another device, a hash collision, is ignored, and so
    /// is one that is not UTF-8 or larger than [`MAX_TABLE_BYTES`]).
    pub(crate) fn read_table(&self, name: &str) -> Option<String> {
        let dir = self.dir.as_ref()?;
        let path = self.table_path(dir, name);
        if fs::metadata(&path).ok()?.len() > MAX_TABLE_BYTES {
            return None;
        }
        let text = fs::read_to_string(path).ok()?;
        let (first, rest) = text.split_once('\n')?;
        (first == self.device_key).then(|| rest.to_string())
    }

    /// The file of this device's table `name` and the line it starts with (for tests
    /// that write one), if there is a disk cache.
    pub(crate) fn table_file(&self, name: &str) -> Option<(PathBuf, String)> {
        let dir = self.dir.as_ref()?;
        Some((self.table_path(dir, name), self.device_key.clone()))
    }

    /// Writes this device's table `name` (atomically, like a binary).
    pub(crate) fn write_table(&self, name: &str, lines: &str) {
        let Some(dir) = &self.dir else { return };
        let path = self.table_path(dir, name);
        self.write(dir, &path, format!("{}\n{lines}", self.device_key).as_bytes());
    }

    /// Writes `data` to `path` in `dir` through a temporary file of a unique name in the
    /// same directory and a rename, so that readers see the old file or the new one,
    /// whole. A temporary file that is not renamed is deleted when dropped. Failures only
    /// warn once.
    fn write(&self, dir: &Path, path: &Path, data: &[u8]) {
        let result = fs::create_dir_all(dir)
            .and_then(|()| tempfile::NamedTempFile::new_in(dir))
            .and_then(|mut tmp| {
                tmp.write_all(data)?;
                tmp.as_file().sync_all()?;
                tmp.persist(path).map(drop).map_err(|e| e.error)
            });
        if let Err(e) = result {
            if !self.warned.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "lazycl: warning: cannot write the program cache in {} ({e}); programs are cached in memory only",
                    dir.display()
                );
            }
        }
    }
}

/// File layout: magic, key length (u64 LE), key, binary length (u64 LE), binary,
/// checksum (u64 LE): [`hash`] of every byte before it.
fn encode(key: &[u8], binary: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + 8 + key.len() + 8 + binary.len() + 8);
    v.extend_from_slice(MAGIC);
    v.extend_from_slice(&(key.len() as u64).to_le_bytes());
    v.extend_from_slice(key);
    v.extend_from_slice(&(binary.len() as u64).to_le_bytes());
    v.extend_from_slice(binary);
    let sum = hash(&v);
    v.extend_from_slice(&sum.to_le_bytes());
    v
}

/// The binary in `data` if the file is whole, uncorrupted and for exactly `key`.
fn parse<'a>(data: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let (summed, sum) = data.split_at(data.len().checked_sub(8)?);
    if hash(summed).to_le_bytes() != sum {
        return None;
    }
    let rest = summed.strip_prefix(MAGIC)?;
    let (klen, rest) = take_u64(rest)?;
    let (file_key, rest) = take(rest, klen)?;
    let (blen, rest) = take_u64(rest)?;
    let (binary, rest) = take(rest, blen)?;
    (rest.is_empty() && file_key == key && !binary.is_empty()).then_some(binary)
}

fn take_u64(d: &[u8]) -> Option<(u64, &[u8])> {
    let (head, rest) = take(d, 8)?;
    Some((u64::from_le_bytes(head.try_into().ok()?), rest))
}

fn take(d: &[u8], n: u64) -> Option<(&[u8], &[u8])> {
    let n = usize::try_from(n).ok()?;
    (d.len() >= n).then(|| d.split_at(n))
}

#[cfg(test)]
mod tests {
    use super::{encode, hash, parse};

    #[test]
    fn files_are_checked_before_use() {
        let f = encode(b"key", b"binary");
        assert_eq!(parse(&f, b"key"), Some(&b"binary"[..]));
        assert_eq!(parse(&f, b"other key"), None, "foreign");
        assert_eq!(parse(&f[..f.len() - 3], b"key"), None, "truncated");
        for at in [0, 9, 20, f.len() - 1] {
            let mut bad = f.clone();
            bad[at] ^= 0x40;
            assert_eq!(parse(&bad, b"key"), None, "corrupt at {at}");
        }
        assert_eq!(parse(b"", b"key"), None);
        assert_eq!(parse(&f[..7], b"key"), None);
    }

    #[test]
    fn a_file_of_another_format_version_is_a_miss() {
        // Version 2's magic with a checksum that is right for the bytes.
        let mut old = encode(b"key", b"binary");
        old[7] = b'2';
        let body = old.len() - 8;
        let sum = hash(&old[..body]).to_le_bytes();
        old[body..].copy_from_slice(&sum);
        assert_eq!(parse(&old, b"key"), None);
    }
}
