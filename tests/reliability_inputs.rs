//! Reliability of what cpuscope reads from outside (issue 34, "Bounded
//! inputs"; docs/reliability.md, "Inputs that could blow up or strand a
//! command"): archive header bombs under `--sysroot FILE.tar.gz`, run
//! documents that are devices or never end under `import`, the tag, host
//! and NUL rules `import` applies for every store, and the careful
//! writer's temporary file on a signal.
//!
//! Each bomb is built here, exactly (a gzip stream written by hand: a
//! dynamic Huffman block of 258-byte copies at two bits each, as gzip -9
//! does, so that 1 MB expands to 1 GiB), and runs in a child whose peak
//! resident memory (`wait4`'s `ru_maxrss`) must stay under 256 MiB, under
//! a deadline and a 4 GiB address-space limit (a regression fails the test,
//! not the machine). `ru_maxrss` also counts what the forked child shared
//! with this process, so the tests run one at a time ([`SERIAL`]) and
//! start their child with no large buffer held: the figure is then the
//! child's own, within this process's few MiB.

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/pg.rs"]
mod pg;
#[path = "common/skip.rs"]
mod skip;

use std::ffi::CString;
use std::io::{Read as _, Write as _};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The most a bomb may make the child hold (resident).
const RSS_LIMIT_KIB: u64 = 256 << 10;
/// How long a child here may run.
const DEADLINE: Duration = Duration::from_secs(120);
/// Address space allowed to a child.
const ADDRESS_SPACE: u64 = 4 << 30;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

// ---------------------------------------------------------------- children

/// Held by every test here, for its whole length: a forked child starts
/// with its parent's resident pages (its `ru_maxrss` counts them), so the
/// measure is the child's own only while no other test of this process
/// holds memory. Each test drops its large buffers before it starts the
/// child, and freed heap is given back first (`malloc_trim`).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A child's output and its peak resident memory.
struct Ran {
    out: Output,
    max_rss_kib: u64,
    /// This process's resident memory when it forked the child: `ru_maxrss`
    /// is at least this much, whatever the child did.
    parent_rss_kib: u64,
}

/// This process's resident memory (VmRSS), KiB.
fn own_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// What a child's standard input gets.
enum Feed {
    Nothing,
    /// `chunk` again and again until the child closes the pipe.
    Endless(Vec<u8>),
}

/// Run `cmd` to its end (killed past [`DEADLINE`]) and measure its peak RSS.
#[allow(clippy::zombie_processes)] // reaped by wait4 in wait_measured
fn run_measured(mut cmd: Command, feed: Feed) -> Ran {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.stdin(match feed {
        Feed::Nothing => Stdio::null(),
        Feed::Endless(_) => Stdio::piped(),
    });
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    // Give freed heap back first: the forked child starts with what this
    // process holds resident (see SERIAL).
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only returns free memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
    let parent_rss_kib = own_rss_kib();
    let mut child = cmd.spawn().expect("spawn cpuscope");
    let feeder = match (feed, child.stdin.take()) {
        (Feed::Endless(chunk), Some(mut w)) => {
            Some(std::thread::spawn(
                move || {
                    while w.write_all(&chunk).is_ok() {}
                },
            ))
        }
        _ => None,
    };
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = so.read_to_end(&mut b);
        b
    });
    let t_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = se.read_to_end(&mut b);
        b
    });
    let (status, rss) = wait_measured(child.id() as i32);
    if let Some(f) = feeder {
        f.join().unwrap();
    }
    Ran {
        out: Output {
            status: std::process::ExitStatus::from_raw(status),
            stdout: t_out.join().unwrap(),
            stderr: t_err.join().unwrap(),
        },
        max_rss_kib: rss,
        parent_rss_kib,
    }
}

/// Reap `pid` with `wait4`: its wait status and `ru_maxrss` (KiB).
fn wait_measured(pid: i32) -> (i32, u64) {
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: zeroed rusage is a valid out-parameter.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: our own child; valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            return (status, ru.ru_maxrss as u64);
        }
        assert!(r == 0, "wait4: {}", std::io::Error::last_os_error());
        if start.elapsed() > DEADLINE {
            // SAFETY: our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the child ran past {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A one-line error, bounded memory; returns the line.
fn bounded_refusal(r: &Ran, what: &str) -> String {
    let e = cli::one_line_error(&r.out);
    eprintln!(
        "{what}: peak RSS {} MiB (ru_maxrss; this process held {} MiB at the fork): {}",
        r.max_rss_kib >> 10,
        r.parent_rss_kib >> 10,
        e.trim()
    );
    assert!(
        r.max_rss_kib < RSS_LIMIT_KIB,
        "{what}: peak RSS {} MiB, over {} MiB: {e}",
        r.max_rss_kib >> 10,
        RSS_LIMIT_KIB >> 20
    );
    e
}

fn mkfifo(p: &Path) {
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {p:?}"
    );
}

