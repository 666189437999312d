//! Unit tests of `archive` (beside it, to keep the module readable).

use super::*;

/// A raw entry: (name bytes, type, link target, data).
type Raw<'a> = (&'a [u8], tar::EntryType, &'a [u8], &'a [u8]);

/// An archive from raw entries, as a hostile tool could write it.
fn raw_archive(entries: &[Raw]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    for (name, kind, link, data) in entries {
        let mut h = tar::Header::new_old();
        h.as_old_mut().name[..name.len()].copy_from_slice(name);
        h.as_old_mut().linkname[..link.len()].copy_from_slice(link);
        h.set_entry_type(*kind);
        h.set_mode(0o644);
        h.set_size(data.len() as u64);
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    b.into_inner().unwrap().finish().unwrap()
}

fn extract_bytes(bytes: &[u8]) -> Result<TempTree> {
    let d = std::env::temp_dir().join(format!("cpuscope-archive-test-{}", random_hex()));
    std::fs::write(&d, bytes).unwrap();
    let r = extract(&d);
    let _ = std::fs::remove_file(&d);
    r
}

const CPU: &[u8] = b"sys/devices/system/cpu/online";

#[test]
fn a_written_archive_reads_back_with_links() {
    let mut w = Writer::default();
    w.dir(Path::new("sys/devices/system/cpu")).unwrap();
    w.file(Path::new("sys/devices/system/cpu/online"), b"0-3\n")
        .unwrap();
    let long = "sys/devices/".to_string() + &"x".repeat(150) + "/numa_node";
    w.file(Path::new(&long), b"0\n").unwrap();
    w.link(
        Path::new("sys/class/net/eth0"),
        Path::new(&format!("../../devices/{}", "x".repeat(150))),
    )
    .unwrap();
    let bytes = w.finish(Path::new("manifest.json"), b"{}").unwrap();
    let t = extract_bytes(&bytes).unwrap();
    let root = t.path().to_path_buf();
    assert_eq!(
        std::fs::read_to_string(root.join("sys/devices/system/cpu/online")).unwrap(),
        "0-3\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("sys/class/net/eth0/numa_node")).unwrap(),
        "0\n"
    );
    let mode = std::fs::metadata(&root).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    drop(t);
    assert!(!root.exists(), "the temporary tree is removed");
}

#[test]
fn caps_refuse_more() {
    let mut w = Writer::with_caps(2, 10);
    w.file(Path::new("a"), b"12345").unwrap();
    assert!(matches!(
        w.file(Path::new("b"), b"123456"),
        Err(Refused::Full(_))
    ));
    w.dir(Path::new("d")).unwrap();
    let e = w.dir(Path::new("e")).unwrap_err().to_string();
    assert!(e.contains("2 entries"), "{e}");
    // What extract refuses, the writer refuses: a name past PATH_MAX.
    let mut w = Writer::default();
    let long = "d/".repeat(2048);
    let e = w.file(Path::new(&long), b"x").unwrap_err();
    assert!(matches!(e, Refused::Io(_)), "{e}");
    assert!(e.to_string().contains("longer than PATH_MAX"), "{e}");
    w.link(Path::new(&"l".repeat(200)), Path::new(&"t".repeat(300)))
        .unwrap();
    assert_eq!(w.header_bytes, 201 + 301);
}

#[test]
fn hostile_entries_are_refused() {
    let cases: Vec<(Vec<Raw>, &str)> = vec![
        (vec![(b"../x", tar::EntryType::Regular, b"", b"x")], "'..'"),
        (
            vec![(b"/tmp/x", tar::EntryType::Regular, b"", b"x")],
            "absolute path",
        ),
        (
            vec![(b"sys/a/../../x", tar::EntryType::Regular, b"", b"x")],
            "'..'",
        ),
        (
            vec![(b"sys/l", tar::EntryType::Symlink, b"/etc", b"")],
            "absolute path",
        ),
        (
            vec![(b"sys/l", tar::EntryType::Symlink, b"../../etc", b"")],
            "leads out",
        ),
        // Lexically inside, but `up` is the root itself: `up/..` leaves it.
        (
            vec![
                (b"sys/up", tar::EntryType::Symlink, b"..", b""),
                (b"sys/out", tar::EntryType::Symlink, b"up/../x", b""),
            ],
            "leads out",
        ),
        (
            vec![
                (b"sys/l", tar::EntryType::Symlink, b"..", b""),
                (b"sys/l/x", tar::EntryType::Regular, b"", b"x"),
            ],
            "not a directory",
        ),
        (
            vec![(b"sys/loop", tar::EntryType::Symlink, b"loop", b"")],
            "loop",
        ),
        (
            vec![(b"sys/h", tar::EntryType::Link, CPU, b"")],
            "hard link",
        ),
        (vec![(b"sys/f", tar::EntryType::Fifo, b"", b"")], "FIFO"),
        (
            vec![
                (CPU, tar::EntryType::Regular, b"", b"0"),
                (CPU, tar::EntryType::Regular, b"", b"1"),
            ],
            "twice",
        ),
    ];
    for (entries, want) in cases {
        let e = extract_bytes(&raw_archive(&entries))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{want}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    let e = extract_bytes(b"not gzip at all").unwrap_err().to_string();
    assert!(e.contains("not a gzip'd tar archive"), "{e}");
    let e = extract_bytes(&[0x1f, 0x8b, 0, 1, 2])
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a readable tar.gz"), "{e}");
}

#[test]
fn long_names_and_pax_records_are_read_within_their_caps() {
    let long = b"sys/devices/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/online\0";
    let pax = b"31 path=sys/devices/pax/online\n26 linkpath=../cpu/online\n";
    let t = extract_bytes(&raw_archive(&[
        (b"././@LongLink", tar::EntryType::GNULongName, b"", long),
        (b"x", tar::EntryType::Regular, b"", b"1\n"),
        (b"PaxHeaders/x", tar::EntryType::XHeader, b"", pax),
        (b"y", tar::EntryType::Symlink, b"nowhere", b""),
        (
            b"sys/devices/cpu/online",
            tar::EntryType::Regular,
            b"",
            b"0-1\n",
        ),
    ]))
    .unwrap();
    let name = std::str::from_utf8(&long[..long.len() - 1]).unwrap();
    assert_eq!(std::fs::read(t.path().join(name)).unwrap(), b"1\n");
    let l = t.path().join("sys/devices/pax/online");
    assert_eq!(std::fs::read_link(&l).unwrap(), Path::new("../cpu/online"));
    assert_eq!(std::fs::read(&l).unwrap(), b"0-1\n");
}

/// Extension headers larger than their limit: (entries, words of the refusal).
fn oversized_header_cases<'a>(name: &'a [u8], pax: &'a [u8]) -> Vec<(Vec<Raw<'a>>, &'static str)> {
    vec![
        (
            vec![(b"././@LongLink", tar::EntryType::GNULongName, b"", name)],
            "holds 4097 bytes, more than 4096 bytes (PATH_MAX)",
        ),
        (
            vec![(b"././@LongLink", tar::EntryType::GNULongLink, b"", name)],
            "a GNU long link target) holds 4097 bytes",
        ),
        (
            vec![(b"PaxHeaders/x", tar::EntryType::XHeader, b"", pax)],
            "a PAX extended header) holds 1048577 bytes, more than 1 MiB",
        ),
        (
            vec![(
                b"pax_global_header",
                tar::EntryType::XGlobalHeader,
                b"",
                pax,
            )],
            "a PAX global header) holds 1048577 bytes",
        ),
    ]
}

/// Extension headers that are out of place or say what a recorded tree
/// never holds, and other GNU extensions: (entries, words of the refusal).
fn misplaced_header_cases(name: &[u8]) -> Vec<(Vec<Raw<'_>>, &'static str)> {
    vec![
        (
            vec![
                (b"././@LongLink", tar::EntryType::GNULongName, b"", b"a"),
                (b"././@LongLink", tar::EntryType::GNULongName, b"", b"b"),
            ],
            "header #2 ('././@LongLink', a GNU long name): a second one",
        ),
        (
            vec![(b"././@LongLink", tar::EntryType::GNULongName, b"", b"a")],
            "describes an entry that is not there",
        ),
        (
            vec![
                (b"P", tar::EntryType::XHeader, b"", b"9 size=9\n"),
                (b"f", tar::EntryType::Regular, b"", b"x"),
            ],
            "a PAX size (9 bytes)",
        ),
        (
            vec![
                (
                    b"P",
                    tar::EntryType::XHeader,
                    b"",
                    b"22 GNU.sparse.major=1\n",
                ),
                (b"f", tar::EntryType::Regular, b"", b"x"),
            ],
            "sparse file",
        ),
        (
            vec![(b"P", tar::EntryType::XHeader, b"", b"99 path=x\n")],
            "malformed record",
        ),
        (
            vec![
                (b"././@LongLink", tar::EntryType::GNULongName, b"", b"a\0b"),
                (b"f", tar::EntryType::Regular, b"", b"x"),
            ],
            "NUL byte in its name",
        ),
        // Other GNU extensions: refused from the header, nothing read.
        (
            vec![(b"s", tar::EntryType::GNUSparse, b"", name)],
            "entry 's' is a sparse file",
        ),
        (
            vec![(b"v", tar::EntryType::new(b'V'), b"", name)],
            "entry 'v' is an entry of an unknown kind",
        ),
    ]
}

#[test]
fn oversized_headers_are_refused_before_they_are_read() {
    let name = vec![b'a'; MAX_NAME_BYTES as usize + 1];
    let pax = vec![b'\n'; MAX_PAX_BYTES as usize + 1];
    let mut cases = oversized_header_cases(&name, &pax);
    cases.extend(misplaced_header_cases(&name));
    for (entries, want) in cases {
        let e = extract_bytes(&raw_archive(&entries))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{want}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn links_resolve_through_links_like_the_kernel() {
    let d = TempTree::new("cpuscope-archive-test-").unwrap();
    let r = d.path();
    std::fs::create_dir_all(r.join("sys/devices/pci/0000:00:03.0/virtio2/net/eth0")).unwrap();
    std::fs::create_dir_all(r.join("sys/class/net")).unwrap();
    std::os::unix::fs::symlink(
        "../../devices/pci/0000:00:03.0/virtio2/net/eth0",
        r.join("sys/class/net/eth0"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "../../../virtio2",
        r.join("sys/devices/pci/0000:00:03.0/virtio2/net/eth0/device"),
    )
    .unwrap();
    // A link met inside another link's path.
    std::os::unix::fs::symlink("class/net/eth0/device/..", r.join("sys/pcidev")).unwrap();
    let mut met = Vec::new();
    let c: Vec<OsString> = ["sys", "pcidev"].iter().map(OsString::from).collect();
    let got = follow_link(r, &c, &mut 0, &mut |l, t| {
        met.push((shown(l), t.display().to_string()))
    })
    .unwrap();
    let want: Vec<OsString> = ["sys", "devices", "pci", "0000:00:03.0"]
        .iter()
        .map(OsString::from)
        .collect();
    assert_eq!(got, Resolved::Inside(want));
    assert_eq!(
        met.iter().map(|(l, _)| l.as_str()).collect::<Vec<_>>(),
        vec![
            "sys/class/net/eth0",
            "sys/devices/pci/0000:00:03.0/virtio2/net/eth0/device",
            "sys/pcidev"
        ]
    );
    assert!(check_links(r).is_ok());
}
