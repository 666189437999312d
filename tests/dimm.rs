//! SMBIOS type 17 (Memory Device) DIMMs: raw structures built in code after
//! the DSP0134 layout, parsed, summarized, and read from fake sysroots.

#[path = "common/bin.rs"]
mod bin;
use cpuscope::base::Sysroot;
use cpuscope::machine::dimm::{self, Dimm};
use std::fs;
use std::path::Path;

const GIB: u64 = 1 << 30;

/// The fields of one type 17 structure, as firmware writes them.
#[derive(Clone)]
struct T17 {
    len: u8,
    handle: u16,
    total_width: u16,
    data_width: u16,
    size: u16,
    form: u8,
    locator: &'static str,
    bank: &'static str,
    mem_type: u8,
    speed: u16,
    manufacturer: &'static str,
    part: &'static str,
    attributes: u8,
    ext_size: u32,
    conf_speed: u16,
    ext_speed: u32,
    ext_conf_speed: u32,
}

impl Default for T17 {
    fn default() -> Self {
        T17 {
            len: 0x5C, // SMBIOS 3.3+
            handle: 0x1100,
            total_width: 72,
            data_width: 64,
            // 32 GiB does not fit Size (at most 32767 MiB; 0x8000 would
            // mean KiB granularity): 0x7FFF and Extended Size, as firmware does.
            size: 0x7FFF,
            form: 0x09, // DIMM
            locator: "DIMM 0",
            bank: "BANK 0",
            mem_type: 0x1A, // DDR4
            speed: 3200,
            manufacturer: "Samsung",
            part: "M393A4K40DB3-CWE",
            attributes: 2,
            ext_size: 32768, // MiB
            conf_speed: 3200,
            ext_speed: 0,
            ext_conf_speed: 0,
        }
    }
}

/// The raw bytes: formatted area of `len` bytes, then the string set
/// (locator, bank, manufacturer, serial, asset tag, part), double NUL.
fn raw(t: &T17) -> Vec<u8> {
    let mut r = vec![0u8; 0x5C];
    r[0] = 17;
    r[1] = t.len;
    r[2..4].copy_from_slice(&t.handle.to_le_bytes());
    r[4..6].copy_from_slice(&0x1000u16.to_le_bytes()); // Physical Memory Array
    r[6..8].copy_from_slice(&0xFFFEu16.to_le_bytes()); // no error information
    r[8..10].copy_from_slice(&t.total_width.to_le_bytes());
    r[0x0A..0x0C].copy_from_slice(&t.data_width.to_le_bytes());
    r[0x0C..0x0E].copy_from_slice(&t.size.to_le_bytes());
    r[0x0E] = t.form;
    r[0x12] = t.mem_type;
    r[0x13..0x15].copy_from_slice(&0x0080u16.to_le_bytes()); // Synchronous
    r[0x15..0x17].copy_from_slice(&t.speed.to_le_bytes());
    r[0x1B] = t.attributes;
    r[0x1C..0x20].copy_from_slice(&t.ext_size.to_le_bytes());
    r[0x20..0x22].copy_from_slice(&t.conf_speed.to_le_bytes());
    r[0x54..0x58].copy_from_slice(&t.ext_speed.to_le_bytes());
    r[0x58..0x5C].copy_from_slice(&t.ext_conf_speed.to_le_bytes());
    // Strings, numbered from 1 in order of use; an empty one is number 0.
    let mut strings: Vec<&str> = Vec::new();
    for (off, s) in [
        (0x10, t.locator),
        (0x11, t.bank),
        (0x17, t.manufacturer),
        (0x18, "12345678"),
        (0x19, "Not Specified"),
        (0x1A, t.part),
    ] {
        if !s.is_empty() {
            strings.push(s);
            r[off] = strings.len() as u8;
        }
    }
    r.truncate(t.len as usize);
    for s in &strings {
        r.extend_from_slice(s.as_bytes());
        r.push(0);
    }
    if strings.is_empty() {
        r.push(0);
    }
    r.push(0);
    r
}

fn parse(t: &T17) -> Dimm {
    dimm::parse(&raw(t)).unwrap()
}

/// A sysroot holding `sys/firmware/dmi/entries/17-N/raw` for each structure.
fn root_with(structs: &[T17]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    fs::create_dir_all(r.join("sys/devices/system/cpu/cpu0")).unwrap();
    // Other types beside, as the kernel lists them.
    write_entry(r, "0-0", &[0, 0x18, 0, 0, 0, 0]);
    write_entry(r, "16-0", &[16, 0x17, 0, 0x10, 0, 0]);
    for (i, t) in structs.iter().enumerate() {
        write_entry(r, &format!("17-{i}"), &raw(t));
    }
    d
}