// ------------------------------------------------------ gzip built by hand

/// Bits, least significant first, as deflate packs them.
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, v: u64, bits: u32) {
        self.acc |= v << self.n;
        self.n += bits;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// A Huffman code: most significant bit first.
    fn code(&mut self, code: u32, len: u32) {
        let rev = code.reverse_bits() >> (32 - len);
        self.put(u64::from(rev), len);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// A fixed-Huffman block of literals.
fn literal_block(b: &mut Bits, data: &[u8], last: bool) {
    b.put(u64::from(last), 1);
    b.put(1, 2);
    for &c in data {
        if c < 144 {
            b.code(0x30 + u32::from(c), 8);
        } else {
            b.code(0x190 + u32::from(c) - 144, 9);
        }
    }
    b.code(0, 7);
}

/// A dynamic-Huffman block of `copies` copies of 258 bytes from `dist`
/// back: its only codes are end-of-block and length 258 (one bit each) and
/// one distance code (one bit, then its extra bits).
fn copy_block(b: &mut Bits, copies: u64, dist: u64) {
    // (distance code, its base) for the distances used here.
    let (dcode, base, extra_bits) = match dist {
        1 => (0u64, 1u64, 0u32),
        512 => (17, 385, 7),
        _ => panic!("distance {dist} not supported"),
    };
    b.put(0, 1);
    b.put(2, 2);
    b.put(29, 5); // HLIT: 286 literal/length codes
    b.put(dcode, 5); // HDIST: dcode + 1 distance codes
    b.put(14, 4); // HCLEN: 18 code-length codes
    for sym in [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1] {
        b.put(u64::from(sym == 18 || sym == 1), 3);
    }
    // Code-length codes: 1 -> "0", 18 -> "1" (a run of 11 to 138 zeros).
    let zeros = |b: &mut Bits, n: u64| {
        b.code(1, 1);
        b.put(n - 11, 7);
    };
    zeros(b, 138);
    zeros(b, 118); // literals 0..=255: none
    b.code(0, 1); // 256 (end of block): length 1
    zeros(b, 28); // 257..=284: none
    b.code(0, 1); // 285 (length 258): length 1
    if dcode > 0 {
        zeros(b, dcode);
    }
    b.code(0, 1); // the one distance code: length 1
    for _ in 0..copies {
        b.code(1, 1); // length 258
        b.code(0, 1); // the distance code
        b.put(dist - base, extra_bits);
    }
    b.code(0, 1); // end of block
}

/// The CRC-32 of `data` and a way to extend it by repeats of a period
/// (zlib's crc32_combine, over GF(2)).
#[derive(Clone, Copy)]
struct Crc {
    crc: u32,
    len: u64,
}

fn gf2_times(mat: &[u32; 32], mut v: u32) -> u32 {
    let (mut sum, mut i) = (0, 0);
    while v != 0 {
        if v & 1 != 0 {
            sum ^= mat[i];
        }
        v >>= 1;
        i += 1;
    }
    sum
}

fn gf2_square(mat: &[u32; 32]) -> [u32; 32] {
    let mut sq = [0; 32];
    for n in 0..32 {
        sq[n] = gf2_times(mat, mat[n]);
    }
    sq
}

/// The CRC of A then B from CRC(A), CRC(B) and B's length.
fn crc_combine(a: u32, b: u32, mut len_b: u64) -> u32 {
    if len_b == 0 {
        return a;
    }
    let mut odd = [0u32; 32];
    odd[0] = 0xedb8_8320;
    let mut row = 1;
    for x in odd.iter_mut().skip(1) {
        *x = row;
        row <<= 1;
    }
    let mut even = gf2_square(&odd);
    odd = gf2_square(&even);
    let mut crc = a;
    loop {
        even = gf2_square(&odd);
        if len_b & 1 != 0 {
            crc = gf2_times(&even, crc);
        }
        len_b >>= 1;
        if len_b == 0 {
            break;
        }
        odd = gf2_square(&even);
        if len_b & 1 != 0 {
            crc = gf2_times(&odd, crc);
        }
        len_b >>= 1;
        if len_b == 0 {
            break;
        }
    }
    crc ^ b
}

impl Crc {
    fn of(data: &[u8]) -> Crc {
        let mut c = flate2::Crc::new();
        c.update(data);
        Crc {
            crc: c.sum(),
            len: data.len() as u64,
        }
    }

    fn then(self, b: Crc) -> Crc {
        Crc {
            crc: crc_combine(self.crc, b.crc, b.len),
            len: self.len + b.len,
        }
    }

    /// `self` repeated `times` times.
    fn times(self, mut times: u64) -> Crc {
        let mut acc = Crc { crc: 0, len: 0 };
        let mut block = self;
        while times > 0 {
            if times & 1 == 1 {
                acc = acc.then(block);
            }
            block = block.then(block);
            times >>= 1;
        }
        acc
    }
}

/// A piece of a bomb's uncompressed stream.
enum Seg {
    /// These bytes.
    Lit(Vec<u8>),
    /// The last `period` bytes (1 or 512) again, `times` more times.
    Repeat { period: usize, times: u64 },
}

/// A gzip file of `segs`, each literal in a fixed block and each repeat in
/// a block of 258-byte copies.
fn gzip(segs: &[Seg]) -> Vec<u8> {
    let mut bits = Bits::default();
    let mut crc = Crc { crc: 0, len: 0 };
    let mut tail: Vec<u8> = Vec::new(); // the last 512 bytes written
    for (i, s) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        match s {
            Seg::Lit(d) => {
                literal_block(&mut bits, d, last);
                crc = crc.then(Crc::of(d));
                tail.extend_from_slice(d);
            }
            Seg::Repeat { period, times } => {
                assert!(!last && tail.len() >= *period);
                let p = tail[tail.len() - period..].to_vec();
                let n = *period as u64 * times;
                copy_block(&mut bits, n / 258, *period as u64);
                // The rest: the period's last bytes (n is whole periods).
                let rest = (n % 258) as usize;
                let rest_bytes: Vec<u8> = (0..rest)
                    .map(|j| p[(p.len() * 258 - rest + j) % p.len()])
                    .collect();
                literal_block(&mut bits, &rest_bytes, false);
                crc = crc.then(Crc::of(&p).times(*times));
                tail.extend_from_slice(&p);
            }
        }
        let keep = tail.len().saturating_sub(512);
        tail.drain(..keep);
    }
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(bits.finish());
    out.extend(crc.crc.to_le_bytes());
    out.extend((crc.len as u32).to_le_bytes());
    out
}

/// A tar header block.
fn header(name: &[u8], kind: tar::EntryType, size: u64) -> Vec<u8> {
    let mut h = tar::Header::new_gnu();
    h.as_old_mut().name[..name.len()].copy_from_slice(name);
    h.set_entry_type(kind);
    h.set_mode(0o644);
    h.set_size(size);
    h.set_mtime(0);
    h.set_cksum();
    h.as_bytes().to_vec()
}

fn pad(len: u64) -> Vec<u8> {
    vec![0; ((512 - len % 512) % 512) as usize]
}

/// The end of a bomb: padding after `len` bytes of data, one small file
/// the extension would describe, and the end of the archive.
fn ending(len: u64) -> Vec<u8> {
    let mut v = pad(len);
    v.extend(header(b"sys/x", tar::EntryType::Regular, 1));
    v.push(b'1');
    v.extend(pad(1));
    v.extend([0u8; 1024]);
    v
}

/// An extension header of `kind` holding `n` bytes of `a`.
fn extension_bomb(kind: tar::EntryType, n: u64) -> Vec<u8> {
    let mut head = header(b"././@LongLink", kind, n);
    head.push(b'a');
    gzip(&[
        Seg::Lit(head),
        Seg::Repeat {
            period: 1,
            times: n - 1,
        },
        Seg::Lit(ending(n)),
    ])
}

/// A PAX header of `n` bytes: one well-formed `path` record of `a`s.
fn pax_bomb(kind: tar::EntryType, n: u64) -> Vec<u8> {
    let prefix = format!("{n} path=a");
    let mut head = header(b"PaxHeaders/x", kind, n);
    head.extend(prefix.as_bytes());
    let run = n - prefix.len() as u64 - 1;
    let mut end = b"\n".to_vec();
    end.extend(ending(n));
    gzip(&[
        Seg::Lit(head),
        Seg::Repeat {
            period: 1,
            times: run,
        },
        Seg::Lit(end),
    ])
}

fn write_bomb(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn sysroot_info(archive: &Path) -> Ran {
    let mut c = bin::command();
    c.arg("--sysroot").arg(archive).arg("info");
    c.env("TMPDIR", archive.parent().unwrap());
    run_measured(c, Feed::Nothing)
}

// ------------------------------------------------------------ archive bombs

#[test]
fn the_hand_made_gzip_decodes_to_what_it_says() {
    let _serial = serial();
    let mut expect = header(b"././@LongLink", tar::EntryType::GNULongName, 5000);
    expect.extend(vec![b'a'; 5000]);
    expect.extend(ending(5000));
    let g = extension_bomb(tar::EntryType::GNULongName, 5000);
    let mut got = Vec::new();
    flate2::read::GzDecoder::new(&g[..])
        .read_to_end(&mut got)
        .expect("a valid gzip stream, CRC and length included");
    assert!(got == expect, "the bomb decodes to the tar it describes");
    // A 512-byte period repeated (headers).
    let h = header(b"g", tar::EntryType::XGlobalHeader, 0);
    let g = gzip(&[
        Seg::Lit(h.clone()),
        Seg::Repeat {
            period: 512,
            times: 1000,
        },
        Seg::Lit(vec![0; 1024]),
    ]);
    let mut got = Vec::new();
    flate2::read::GzDecoder::new(&g[..])
        .read_to_end(&mut got)
        .unwrap();
    let mut expect = h.repeat(1001);
    expect.extend([0u8; 1024]);
    assert!(got == expect);
    // The ratio gzip -9 reaches: 1 GiB in about 1 MB.
    let g = extension_bomb(tar::EntryType::GNULongName, GIB);
    assert!(g.len() < 1_100_000, "{} bytes", g.len());
}

#[test]
fn long_name_and_long_link_bombs_are_refused_in_bounded_memory() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    for (name, kind, n, says) in [
        // The two: 510 KB (2.7 GB before) and 1 MB (5.3 GB before).
        (
            "name-512m.tar.gz",
            tar::EntryType::GNULongName,
            512 * MIB,
            "a GNU long name",
        ),
        (
            "name-1g.tar.gz",
            tar::EntryType::GNULongName,
            GIB,
            "a GNU long name",
        ),
        (
            "link-1g.tar.gz",
            tar::EntryType::GNULongLink,
            GIB,
            "a GNU long link target",
        ),
    ] {
        let bomb = extension_bomb(kind, n);
        eprintln!("{name}: {} bytes of gzip, {n} bytes of header", bomb.len());
        let p = write_bomb(dir.path(), name, &bomb);
        let e = bounded_refusal(&sysroot_info(&p), name);
        assert!(
            e.contains(&format!("sysroot archive '{}'", p.display())),
            "{e}"
        );
        assert!(e.contains(&format!("header #1 ('././@LongLink', {says}) holds {n} bytes, more than 4096 bytes (PATH_MAX): refused")), "{e}");
    }
}

#[test]
fn pax_header_bombs_are_refused_in_bounded_memory() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    for (name, kind, says) in [
        (
            "pax-512m.tar.gz",
            tar::EntryType::XHeader,
            "a PAX extended header",
        ),
        (
            "global-1g.tar.gz",
            tar::EntryType::XGlobalHeader,
            "a PAX global header",
        ),
    ] {
        let n = if name.contains("512m") {
            512 * MIB
        } else {
            GIB
        };
        let bomb = pax_bomb(kind, n);
        eprintln!("{name}: {} bytes of gzip, {n} bytes of header", bomb.len());
        let p = write_bomb(dir.path(), name, &bomb);
        let e = bounded_refusal(&sysroot_info(&p), name);
        assert!(
            e.contains(&format!(
                "header #1 ('PaxHeaders/x', {says}) holds {n} bytes, more than 1 MiB: refused"
            )),
            "{e}"
        );
    }
}

