//! What the program cache trusts: a file under a program's name that is not that
//! program's own, whole file — another program's file (of any length, with or without
//! its header), a truncated or damaged one, garbage, or a consistent file that holds
//! another program's binary under this program's header — is never loaded: the program
//! is built from source (counted in `programs_built`), computes the right values, and
//! its file is replaced by a good one.

use std::path::{Path, PathBuf};

use lazycl::prelude::*;
use lazycl::Stats;

use crate::common::{ctx_in, rng, temp_dir, Random};

/// The two programs: one fused kernel each, with the same name and parameters, so that
/// either's binary would launch in place of the other's and compute the wrong function.
#[derive(Clone, Copy, PartialEq)]
enum Program {
    Exp,
    Sin,
}

/// Runs `program` on random data, checks its values against the host's, and returns
/// what the run did.
fn run(ctx: &Context, program: Program) -> Stats {
    let x = f64::random_vec(&mut rng(7), 1000)
        .iter()
        .map(|v| v / 50.0)
        .collect::<Vec<f64>>();
    let before = ctx.stats();
    let a = ctx.from_slice(&x).unwrap();
    let got = match program {
        Program::Exp => a.exp(),
        Program::Sin => a.sin(),
    }
    .to_vec()
    .unwrap();
    for (i, (g, v)) in got.iter().zip(&x).enumerate() {
        let want = match program {
            Program::Exp => v.exp(),
            Program::Sin => v.sin(),
        };
        assert!(
            (g - want).abs() <= 1e-12 * want.abs().max(1.0),
            "element {i}: got {g}, want {want}"
        );
    }
    ctx.stats() - before
}

/// The one `.bin` file in `dir`.
fn the_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    assert_eq!(files.len(), 1, "one program, one file: {files:?}");
    files[0].clone()
}

/// `program`'s cache file, as a context writes it into an empty directory.
fn file_of(program: Program, name: &str) -> (String, Vec<u8>) {
    let dir = temp_dir("cache-files", name);
    let built = run(&ctx_in(&dir), program);
    assert_eq!((built.programs_built, built.programs_loaded), (1, 0));
    let path = the_file(&dir);
    let file_name = path.file_name().unwrap().to_string_lossy().to_string();
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (file_name, bytes)
}

/// A cache file's parts (ARCHITECTURE.md, "The program cache"): magic, key length (u64
/// LE), key, binary length (u64 LE), binary, and the xxh3 of everything before it.
struct Parts<'a> {
    magic: &'a [u8],
    key: &'a [u8],
    binary: &'a [u8],
}

fn parts(file: &[u8]) -> Parts<'_> {
    let u64_at = |at: usize| u64::from_le_bytes(file[at..at + 8].try_into().unwrap()) as usize;
    let klen = u64_at(8);
    let blen = u64_at(16 + klen);
    let parts = Parts {
        magic: &file[..8],
        key: &file[16..16 + klen],
        binary: &file[24 + klen..24 + klen + blen],
    };
    assert_eq!(file.len(), 24 + klen + blen + 8, "the layout the test reads");
    parts
}

/// A well-formed file of these parts, its checksum right for its bytes.
fn assemble(magic: &[u8], key: &[u8], binary: &[u8]) -> Vec<u8> {
    let mut v = magic.to_vec();
    v.extend_from_slice(&(key.len() as u64).to_le_bytes());
    v.extend_from_slice(key);
    v.extend_from_slice(&(binary.len() as u64).to_le_bytes());
    v.extend_from_slice(binary);
    let sum = xxhash_rust::xxh3::xxh3_64(&v);
    v.extend_from_slice(&sum.to_le_bytes());
    v
}

#[test]
fn a_file_that_is_not_the_programs_own_is_rebuilt_from_source() {
    let (name, own) = file_of(Program::Exp, "own");
    let (other_name, other) = file_of(Program::Sin, "other");
    assert_ne!(name, other_name, "two programs, two names");
    assert_ne!(parts(&own).binary, parts(&other).binary);
    // The test's own reading of the format: its assembly of the program's own parts is
    // the file, byte for byte.
    let p = parts(&own);
    assert_eq!(assemble(p.magic, p.key, p.binary), own);

    let garbage: Vec<u8> = u32::random_vec(&mut rng(3), own.len())
        .iter()
        .map(|&w| w as u8)
        .collect();
    let mut same_length = other.clone();
    same_length.resize(own.len(), 0);
    let mut damaged = own.clone();
    let in_binary = own.len() - 8 - p.binary.len() / 2;
    damaged[in_binary] ^= 0x10;
    let o = parts(&other);
    // (what the file is, its bytes, whether it reaches the driver: only a consistent
    // file with this program's header and another program's binary does, and is then
    // told apart by the binary itself)
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        ("another program's file", other.clone(), false),
        (
            "another program's file cut or padded to this one's length",
            same_length,
            false,
        ),
        (
            "this file truncated by half",
            own[..own.len() / 2].to_vec(),
            false,
        ),
        (
            "this file less its last byte",
            own[..own.len() - 1].to_vec(),
            false,
        ),
        ("an empty file", Vec::new(), false),
        ("garbage of this file's length", garbage, false),
        ("a short text", b"not a program".to_vec(), false),
        ("this file with a byte of its binary changed", damaged, false),
        (
            "another program's header on this binary, checksum recomputed",
            assemble(o.magic, o.key, p.binary),
            false,
        ),
        (
            "this header on another program's binary, checksum recomputed",
            assemble(p.magic, p.key, o.binary),
            true,
        ),
        (
            "this file in the previous format",
            assemble(b"LZCLBIN2", p.key, p.binary),
            false,
        ),
    ];
    for (i, (what, bytes, reaches_driver)) in cases.into_iter().enumerate() {
        let dir = temp_dir("cache-files", &format!("case{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(&name), &bytes).unwrap();
        let ran = run(&ctx_in(&dir), Program::Exp);
        assert_eq!(
            (ran.programs_built, ran.programs_loaded),
            (1, 0),
            "{what}: built from source, never loaded"
        );
        assert_eq!(
            ran.programs_rejected,
            u64::from(reaches_driver),
            "{what}: rejected by the file's own checks{}",
            if reaches_driver {
                ", or else by the binary's identity"
            } else {
                " before the driver saw it"
            }
        );
        let replaced = std::fs::read(dir.join(&name)).unwrap();
        assert_eq!(
            parts(&replaced).key,
            p.key,
            "{what}: the file is replaced by the program's own"
        );
        let again = run(&ctx_in(&dir), Program::Exp);
        assert_eq!(
            (again.programs_built, again.programs_loaded),
            (0, 1),
            "{what}: the replaced file loads"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