fn write_entry(r: &Path, name: &str, bytes: &[u8]) {
    let dir = r.join("sys/firmware/dmi/entries").join(name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("raw"), bytes).unwrap();
}

fn read(structs: &[T17]) -> dimm::MemoryDevices {
    let d = root_with(structs);
    dimm::read(&Sysroot::new(d.path()).unwrap())
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// 2 sockets × 4 channels A-D, one DDR4-3200 32 GiB RDIMM each.
fn server_ddr4_8ch() -> Vec<T17> {
    let mut v = Vec::new();
    for cpu in 0..2 {
        for ch in ['A', 'B', 'C', 'D'] {
            v.push(T17 {
                handle: 0x1100 + v.len() as u16,
                locator: leak(format!("CPU{cpu}_DIMM_{ch}1")),
                bank: leak(format!("NODE {cpu}")),
                ..T17::default()
            });
        }
    }
    v
}

/// One socket, 12 channels DDR5-4800, 64 GiB, AMD-style bank locators.
fn server_ddr5_12ch() -> Vec<T17> {
    (0..12u8)
        .map(|i| T17 {
            handle: 0x1200 + i as u16,
            total_width: 80,
            data_width: 64,
            size: 0x7FFF, // 64 GiB through Extended Size
            ext_size: 65536,
            locator: leak(format!("DIMM {}", i)),
            bank: leak(format!("P0 CHANNEL {}", (b'A' + i) as char)),
            mem_type: 0x22,
            speed: 4800,
            conf_speed: 4800,
            manufacturer: "SK Hynix",
            part: "HMCG94AEBRA109N",
            attributes: 2,
            ..T17::default()
        })
        .collect()
}

// ---------------------------------------------------------------- parsing

#[test]
fn ddr4_server_dimm_every_field() {
    let v = server_ddr4_8ch();
    let d = parse(&v[5]);
    assert_eq!(d.handle, 0x1105);
    assert_eq!(d.locator.as_deref(), Some("CPU1_DIMM_B1"));
    assert_eq!(d.bank_locator.as_deref(), Some("NODE 1"));
    assert!(!d.empty);
    assert!(d.populated());
    assert_eq!(d.size_bytes, Some(32 * GIB));
    assert_eq!(d.form_factor.as_deref(), Some("DIMM"));
    assert_eq!(d.memory_type.as_deref(), Some("DDR4"));
    assert_eq!(d.speed_mts, Some(3200));
    assert_eq!(d.configured_speed_mts, Some(3200));
    assert_eq!(d.data_width_bits, Some(64));
    assert_eq!(d.total_width_bits, Some(72));
    assert_eq!(d.rank, Some(2));
    assert_eq!(d.manufacturer.as_deref(), Some("Samsung"));
    assert_eq!(d.part_number.as_deref(), Some("M393A4K40DB3-CWE"));
    assert_eq!(d.channel.as_deref(), Some("socket 1 node 1 channel B"));
}

#[test]
fn balanced_ddr4_8_channels() {
    let m = read(&server_ddr4_8ch());
    assert_eq!(m.unavailable, None);
    assert_eq!(m.dimms.len(), 8);
    assert_eq!(m.dimms[0].entry, "17-0");
    assert_eq!(m.dimms[7].locator.as_deref(), Some("CPU1_DIMM_D1"));
    let s = &m.summary;
    assert_eq!((s.slots, s.populated, s.empty), (8, 8, 0));
    assert_eq!(s.total_bytes, 256 * GIB);
    assert_eq!(s.sizes, vec![32 * GIB]);
    assert_eq!(s.speeds_mts, vec![3200]);
    assert_eq!(s.types, vec!["DDR4".to_string()]);
    assert_eq!(s.balance_note, None);
    let b = m.theoretical_bandwidth.unwrap();
    assert_eq!(b.channels, 8);
    assert!(b.channels_from_locators && !b.upper_bound);
    // 8 × 3200 MT/s × 8 B = 204.8 GB/s
    assert!((b.gbs - 204.8).abs() < 1e-9, "{}", b.gbs);
    assert!(m.notes.is_empty(), "{:?}", m.notes);
}

#[test]
fn ddr5_12_channels_extended_size() {
    let m = read(&server_ddr5_12ch());
    assert_eq!(m.dimms.len(), 12);
    let d = &m.dimms[11];
    assert_eq!(d.size_bytes, Some(64 * GIB));
    assert_eq!(d.memory_type.as_deref(), Some("DDR5"));
    assert_eq!(d.total_width_bits, Some(80));
    assert_eq!(d.bank_locator.as_deref(), Some("P0 CHANNEL L"));
    assert_eq!(d.channel.as_deref(), Some("socket 0 channel L"));
    assert_eq!(d.manufacturer.as_deref(), Some("SK Hynix"));
    assert_eq!(m.summary.total_bytes, 768 * GIB);
    assert_eq!(m.summary.balance_note, None);
    let b = m.theoretical_bandwidth.unwrap();
    assert_eq!(b.channels, 12);
    // 12 × 4800 × 8 / 1000 = 460.8 GB/s
    assert!((b.gbs - 460.8).abs() < 1e-9, "{}", b.gbs);
    assert_eq!(dimm::theoretical_bandwidth_gbs(&m.dimms), Some(b.gbs));
}

#[test]
fn empty_slot_counts_and_note() {
    let mut v = server_ddr4_8ch();
    v[3].size = 0;
    v[3].manufacturer = "NO DIMM";
    v[3].part = "NO DIMM";
    v[3].speed = 0;
    v[3].conf_speed = 0;
    v[3].mem_type = 0x02; // Unknown
    v[7].size = 0;
    let m = read(&v);
    let e = &m.dimms[3];
    assert!(e.empty && !e.populated());
    assert_eq!(e.size_bytes, None);
    assert_eq!(e.locator.as_deref(), Some("CPU0_DIMM_D1"));
    assert_eq!(e.manufacturer, None);
    assert_eq!(e.speed_mts, None);
    assert_eq!(e.memory_type, None);
    // Other fields of an empty slot are dropped, even when firmware filled them.
    assert_eq!(m.dimms[7].memory_type, None);
    let s = &m.summary;
    assert_eq!((s.slots, s.populated, s.empty), (8, 6, 2));
    assert_eq!(s.total_bytes, 192 * GIB);
    assert_eq!(s.balance_note.as_deref(), Some("2 of 8 slots empty"));
    let b = m.theoretical_bandwidth.unwrap();
    assert_eq!(b.channels, 6);
    assert!((b.gbs - 153.6).abs() < 1e-9);
}

#[test]
fn mixed_speeds_and_sizes() {
    let mut v = server_ddr4_8ch();
    v[1].size = 16384;
    v[1].speed = 2933;
    v[1].conf_speed = 2933;
    v[2].conf_speed = 2933; // a 3200 DIMM run at 2933
    let m = read(&v);
    assert_eq!(m.dimms[2].speed_mts, Some(3200));
    assert_eq!(m.dimms[2].configured_speed_mts, Some(2933));
    let s = &m.summary;
    assert_eq!(s.sizes, vec![32 * GIB, 16 * GIB]);
    assert_eq!(s.speeds_mts, vec![3200, 2933]);
    assert_eq!(s.total_bytes, 240 * GIB);
    assert_eq!(
        s.balance_note.as_deref(),
        Some("mixed sizes 32 GiB and 16 GiB; mixed speeds 3200 and 2933 MT/s")
    );
    let b = m.theoretical_bandwidth.unwrap();
    let want = (6.0 * 3200.0 + 2.0 * 2933.0) * 8.0 / 1000.0;
    assert!((b.gbs - want).abs() < 1e-9, "{} vs {want}", b.gbs);
}

#[test]
fn extended_size_and_extended_speeds() {
    let t = T17 {
        size: 0x7FFF,
        ext_size: 256 * 1024, // 256 GiB in MiB
        speed: 0xFFFF,
        ext_speed: 70000,
        conf_speed: 0xFFFF,
        ext_conf_speed: 68000,
        mem_type: 0x22,
        attributes: 0x24, // rank 4, upper bits ignored
        ..T17::default()
    };
    let d = parse(&t);
    assert_eq!(d.size_bytes, Some(256 * GIB));
    assert_eq!(d.speed_mts, Some(70000));
    assert_eq!(d.configured_speed_mts, Some(68000));
    assert_eq!(d.rank, Some(4));
    assert_eq!(d.effective_speed_mts(), Some(68000));
}

#[test]
fn older_smbios_lengths_and_unknowns() {
    // SMBIOS 2.3 (length 0x1B): no rank, no configured speed, no extended size.
    let d = parse(&T17 {
        len: 0x1B,
        size: 0x8000 | 512, // 512 KiB granularity
        ..T17::default()
    });
    assert_eq!(d.size_bytes, Some(512 * 1024));
    assert_eq!(d.speed_mts, Some(3200));
    assert_eq!(d.configured_speed_mts, None);
    assert_eq!(d.rank, None);
    assert_eq!(d.part_number.as_deref(), Some("M393A4K40DB3-CWE"));
    // SMBIOS 2.1 (length 0x15): no speed, no manufacturer.
    let d = parse(&T17 {
        len: 0x15,
        ..T17::default()
    });
    assert_eq!(d.speed_mts, None);
    assert_eq!(d.manufacturer, None);
    assert_eq!(d.locator.as_deref(), Some("DIMM 0"));
    // Unknown values.
    let d = parse(&T17 {
        size: 0xFFFF,
        total_width: 0xFFFF,
        data_width: 0xFFFF,
        mem_type: 0x02,
        form: 0x02,
        speed: 0,
        conf_speed: 0,
        attributes: 0,
        manufacturer: "Not Specified",
        ..T17::default()
    });
    assert!(!d.empty);
    assert_eq!(
        (d.size_bytes, d.total_width_bits, d.data_width_bits, d.rank),
        (None, None, None, None)
    );
    assert_eq!((d.memory_type, d.form_factor), (None, None));
    assert_eq!((d.speed_mts, d.configured_speed_mts), (None, None));
    assert_eq!(d.manufacturer, None);
}

#[test]
fn channels_not_derivable_give_an_upper_bound() {
    let v: Vec<T17> = (0..4)
        .map(|i| T17 {
            locator: leak(format!("DIMM {i}")),
            bank: leak(format!("BANK {i}")),
            ..T17::default()
        })
        .collect();
    let m = read(&v);
    assert!(m.dimms.iter().all(|d| d.channel.is_none()));
    let b = m.theoretical_bandwidth.unwrap();
    assert!(b.upper_bound && !b.channels_from_locators);
    assert_eq!(b.channels, 4);
    assert!((b.gbs - 102.4).abs() < 1e-9);
    assert!(b.basis.contains("upper bound"), "{}", b.basis);
    assert!(
        b.basis.contains("one channel assumed per DIMM"),
        "{}",
        b.basis
    );
}

#[test]
fn two_dimms_per_channel_count_once() {
    let v: Vec<T17> = ["A1", "A2", "B1", "B2"]
        .iter()
        .map(|l| T17 {
            locator: leak(format!("DIMM_{l}")),
            conf_speed: 2933,
            ..T17::default()
        })
        .collect();
    let b = read(&v).theoretical_bandwidth.unwrap();
    assert_eq!(b.channels, 2);
    assert!(!b.upper_bound);
    assert!((b.gbs - 2.0 * 2933.0 * 8.0 / 1000.0).abs() < 1e-9);
}

#[test]
fn qemu_dimm_is_flagged_as_invented() {
    let m = read(&[T17 {
        locator: "DIMM 0",
        bank: "",
        manufacturer: "QEMU",
        part: "",
        speed: 0,
        conf_speed: 0,
        mem_type: 0x07, // RAM
        size: 8192,
        total_width: 0xFFFF,
        data_width: 0xFFFF,
        attributes: 0,
        ..T17::default()
    }]);
    assert_eq!(m.dimms.len(), 1);
    assert_eq!(m.dimms[0].memory_type.as_deref(), Some("RAM"));
    assert_eq!(m.summary.total_bytes, 8 * GIB);
    assert_eq!(m.theoretical_bandwidth, None);
    assert!(
        m.notes
            .iter()
            .any(|n| n.contains("invented by a hypervisor") && n.contains("QEMU")),
        "{:?}",
        m.notes
    );
}

// ---------------------------------------------------------------- absent

#[test]
fn no_dmi_directory_gives_the_reason() {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("sys/devices/system/cpu/cpu0")).unwrap();
    let m = dimm::read(&Sysroot::new(d.path()).unwrap());
    assert!(m.dimms.is_empty());
    let why = m.unavailable.unwrap();
    assert!(why.contains("no SMBIOS tables"), "{why}");
    // DMI identity present but no raw entries: the kernel option is named.
    fs::create_dir_all(d.path().join("sys/class/dmi/id")).unwrap();
    let why = dimm::read(&Sysroot::new(d.path()).unwrap())
        .unavailable
        .unwrap();
    assert!(why.contains("CONFIG_DMI_SYSFS"), "{why}");
    // Entries but no type 17.
    write_entry(d.path(), "0-0", &[0, 0x18, 0, 0]);
    let why = dimm::read(&Sysroot::new(d.path()).unwrap())
        .unavailable
        .unwrap();
    assert!(why.contains("no Memory Device"), "{why}");
}