#[test]
fn many_small_headers_meet_the_entry_cap() {
    let _serial = serial();
    // 250,000 PAX global headers: 128 MB of headers in about 0.6 MB.
    let dir = tempfile::tempdir().unwrap();
    let h = header(b"pax_global_header", tar::EntryType::XGlobalHeader, 0);
    let bomb = gzip(&[
        Seg::Lit(h),
        Seg::Repeat {
            period: 512,
            times: 249_999,
        },
        Seg::Lit(ending(0)),
    ]);
    eprintln!("{} bytes of gzip", bomb.len());
    let p = write_bomb(dir.path(), "globals.tar.gz", &bomb);
    let e = bounded_refusal(&sysroot_info(&p), "250,000 headers");
    assert!(e.contains("more than 200000 entries"), "{e}");
}

#[test]
fn content_bombs_are_capped_by_size_before_they_are_read() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // One file of 4 GiB in 4 MB: refused from its header.
    let mut head = header(b"sys/big", tar::EntryType::Regular, 4 * GIB);
    head.push(b'a');
    let bomb = gzip(&[
        Seg::Lit(head),
        Seg::Repeat {
            period: 1,
            times: 4 * GIB - 1,
        },
        Seg::Lit(ending(4 * GIB)),
    ]);
    let p = write_bomb(dir.path(), "big.tar.gz", &bomb);
    let e = bounded_refusal(&sysroot_info(&p), "a 4 GiB file");
    assert!(e.contains("entry 'sys/big' holds 4294967296 bytes, more than a sysfs/procfs file (16 MiB): refused"), "{e}");
    // Eighteen files of 16 MiB: the total cap (256 MiB, and one file's
    // worth beyond) stops the eighteenth; each file is read alone.
    let mut segs = Vec::new();
    for i in 0..18 {
        let mut head = header(
            format!("sys/f{i}").as_bytes(),
            tar::EntryType::Regular,
            16 * MIB,
        );
        head.push(b'a');
        segs.push(Seg::Lit(head));
        segs.push(Seg::Repeat {
            period: 1,
            times: 16 * MIB - 1,
        });
    }
    segs.push(Seg::Lit(vec![0; 1024]));
    let p = write_bomb(dir.path(), "many.tar.gz", &gzip(&segs));
    let e = bounded_refusal(&sysroot_info(&p), "18 files of 16 MiB");
    assert!(e.contains("more than 256 MiB of files"), "{e}");
    // The gzip header's own fields: a file name of 8 MB with no end.
    let mut g = vec![0x1f, 0x8b, 8, 0x08, 0, 0, 0, 0, 0, 0xff];
    g.extend(vec![b'n'; 8 << 20]);
    let p = write_bomb(dir.path(), "fname.tar.gz", &g);
    bounded_refusal(&sysroot_info(&p), "an endless gzip file name");
}