#[test]
fn bad_entries_are_noted_and_skipped() {
    let d = root_with(&server_ddr4_8ch()[..2]);
    write_entry(d.path(), "17-2", &[17, 0x10, 0, 0]);
    let m = dimm::read(&Sysroot::new(d.path()).unwrap());
    assert_eq!(m.dimms.len(), 2);
    assert!(m.notes.iter().any(|n| n.starts_with("17-2 skipped")));
}

#[test]
fn entry_order_is_numeric() {
    let mut v = server_ddr4_8ch();
    v.extend(server_ddr4_8ch().into_iter().take(4));
    let m = read(&v);
    let names: Vec<&str> = m.dimms.iter().map(|d| d.entry.as_str()).collect();
    assert_eq!(names[..3], ["17-0", "17-1", "17-2"]);
    assert_eq!(names[10..], ["17-10", "17-11"]);
}

// ---------------------------------------------------------------- info

#[test]
fn info_text_and_json_carry_the_dimms() {
    let mut v = server_ddr4_8ch();
    v[7].size = 0;
    let d = root_with(&v);
    let out = bin::command()
        .args(["info", "--sysroot"])
        .arg(d.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("Memory devices (SMBIOS type 17)"), "{text}");
    assert!(text.contains("8 (7 populated, 1 empty)"), "{text}");
    assert!(text.contains("224 GiB"), "{text}");
    assert!(text.contains("7 × 32 GiB, DDR4, 3200 MT/s, 2R"), "{text}");
    assert!(text.contains("1 of 8 slots empty"), "{text}");
    assert!(text.contains("179.2 GB/s"), "{text}");
    let out = bin::command()
        .args(["info", "--json", "--sysroot"])
        .arg(d.path())
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &j["memory_devices"];
    assert_eq!(m["dimms"].as_array().unwrap().len(), 8);
    assert_eq!(m["summary"]["empty"], 1);
    assert_eq!(m["dimms"][0]["locator"], "CPU0_DIMM_A1");
    // Read back as the typed struct.
    let back: dimm::MemoryDevices = serde_json::from_value(m.clone()).unwrap();
    assert_eq!(back.summary.populated, 7);
}