// ------------------------------------------------------------ import bombs

fn import(store: &Path, file: &str, feed: Feed) -> Ran {
    let mut c = bin::command();
    c.arg("--store").arg(store).arg("import").arg(file);
    run_measured(c, feed)
}

fn runs_json(store: &Path) -> String {
    let o = bin::with_store(store, &["runs", "--json"]);
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn import_refuses_devices_and_endless_streams_in_bounded_memory() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    // A device: refused before it is opened.
    let e = bounded_refusal(&import(&db, "/dev/zero", Feed::Nothing), "import /dev/zero");
    assert!(
        e.contains("'/dev/zero': is a character device, not a run document"),
        "{e}"
    );
    let e = bounded_refusal(&import(&db, "/dev/loop-control", Feed::Nothing), "a device");
    assert!(e.contains("device") || e.contains("No such file"), "{e}");
    let e = bounded_refusal(
        &import(&db, dir.path().to_str().unwrap(), Feed::Nothing),
        "a directory",
    );
    assert!(e.contains("is a directory, not a run document"), "{e}");
    // Standard input fed without end.
    let e = bounded_refusal(
        &import(&db, "-", Feed::Endless(vec![b' '; 65536])),
        "import - fed endlessly",
    );
    assert!(e.contains("'-': holds more than 64 MiB, the cap on a run document (import --max-size BYTES raises it)"), "{e}");
    // A FIFO fed without end.
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            let chunk = b"[0,".repeat(20_000);
            while w.write_all(&chunk).is_ok() {}
        })
    };
    let e = bounded_refusal(
        &import(&db, fifo.to_str().unwrap(), Feed::Nothing),
        "import FIFO fed endlessly",
    );
    writer.join().unwrap();
    assert!(e.contains("holds more than 64 MiB"), "{e}");
    // A file larger than the cap (sparse: nothing is written).
    let big = dir.path().join("big.json");
    std::fs::File::create(&big).unwrap().set_len(GIB).unwrap();
    let e = bounded_refusal(
        &import(&db, big.to_str().unwrap(), Feed::Nothing),
        "an oversized file",
    );
    assert!(
        e.contains("holds 1073741824 bytes, more than 64 MiB"),
        "{e}"
    );
    // The cap is the user's to raise, and is stated.
    let o = bin::with_store(&db, &["import", "--max-size", "1K", big.to_str().unwrap()]);
    assert!(cli::one_line_error(&o).contains("more than 1024 bytes"));
    let o = bin::with_store(
        &db,
        &["import", "--max-size", "lots", big.to_str().unwrap()],
    );
    assert!(!o.status.success());
    assert!(!db.exists() || runs_json(&db).contains("\"runs\": []"));
}

#[test]
fn import_refuses_json_that_would_outgrow_its_size_in_memory() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    // 60 MB of `0,`: within the size cap, 30 million values (about 1 GB
    // as serde_json values): refused by the value cap before parsing.
    let mut arr = b"[".to_vec();
    arr.extend(b"0,".repeat(30_000_000));
    arr.extend(b"0]");
    let p = write_bomb(dir.path(), "values.json", &arr);
    drop(arr);
    let e = bounded_refusal(
        &import(&db, p.to_str().unwrap(), Feed::Nothing),
        "30 M values",
    );
    assert!(e.contains("holds more than 2097152 JSON values"), "{e}");
    // Members with distinct keys.
    let mut obj = b"{".to_vec();
    for i in 0..3_000_000 {
        obj.extend(format!("\"k{i}\":0,").as_bytes());
    }
    obj.extend(b"\"end\":0}");
    let p = write_bomb(dir.path(), "members.json", &obj);
    drop(obj);
    let e = bounded_refusal(
        &import(&db, p.to_str().unwrap(), Feed::Nothing),
        "3 M members",
    );
    assert!(e.contains("JSON values"), "{e}");
    // Nesting: serde_json's recursion limit (128) answers.
    let mut deep = b"[".repeat(100_000);
    deep.extend(b"]".repeat(100_000));
    let p = write_bomb(dir.path(), "deep.json", &deep);
    drop(deep);
    let e = bounded_refusal(&import(&db, p.to_str().unwrap(), Feed::Nothing), "nesting");
    assert!(e.contains("recursion limit exceeded"), "{e}");
}