#[test]
fn per_socket_bandwidth_and_the_cpus_behind_it() {
    // Two sockets of four DDR4-3200 channels: 102.4 GB/s each.
    let m = read(&server_ddr4_8ch());
    let b = m.theoretical_bandwidth.clone().unwrap();
    assert_eq!(b.per_socket.len(), 2, "{:?}", b.per_socket);
    for g in b.per_socket.values() {
        assert!((g - 102.4).abs() < 1e-9, "{g}");
    }
    // A machine of two packages (CPUs 0-3 and 4-7) with these DIMMs.
    let mut info: cpuscope::machine::MachineInfo = serde_json::from_value(serde_json::json!({
        "packages": [{"id": 0, "cpus": "0-3"}, {"id": 1, "cpus": "4-7"}]
    }))
    .unwrap();
    info.memory_devices = m;
    let set = |s: &str| cpuscope::base::CpuSet::parse(s).unwrap();
    use cpuscope::experiments::memory::bandwidth::dram_theory;
    let (all, basis) = dram_theory(&info, &set("0-7")).unwrap();
    assert!(
        (all - 204.8).abs() < 1e-9 && basis.contains("8 channel"),
        "{all} {basis}"
    );
    let (one, basis) = dram_theory(&info, &set("0-3")).unwrap();
    assert!(
        (one - 102.4).abs() < 1e-9 && basis.contains("1 socket"),
        "{one} {basis}"
    );
    // Locators that name no socket: a subset of the sockets cannot be priced.
    let mut plain = read(&server_ddr5_12ch());
    plain
        .theoretical_bandwidth
        .as_mut()
        .unwrap()
        .per_socket
        .clear();
    info.memory_devices = plain;
    let e = dram_theory(&info, &set("0-3")).unwrap_err();
    assert!(e.contains("1 of 2 sockets"), "{e}");
    // No DMI: the reason is kept.
    info.memory_devices = cpuscope::machine::dimm::MemoryDevices {
        unavailable: Some("no SMBIOS tables".into()),
        ..Default::default()
    };
    assert!(dram_theory(&info, &set("0-7"))
        .unwrap_err()
        .contains("no SMBIOS tables"));
}