#[test]
fn import_of_a_fifo_without_a_writer_ends_on_ctrl_c() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let mut c = bin::command();
    c.arg("--store")
        .arg(dir.path().join("s.db"))
        .arg("import")
        .arg(&fifo);
    let child = c.stderr(Stdio::piped()).spawn().unwrap();
    // Once it holds the FIFO open it waits on it (the handler is in place
    // before: `import` installs it first).
    let fds = PathBuf::from(format!("/proc/{}/fd", child.id()));
    let start = Instant::now();
    while !std::fs::read_dir(&fds).is_ok_and(|d| {
        d.filter_map(|e| e.ok())
            .any(|e| std::fs::read_link(e.path()).is_ok_and(|l| l == fifo))
    }) {
        assert!(start.elapsed() < DEADLINE, "import never opened the FIFO");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    let e = cli::one_line_error(&out);
    assert!(
        e.contains("interrupted while reading it; nothing imported"),
        "{e}"
    );
}

// ------------------------------------------------------- the import rules

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/runs/vm-2cpu-quick.json"
);

fn fixture() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap()
}

/// Run ids of this test process (a server named by CPUSCOPE_TEST_PG_URL
/// may hold earlier ones).
fn unique_id(what: &str, i: usize) -> String {
    static T: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    let t = T.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    });
    format!(
        "20261125T124517Z-{what}-{:x}{:x}-{i:04x}",
        std::process::id(),
        t & 0xffff_ffff
    )
}

/// Documents `run` could not have written, each with what the refusal says.
fn bad_documents() -> Vec<(&'static str, serde_json::Value, String)> {
    use serde_json::json;
    let long_tag = "t".repeat(120_000);
    let long_host = "h".repeat(100_000);
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "empty tag",
            Box::new(|v| v["tags"] = json!(["ok", ""])),
            "a tag that `run` refuses: invalid --tag '': a tag may not be empty",
        ),
        (
            "duplicate tag",
            Box::new(|v| v["tags"] = json!(["a", "a"])),
            "a tag that `run` refuses: --tag 'a' is given twice",
        ),
        (
            "long tag",
            Box::new(move |v| v["tags"] = json!([long_tag.clone()])),
            "(120000 characters): a tag has at most 64",
        ),
        (
            "bidi tag",
            Box::new(|v| v["tags"] = json!(["a\u{202e}b"])),
            "holds the character \\u{202e}",
        ),
        (
            "newline tag",
            Box::new(|v| v["tags"] = json!(["a\nb"])),
            "holds the character \\n",
        ),
        (
            "long host",
            Box::new(move |v| v["host"] = json!(long_host.clone())),
            "a host that `run` refuses: host name 'hhhh",
        ),
        (
            "newline host",
            Box::new(|v| v["host"] = json!("a\nb")),
            "holds the character \\n",
        ),
        (
            "NUL host",
            Box::new(|v| v["host"] = json!("web\u{0}01")),
            "host holds a NUL character, which no store takes",
        ),
        (
            "NUL tag",
            Box::new(|v| v["tags"] = json!(["x\u{0}"])),
            "tags[0] holds a NUL character",
        ),
        (
            "NUL note",
            Box::new(|v| v["results"][3]["notes"] = json!(["a\u{0}b"])),
            "results[3].notes[0] holds a NUL character",
        ),
        (
            "NUL in the machine",
            Box::new(|v| v["machine"]["identity"]["model_name"] = json!("X\u{0}")),
            "machine.identity.model_name holds a NUL",
        ),
    ];
    cases
        .into_iter()
        .enumerate()
        .map(|(i, (name, f, says))| {
            let mut v = fixture();
            f(&mut v);
            // A new id: "already stored" is never the reason.
            v["id"] = json!(unique_id("rule", i));
            (name, v, says.to_string())
        })
        .collect()
}

/// Import every bad document into `store` (holding the good run): each is
/// refused with one line, and the store's runs stay as they were. Returns
/// the error lines.
fn refuse_all(store: &str, dir: &Path) -> Vec<String> {
    let cpuscope = |args: &[&str]| {
        bin::command()
            .arg("--store")
            .arg(store)
            .args(args)
            .output()
            .unwrap()
    };
    let mut good = fixture();
    good["id"] = serde_json::json!(unique_id("good", 0));
    let good_file = dir.join("good.json");
    std::fs::write(&good_file, good.to_string()).unwrap();
    let good_file = good_file.to_str().unwrap();
    let o = cpuscope(&["import", good_file]);
    assert!(o.status.success(), "{}", pg::text(&o));
    let before = String::from_utf8_lossy(&cpuscope(&["runs", "--json"]).stdout).into_owned();
    let mut lines = Vec::new();
    for (name, doc, says) in bad_documents() {
        let f = dir.join("bad.json");
        std::fs::write(&f, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        // The good document first: it must not be stored either.
        let mut fresh = good.clone();
        fresh["id"] = serde_json::json!(unique_id("fresh", 0));
        let ok = dir.join("fresh.json");
        std::fs::write(&ok, fresh.to_string()).unwrap();
        let o = cpuscope(&["import", ok.to_str().unwrap(), f.to_str().unwrap()]);
        let e = cli::one_line_error(&o);
        assert!(e.contains(&says), "{name}: {e}");
        assert!(e.len() < 400, "{name}: {e}");
        let after = String::from_utf8_lossy(&cpuscope(&["runs", "--json"]).stdout).into_owned();
        assert_eq!(after, before, "{name} changed the store");
        lines.push(e.replace(&f.display().to_string(), "FILE"));
    }
    lines
}

#[test]
fn import_applies_runs_tag_and_host_rules_in_sqlite() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    refuse_all(db.to_str().unwrap(), dir.path());
    // A host name the kernel gives (not a --host-label) still imports, and
    // what export writes imports again.
    let mut v = fixture();
    v["host"] = serde_json::json!("Büro_01");
    v["id"] = serde_json::json!("20261125T124517Z-buero-0001");
    let f = dir.path().join("ok.json");
    std::fs::write(&f, v.to_string()).unwrap();
    let o = bin::with_store(&db, &["import", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", pg::text(&o));
    let out = dir.path().join("back.json");
    let o = bin::with_store(
        &db,
        &[
            "export",
            "20261125T124517Z-buero-0001",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", pg::text(&o));
    let o = bin::with_store(dir.path().join("t.db"), &["import", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", pg::text(&o));
}

#[test]
fn import_rules_are_the_same_for_postgresql() {
    let _serial = serial();
    let srv = match pg::server() {
        Ok(s) => s,
        Err(why) => {
            skip::skip_or_fail(&format!("no PostgreSQL server: {why}"));
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let lite = refuse_all(db.to_str().unwrap(), dir.path());
    let pg = refuse_all(&srv.url, dir.path());
    assert_eq!(
        lite, pg,
        "each store refuses each document with the same line"
    );
}

// ------------------------------------------- the temporary file on a signal

/// A store holding one run whose document is about 30 MB (a long note), so
/// that writing it takes a while; returns (store, run id).
fn big_run(dir: &Path) -> (PathBuf, String) {
    let mut v = fixture();
    let id = "20261125T124517Z-big-0001";
    v["id"] = serde_json::json!(id);
    v["results"][0]["notes"] = serde_json::json!(["n".repeat(30_000_000)]);
    let f = dir.join("big-run.json");
    std::fs::write(&f, v.to_string()).unwrap();
    let db = dir.join("s.db");
    let o = bin::with_store(&db, &["import", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", pg::text(&o));
    std::fs::remove_file(&f).unwrap();
    (db, id.to_string())
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".out.json.cpuscope-"))
        .collect()
}

/// Start `export -o DIR/out.json` and stop it (SIGSTOP) the moment its
/// temporary file appears (inotify); None if it finished first.
fn export_caught(db: &Path, id: &str, dir: &Path, nohup: bool) -> Option<std::process::Child> {
    let c = CString::new(dir.as_os_str().as_bytes()).unwrap();
    // SAFETY: plain syscalls on our own descriptor and a valid path.
    let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
    assert!(fd >= 0);
    assert!(unsafe { libc::inotify_add_watch(fd, c.as_ptr(), libc::IN_CREATE) } >= 0);
    let mut cmd = bin::command();
    cmd.arg("--store")
        .arg(db)
        .args(["export", id, "-o"])
        .arg(dir.join("out.json"))
        .stderr(Stdio::piped());
    // SIGHUP ignored as `nohup` leaves it, or at its default whatever this
    // test was started with (under `nohup` the child would inherit it
    // ignored, and go on writing).
    let hup = if nohup { libc::SIG_IGN } else { libc::SIG_DFL };
    // SAFETY: signal(2) is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGHUP, hup);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    let caught = loop {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut p, 1, 50) } > 0 {
            let mut buf = [0u8; 4096];
            // SAFETY: reading into our buffer.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n > 0
                && buf[..n as usize]
                    .windows(19)
                    .any(|w| w == b".out.json.cpuscope-")
            {
                let pid = child.id() as i32;
                // SAFETY: our own child.
                unsafe { libc::kill(pid, libc::SIGSTOP) };
                // A stop is asynchronous: wait until it has stopped, then
                // check it had not renamed its file yet (else try again).
                let mut st = 0;
                // SAFETY: our own child; a stop report does not reap it.
                let r = unsafe { libc::waitpid(pid, &mut st, libc::WUNTRACED) };
                if r == pid && libc::WIFSTOPPED(st) && temp_files(dir).len() == 1 {
                    break true;
                }
                if r == pid && libc::WIFSTOPPED(st) {
                    // SAFETY: our own (stopped) child.
                    unsafe { libc::kill(pid, libc::SIGCONT) };
                }
                break false;
            }
        }
        if child.try_wait().unwrap().is_some() || start.elapsed() > DEADLINE {
            break false;
        }
    };
    // SAFETY: our own descriptor.
    unsafe { libc::close(fd) };
    if caught {
        Some(child)
    } else {
        let _ = child.kill();
        let _ = child.wait();
        None
    }
}

/// Export, catch the temporary file, send `signals`, let it go on: the
/// temporary file is gone and out.json is as it was. Returns the output.
fn signalled_export(db: &Path, id: &str, signals: &[i32]) -> Output {
    signalled_export_as(db, id, signals, false)
}

/// [`signalled_export`], SIGHUP ignored as `nohup` starts a command if
/// `nohup`: then the write goes on to its end.
fn signalled_export_as(db: &Path, id: &str, signals: &[i32], nohup: bool) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    for _ in 0..5 {
        // Each try from the same start: a try whose export ran to its end
        // before it was caught replaced out.json (and one killed at the
        // deadline may have left its temporary file).
        for t in temp_files(&out_dir) {
            std::fs::remove_file(out_dir.join(t)).unwrap();
        }
        std::fs::write(out_dir.join("out.json"), "old\n").unwrap();
        let Some(child) = export_caught(db, id, &out_dir, nohup) else {
            continue;
        };
        assert_eq!(
            temp_files(&out_dir).len(),
            1,
            "the temporary file is there while it writes"
        );
        for &s in signals {
            // To the main thread, as the kernel would pick it for a Ctrl-C:
            // under qemu-user (the aarch64 tests) a process-wide kill lets
            // the second signal land on the idle backstop thread, whose
            // emulated handler can run after the main thread has exited 1.
            // SAFETY: our own (stopped) child; its pid is its main thread.
            unsafe {
                libc::syscall(
                    libc::SYS_tgkill,
                    child.id() as libc::c_long,
                    child.id() as libc::c_long,
                    s as libc::c_long,
                )
            };
        }
        // SAFETY: our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGCONT) };
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            temp_files(&out_dir),
            Vec::<String>::new(),
            "no temporary file is left"
        );
        let now = std::fs::read(out_dir.join("out.json")).unwrap();
        assert_eq!(
            now == b"old\n",
            !nohup,
            "out.json is replaced only when nothing stopped the write"
        );
        return out;
    }
    panic!("export finished before its temporary file could be caught, five times");
}

#[test]
fn a_signal_during_export_removes_the_temporary_file() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (db, id) = big_run(dir.path());
    // SIGHUP (a closed terminal) is a stop signal like the other two.
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let out = signalled_export(&db, &id, &[sig]);
        let e = cli::one_line_error(&out);
        assert!(
            e.contains("out.json': interrupted by a signal (it is unchanged)"),
            "{e}"
        );
    }
    // A second signal exits at once (130): the handler removed the file first.
    let out = signalled_export(&db, &id, &[libc::SIGINT, libc::SIGTERM]);
    assert_eq!(out.status.code(), Some(130), "{}", pg::text(&out));
    // Under nohup, SIGHUP stays ignored: the export goes on and writes.
    let out = signalled_export_as(&db, &id, &[libc::SIGHUP], true);
    assert!(out.status.success(), "{}", pg::text(&out));
}
