//! Memory devices (DIMMs) from the SMBIOS tables, read without dmidecode:
//! every `/sys/firmware/dmi/entries/17-*/raw` is one SMBIOS type 17
//! ("Memory Device") structure as the firmware wrote it.
//!
//! Layout (DMTF DSP0134, type 17; offsets from the start of the structure,
//! the version that added a field in brackets; a field is present only when
//! the structure's `length` reaches past it):
//!
//! | off | size | field |
//! |-----|------|-------|
//! | 00h | u8   | type (17) |
//! | 01h | u8   | length of the formatted area |
//! | 02h | u16  | handle |
//! | 04h | u16  | Physical Memory Array handle [2.1] |
//! | 08h | u16  | Total Width, bits (0xFFFF unknown) [2.1] |
//! | 0Ah | u16  | Data Width, bits (0xFFFF unknown) [2.1] |
//! | 0Ch | u16  | Size: 0 no module, 0xFFFF unknown, bit 15 set = KiB else MiB, 0x7FFF = see Extended Size [2.1] |
//! | 0Eh | u8   | Form Factor [2.1] |
//! | 10h | u8   | Device Locator (string number) [2.1] |
//! | 11h | u8   | Bank Locator (string number) [2.1] |
//! | 12h | u8   | Memory Type [2.1] |
//! | 15h | u16  | Speed, MT/s (0 unknown, 0xFFFF = see Extended Speed) [2.3] |
//! | 17h | u8   | Manufacturer (string) [2.3] |
//! | 1Ah | u8   | Part Number (string) [2.3] |
//! | 1Bh | u8   | Attributes: bits 0-3 rank (0 unknown) [2.6] |
//! | 1Ch | u32  | Extended Size, MiB (bits 0-30) [2.7] |
//! | 20h | u16  | Configured Memory Speed, MT/s (0 unknown, 0xFFFF = see extended) [2.7] |
//! | 54h | u32  | Extended Speed, MT/s [3.3] |
//! | 58h | u32  | Extended Configured Memory Speed, MT/s [3.3] |
//!
//! The formatted area is followed by its string set: NUL-terminated strings,
//! numbered from 1 (0 means "no string"), ending with an extra NUL.
//!
//! The raw files are readable by root only. In a virtual machine the table
//! is the hypervisor's invention (QEMU writes one "QEMU" DIMM of unknown
//! speed): [`read`] says so in a note.

use crate::base::fmt::fmt_bytes;
use crate::base::Sysroot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where the kernel exposes the SMBIOS structures, one directory each.
pub const DMI_ENTRIES: &str = "/sys/firmware/dmi/entries";
/// The reason given when the raw tables exist but this user may not read them.
pub const ROOT_ONLY: &str =
    "SMBIOS tables are readable by root only (/sys/firmware/dmi/entries/*/raw); run as root";

/// One SMBIOS type 17 Memory Device: a DIMM slot, populated or empty.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Dimm {
    /// The entry directory it was read from (`17-3`); empty for parsed bytes.
    pub entry: String,
    /// SMBIOS handle of the structure.
    pub handle: u16,
    /// Device Locator: the slot's silkscreen name (`CPU0_DIMM_A1`, `DIMM 0`).
    pub locator: Option<String>,
    /// Bank Locator (`P0 CHANNEL A`, `BANK 0`, `P0_Node0_Channel0_Dimm0`).
    pub bank_locator: Option<String>,
    /// True when the slot holds no module (Size 0).
    pub empty: bool,
    /// Module size in bytes; null when empty or unknown (0xFFFF).
    pub size_bytes: Option<u64>,
    /// `DIMM`, `SODIMM`, `Row Of Chips`...; null when unknown.
    pub form_factor: Option<String>,
    /// `DDR4`, `DDR5`, `LPDDR5`...; null when unknown or "Other".
    pub memory_type: Option<String>,
    /// Maximum (rated) speed in MT/s; null when unknown (0).
    pub speed_mts: Option<u64>,
    /// Speed the memory controller runs it at, MT/s; null when unknown or
    /// absent (SMBIOS < 2.7).
    pub configured_speed_mts: Option<u64>,
    /// Data width in bits (64 for a non-ECC DDR4/DDR5 DIMM); null when unknown.
    pub data_width_bits: Option<u32>,
    /// Total width in bits, ECC included (72 or 80 for ECC DIMMs).
    pub total_width_bits: Option<u32>,
    /// Ranks; null when unknown (0) or absent (SMBIOS < 2.6).
    pub rank: Option<u32>,
    pub manufacturer: Option<String>,
    pub part_number: Option<String>,
    /// The memory channel derived from the locators (see [`channel_of`]):
    /// `socket 0 channel A`; null when the locators do not name one.
    pub channel: Option<String>,
}

impl Dimm {
    /// The speed the DIMM runs at: configured speed, else its rated speed.
    pub fn effective_speed_mts(&self) -> Option<u64> {
        self.configured_speed_mts.or(self.speed_mts)
    }

    /// A slot with a module in it.
    pub fn populated(&self) -> bool {
        !self.empty
    }
}

/// Counts and distinct values over the slots.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DimmSummary {
    pub slots: usize,
    pub populated: usize,
    pub empty: usize,
    /// Sum of the known sizes of populated DIMMs.
    pub total_bytes: u64,
    /// Populated DIMMs whose size is unknown (not in `total_bytes`).
    pub unknown_size: usize,
    /// Distinct sizes of populated DIMMs, largest first.
    pub sizes: Vec<u64>,
    /// Distinct effective speeds (configured, else rated) in MT/s, fastest first.
    pub speeds_mts: Vec<u64>,
    /// Distinct memory types of populated DIMMs, sorted.
    pub types: Vec<String>,
    /// Empty slots or mixed sizes/speeds/types, in words; null when all
    /// slots are populated with alike DIMMs.
    pub balance_note: Option<String>,
}

/// The theoretical DRAM bandwidth of the populated DIMMs, see
/// [`theoretical_bandwidth`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TheoreticalBandwidth {
    /// Sum over channels of speed (MT/s) × data width (bytes) / 1000, in GB/s
    /// (10^9 bytes per second).
    pub gbs: f64,
    /// Channels counted (derived from locators, else one per DIMM).
    pub channels: usize,
    /// True when every populated DIMM's channel came from its locators.
    pub channels_from_locators: bool,
    /// True when some DIMM was counted as its own channel because its
    /// channel could not be derived: the true figure may be lower.
    pub upper_bound: bool,
    /// How the figure was made, in words (shown with it).
    pub basis: String,
    /// GB/s per socket named by the locators (`CPU0`, `P1`, `SOCKET 0`),
    /// keyed by the locators' socket number; empty when they name none.
    pub per_socket: BTreeMap<u32, f64>,
}

/// The DIMMs of the machine and why they are missing when they are.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryDevices {
    /// Every type 17 structure, in entry order (`17-0`, `17-1`, ...).
    pub dimms: Vec<Dimm>,
    /// Why `dimms` is empty; null when they were read.
    pub unavailable: Option<String>,
    /// Entries skipped, values that look invented by a hypervisor, ...
    pub notes: Vec<String>,
    pub summary: DimmSummary,
    /// Null when no populated DIMM has a known speed.
    pub theoretical_bandwidth: Option<TheoreticalBandwidth>,
}

// ---------------------------------------------------------------- parsing

fn u8_at(raw: &[u8], len: usize, off: usize) -> Option<u8> {
    (off < len).then(|| raw.get(off).copied()).flatten()
}

fn u16_at(raw: &[u8], len: usize, off: usize) -> Option<u16> {
    if off + 2 > len {
        return None;
    }
    Some(u16::from_le_bytes([*raw.get(off)?, *raw.get(off + 1)?]))
}

fn u32_at(raw: &[u8], len: usize, off: usize) -> Option<u32> {
    if off + 4 > len {
        return None;
    }
    let b = raw.get(off..off + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The strings after the formatted area (index 0 is string number 1).
fn string_set(raw: &[u8], len: usize) -> Vec<String> {
    let mut out = Vec::new();
    let Some(tail) = raw.get(len..) else {
        return out;
    };
    for s in tail.split(|&b| b == 0) {
        if s.is_empty() {
            break; // the double NUL (or an empty set)
        }
        out.push(String::from_utf8_lossy(s).trim().to_string());
    }
    out
}

/// Strings firmware writes for "nothing here".
fn placeholder(s: &str) -> bool {
    let l = s.trim().to_ascii_lowercase();
    l.is_empty()
        || matches!(
            l.as_str(),
            "not specified"
                | "unknown"
                | "none"
                | "n/a"
                | "na"
                | "undefined"
                | "not available"
                | "no dimm"
                | "empty"
                | "[empty]"
                | "to be filled by o.e.m."
                | "default string"
        )
}

fn string_field(raw: &[u8], len: usize, off: usize, strings: &[String]) -> Option<String> {
    let n = u8_at(raw, len, off)? as usize;
    if n == 0 {
        return None;
    }
    let s = strings.get(n - 1)?;
    (!placeholder(s)).then(|| s.clone())
}

/// SMBIOS Memory Type (7.18.2) names; null for Other/Unknown/reserved.
pub fn memory_type_name(code: u8) -> Option<&'static str> {
    Some(match code {
        0x03 => "DRAM",
        0x04 => "EDRAM",
        0x05 => "VRAM",
        0x06 => "SRAM",
        0x07 => "RAM",
        0x08 => "ROM",
        0x09 => "Flash",
        0x0A => "EEPROM",
        0x0B => "FEPROM",
        0x0C => "EPROM",
        0x0D => "CDRAM",
        0x0E => "3DRAM",
        0x0F => "SDRAM",
        0x10 => "SGRAM",
        0x11 => "RDRAM",
        0x12 => "DDR",
        0x13 => "DDR2",
        0x14 => "DDR2 FB-DIMM",
        0x18 => "DDR3",
        0x19 => "FBD2",
        0x1A => "DDR4",
        0x1B => "LPDDR",
        0x1C => "LPDDR2",
        0x1D => "LPDDR3",
        0x1E => "LPDDR4",
        0x1F => "Logical non-volatile device",
        0x20 => "HBM",
        0x21 => "HBM2",
        0x22 => "DDR5",
        0x23 => "LPDDR5",
        0x24 => "HBM3",
        _ => return None,
    })
}

/// SMBIOS Form Factor (7.18.1) names; null for Other/Unknown/reserved.
pub fn form_factor_name(code: u8) -> Option<&'static str> {
    Some(match code {
        0x03 => "SIMM",
        0x04 => "SIP",
        0x05 => "Chip",
        0x06 => "DIP",
        0x07 => "ZIP",
        0x08 => "Proprietary Card",
        0x09 => "DIMM",
        0x0A => "TSOP",
        0x0B => "Row Of Chips",
        0x0C => "RIMM",
        0x0D => "SODIMM",
        0x0E => "SRIMM",
        0x0F => "FB-DIMM",
        0x10 => "Die",
        _ => return None,
    })
}

/// A speed field: 0 unknown, 0xFFFF "see the extended field" (SMBIOS 3.3).
fn speed(raw: &[u8], len: usize, off: usize, ext_off: usize) -> Option<u64> {
    match u16_at(raw, len, off)? {
        0 => None,
        0xFFFF => match u32_at(raw, len, ext_off)? {
            0 => None,
            v => Some(v as u64),
        },
        v => Some(v as u64),
    }
}

/// Parse one raw SMBIOS type 17 structure (formatted area and string set).
/// Errors name what is wrong with the bytes.
pub fn parse(raw: &[u8]) -> Result<Dimm, String> {
    if raw.len() < 4 {
        return Err(format!("{} bytes, shorter than a header", raw.len()));
    }
    if raw[0] != 17 {
        return Err(format!("type {}, not 17 (Memory Device)", raw[0]));
    }
    let len = raw[1] as usize;
    // 0x15 is the SMBIOS 2.1 length: through Memory Type and Type Detail.
    if len < 0x15 {
        return Err(format!("length {len:#x}, shorter than SMBIOS 2.1's 0x15"));
    }
    if raw.len() < len {
        return Err(format!(
            "{} bytes, shorter than its length {len:#x}",
            raw.len()
        ));
    }
    let strings = string_set(raw, len);
    let width = |off| match u16_at(raw, len, off) {
        Some(0) | Some(0xFFFF) | None => None,
        Some(w) => Some(w as u32),
    };
    let mut d = Dimm {
        handle: u16_at(raw, len, 2).unwrap_or(0),
        total_width_bits: width(0x08),
        data_width_bits: width(0x0A),
        form_factor: u8_at(raw, len, 0x0E)
            .and_then(form_factor_name)
            .map(String::from),
        locator: string_field(raw, len, 0x10, &strings),
        bank_locator: string_field(raw, len, 0x11, &strings),
        memory_type: u8_at(raw, len, 0x12)
            .and_then(memory_type_name)
            .map(String::from),
        speed_mts: speed(raw, len, 0x15, 0x54),
        manufacturer: string_field(raw, len, 0x17, &strings),
        part_number: string_field(raw, len, 0x1A, &strings),
        rank: u8_at(raw, len, 0x1B)
            .map(|a| (a & 0x0F) as u32)
            .filter(|&r| r != 0),
        configured_speed_mts: speed(raw, len, 0x20, 0x58),
        ..Dimm::default()
    };
    const MIB: u64 = 1 << 20;
    match u16_at(raw, len, 0x0C).unwrap_or(0xFFFF) {
        0 => d.empty = true,
        0xFFFF => {}
        0x7FFF => {
            // Extended Size: MiB in bits 0-30 (bit 31 reserved).
            d.size_bytes = u32_at(raw, len, 0x1C).map(|v| (v & 0x7FFF_FFFF) as u64 * MIB);
        }
        v if v & 0x8000 != 0 => d.size_bytes = Some((v & 0x7FFF) as u64 * 1024),
        v => d.size_bytes = Some(v as u64 * MIB),
    }
    if d.empty {
        // Firmware fills an empty slot's other fields with junk or
        // placeholders ("NO DIMM"): keep the locators only.
        d = Dimm {
            handle: d.handle,
            locator: d.locator,
            bank_locator: d.bank_locator,
            empty: true,
            ..Dimm::default()
        };
    }
    d.channel = channel_of(d.locator.as_deref(), d.bank_locator.as_deref());
    Ok(d)
}

// ---------------------------------------------------------------- channels

/// The digits right after `key` in `s` (`CPU1_...` -> `1`), skipping `_`, `-`, ` `.
fn number_after(s: &str, key: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = s[from..].find(key) {
        let at = from + i;
        // `key` must start a word: not preceded by a letter (so "P" in "DIMMP0" or "CPU" do not count).
        let word_start = at == 0 || !s.as_bytes()[at - 1].is_ascii_alphabetic();
        let rest = s[at + key.len()..].trim_start_matches([' ', '_', '-']);
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        if word_start && !digits.is_empty() {
            return Some(digits);
        }
        from = at + key.len();
    }
    None
}

/// The channel named after `CHANNEL` (`P0 CHANNEL A` -> `A`, `Channel0` -> `0`).
fn channel_word(s: &str) -> Option<String> {
    let i = s.find("CHANNEL")?;
    let rest = s[i + "CHANNEL".len()..].trim_start_matches([' ', '_', '-']);
    let id: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    (!id.is_empty()).then_some(id)
}

/// The channel letter of `DIMM_A1`, `DIMMA1`, `DIMM A0`, `CPU0_DIMM_B2`:
/// `DIMM`, an optional separator, one letter, then a digit or the end.
fn dimm_letter(s: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = s[from..].find("DIMM") {
        let at = from + i + "DIMM".len();
        let rest = s[at..].trim_start_matches([' ', '_', '-']);
        let mut cs = rest.chars();
        if let Some(l) = cs.next().filter(|c| c.is_ascii_alphabetic()) {
            match cs.next() {
                None => return Some(l.to_string()),
                Some(c) if c.is_ascii_digit() => return Some(l.to_string()),
                _ => {}
            }
        }
        from = at;
    }
    None
}

/// The memory channel a slot belongs to, from its Device and Bank Locator,
/// or null when they do not name one. Channels are not a field of SMBIOS;
/// this reads the usual vendor spellings:
///
/// - a `CHANNEL` word in either locator: `P0 CHANNEL A` (AMD EPYC),
///   `ChannelA-DIMM0` (Intel clients), `P0_Node0_Channel0_Dimm0`;
/// - a channel letter after `DIMM`: `CPU0_DIMM_A1`, `DIMM_A0`, `P1-DIMMA1`.
///
/// The socket (`CPU0`, `P0`, `SOCKET 0`), NUMA node (`Node0`) and memory
/// controller (`Controller1`) named in either locator qualify the channel,
/// so `CPU0 ... A` and `CPU1 ... A` are two channels. `DIMM 0` or `A1`
/// alone name no channel.
pub fn channel_of(locator: Option<&str>, bank: Option<&str>) -> Option<String> {
    let loc = locator.unwrap_or("").to_ascii_uppercase();
    let bank = bank.unwrap_or("").to_ascii_uppercase();
    let both = [loc.as_str(), bank.as_str()];
    let ch = both
        .iter()
        .find_map(|s| channel_word(s))
        .or_else(|| dimm_letter(&loc))?;
    let find = |keys: &[&str]| {
        both.iter()
            .find_map(|s| keys.iter().find_map(|k| number_after(s, k)))
    };
    let mut key = Vec::new();
    if let Some(s) = find(&["CPU", "SOCKET", "P"]) {
        key.push(format!("socket {s}"));
    }
    if let Some(n) = find(&["NODE"]) {
        key.push(format!("node {n}"));
    }
    if let Some(c) = find(&["CONTROLLER", "MC"]) {
        key.push(format!("controller {c}"));
    }
    key.push(format!("channel {ch}"));
    Some(key.join(" "))
}

// ---------------------------------------------------------------- summary

/// "32 GiB and 16 GiB", "3200, 2933 and 2666 MT/s".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Counts, distinct values and the balance note over `dimms`.
pub fn summarize(dimms: &[Dimm]) -> DimmSummary {
    let pop: Vec<&Dimm> = dimms.iter().filter(|d| d.populated()).collect();
    let mut s = DimmSummary {
        slots: dimms.len(),
        populated: pop.len(),
        empty: dimms.len() - pop.len(),
        total_bytes: pop.iter().filter_map(|d| d.size_bytes).sum(),
        unknown_size: pop.iter().filter(|d| d.size_bytes.is_none()).count(),
        ..DimmSummary::default()
    };
    s.sizes = pop.iter().filter_map(|d| d.size_bytes).collect();
    s.sizes.sort_unstable_by(|a, b| b.cmp(a));
    s.sizes.dedup();
    s.speeds_mts = pop.iter().filter_map(|d| d.effective_speed_mts()).collect();
    s.speeds_mts.sort_unstable_by(|a, b| b.cmp(a));
    s.speeds_mts.dedup();
    s.types = pop.iter().filter_map(|d| d.memory_type.clone()).collect();
    s.types.sort();
    s.types.dedup();
    let mut parts = Vec::new();
    if s.empty > 0 {
        parts.push(format!("{} of {} slots empty", s.empty, s.slots));
    }
    if s.sizes.len() > 1 {
        let v: Vec<String> = s.sizes.iter().map(|&b| fmt_bytes(b)).collect();
        parts.push(format!("mixed sizes {}", and_list(&v)));
    }
    if s.speeds_mts.len() > 1 {
        let v: Vec<String> = s.speeds_mts.iter().map(|x| x.to_string()).collect();
        parts.push(format!("mixed speeds {} MT/s", and_list(&v)));
    }
    if s.types.len() > 1 {
        parts.push(format!("mixed types {}", and_list(&s.types)));
    }
    s.balance_note = (!parts.is_empty()).then(|| parts.join("; "));
    s
}

// ---------------------------------------------------------------- bandwidth

/// Theoretical peak DRAM bandwidth of the populated DIMMs, or null when
/// none has a known speed.
///
/// The rule, kept simple on purpose:
/// - a DIMM moves `speed (MT/s) × data width (bytes)` per second, speed being
///   the configured speed, else the rated one; data width 64 bits when unknown;
/// - DIMMs in one channel share its bus: a channel counts once, at the
///   lowest speed and widest data width of its DIMMs;
/// - channels come from the locators ([`channel_of`]); a DIMM whose channel
///   cannot be derived is counted as a channel of its own, which makes the
///   figure an upper bound (`upper_bound`), said in `basis`;
/// - sum over channels, divided by 1000: GB/s (10^9 bytes/s).
///
/// It is the interface's peak; a sustained read (STREAM) gets typically
/// 60-90% of it. DDR5's two 32-bit subchannels per DIMM are reported by
/// SMBIOS as one 64-bit data width and count as one here.
pub fn theoretical_bandwidth(dimms: &[Dimm]) -> Option<TheoreticalBandwidth> {
    let pop: Vec<&Dimm> = dimms
        .iter()
        .filter(|d| d.populated() && d.effective_speed_mts().is_some())
        .collect();
    if pop.is_empty() {
        return None;
    }
    // channel key -> (lowest speed, widest data width bits)
    let mut channels: BTreeMap<String, (u64, u32)> = BTreeMap::new();
    let mut derived = 0;
    let mut width_assumed = false;
    let mut rated_used = false;
    for (i, d) in pop.iter().enumerate() {
        let key = match &d.channel {
            Some(c) => {
                derived += 1;
                c.clone()
            }
            None => format!("dimm {i}"),
        };
        let mts = d.effective_speed_mts().unwrap_or(0);
        rated_used |= d.configured_speed_mts.is_none();
        let w = d.data_width_bits.unwrap_or_else(|| {
            width_assumed = true;
            64
        });
        let e = channels.entry(key).or_insert((mts, w));
        e.0 = e.0.min(mts);
        e.1 = e.1.max(w);
    }
    let gbs: f64 = channels.values().map(|&(mts, w)| channel_gbs(mts, w)).sum();
    let per_socket = per_socket_gbs(&channels, gbs);
    let upper_bound = derived < pop.len();
    let mut basis = if derived == pop.len() {
        format!(
            "{} channel(s) from the slot locators × speed × data width",
            channels.len()
        )
    } else if derived == 0 {
        "upper bound: channels not derivable from the slot locators, one channel assumed per DIMM"
            .to_string()
    } else {
        format!(
            "upper bound: {} of {} DIMMs without a derivable channel, one channel assumed for each",
            pop.len() - derived,
            pop.len()
        )
    };
    if rated_used {
        basis.push_str("; rated speed where the configured speed is unknown");
    }
    if width_assumed {
        basis.push_str("; 64-bit data width assumed where unknown");
    }
    let skipped = dimms
        .iter()
        .filter(|d| d.populated() && d.effective_speed_mts().is_none())
        .count();
    if skipped > 0 {
        basis.push_str(&format!("; {skipped} DIMM(s) of unknown speed left out"));
    }
    Some(TheoreticalBandwidth {
        gbs,
        channels: channels.len(),
        channels_from_locators: !upper_bound,
        upper_bound,
        basis,
        per_socket,
    })
}

/// GB/s of one channel at `mts` MT/s and `w` bits of data width.
fn channel_gbs(mts: u64, w: u32) -> f64 {
    mts as f64 * (w as f64 / 8.0) / 1000.0
}

/// GB/s per socket, from the channels whose key names it ("socket N ...");
/// empty when some channels name no socket (their sum falls short of `gbs`).
fn per_socket_gbs(channels: &BTreeMap<String, (u64, u32)>, gbs: f64) -> BTreeMap<u32, f64> {
    let mut per_socket: BTreeMap<u32, f64> = BTreeMap::new();
    for (k, &(mts, w)) in channels {
        if let Some(n) = k
            .strip_prefix("socket ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
        {
            *per_socket.entry(n).or_default() += channel_gbs(mts, w);
        }
    }
    if per_socket.values().sum::<f64>() < gbs * 0.999 {
        per_socket.clear(); // some channels name no socket: no split
    }
    per_socket
}

/// [`theoretical_bandwidth`]'s figure alone, GB/s.
pub fn theoretical_bandwidth_gbs(dimms: &[Dimm]) -> Option<f64> {
    theoretical_bandwidth(dimms).map(|b| b.gbs)
}

// ---------------------------------------------------------------- hypervisor

/// A note when the DIMMs look made up by a hypervisor: a virtual vendor as
/// manufacturer, or no populated DIMM with a known speed.
pub fn invented_note(dimms: &[Dimm], vm_sign: bool) -> Option<String> {
    let pop: Vec<&Dimm> = dimms.iter().filter(|d| d.populated()).collect();
    if pop.is_empty() {
        return None;
    }
    const VIRTUAL: [&str; 6] = ["qemu", "bochs", "vmware", "virtualbox", "xen", "microsoft"];
    let vendor = pop.iter().find_map(|d| {
        let m = d.manufacturer.as_deref()?.to_ascii_lowercase();
        VIRTUAL
            .iter()
            .any(|v| m.contains(v))
            .then(|| d.manufacturer.clone().unwrap_or_default())
    });
    let no_speed = pop.iter().all(|d| d.effective_speed_mts().is_none());
    let why = match (vendor, no_speed) {
        (Some(v), true) => format!("manufacturer \"{v}\" and no speed"),
        (Some(v), false) => format!("manufacturer \"{v}\""),
        (None, true) if vm_sign => "no speed, in a virtual machine".to_string(),
        (None, true) => "no speed".to_string(),
        (None, false) if vm_sign => "a virtual machine".to_string(),
        (None, false) => return None,
    };
    Some(format!(
        "the DIMM table looks invented by a hypervisor ({why}): it describes the guest's memory, not the host's DIMMs"
    ))
}

// ---------------------------------------------------------------- reading

/// Why there are no type 17 entries to read under `sys`.
fn absent_reason(sys: &Sysroot) -> String {
    let recorded = if sys.is_live() {
        ""
    } else {
        "; or not recorded"
    };
    if sys.exists("/sys/firmware/dmi") || sys.exists("/sys/class/dmi/id") {
        format!(
            "the kernel exposes DMI but not the raw SMBIOS entries: {DMI_ENTRIES} is absent \
             (CONFIG_DMI_SYSFS off or the dmi-sysfs module not loaded){recorded}"
        )
    } else {
        format!(
            "no SMBIOS tables under this root (no /sys/firmware/dmi or /sys/class/dmi): \
             none from the firmware or VM, or a kernel without CONFIG_DMI{recorded}"
        )
    }
}

/// Read every `/sys/firmware/dmi/entries/17-*/raw` under `sys`, in entry
/// order, with the summary, the theoretical bandwidth and notes. When no
/// DIMM can be read, `unavailable` says why.
pub fn read(sys: &Sysroot) -> MemoryDevices {
    let mut m = MemoryDevices::default();
    let names = match sys.read_dir(DMI_ENTRIES) {
        Ok(names) => names
            .into_iter()
            .map(|n| n.to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            m.unavailable = Some(ROOT_ONLY.to_string());
            return m;
        }
        Err(_) => {
            m.unavailable = Some(absent_reason(sys));
            return m;
        }
    };
    let mut entries: Vec<(usize, String)> = names
        .into_iter()
        .filter_map(|n| Some((n.strip_prefix("17-")?.parse().ok()?, n)))
        .collect();
    entries.sort();
    if entries.is_empty() {
        m.unavailable =
            Some("the SMBIOS tables list no Memory Device (type 17) entries".to_string());
        return m;
    }
    let mut denied = 0;
    for (_, name) in &entries {
        let path = format!("{DMI_ENTRIES}/{name}/raw");
        match sys.read_bytes(&path) {
            Ok(raw) => match parse(&raw) {
                Ok(mut d) => {
                    d.entry = name.clone();
                    m.dimms.push(d);
                }
                Err(e) => m.notes.push(format!("{name} skipped: {e}")),
            },
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => denied += 1,
            Err(e) => m.notes.push(format!("{name} unreadable: {e}")),
        }
    }
    if m.dimms.is_empty() {
        m.unavailable = Some(if denied > 0 {
            ROOT_ONLY.to_string()
        } else {
            format!(
                "none of the {} Memory Device entries could be parsed",
                entries.len()
            )
        });
        return m;
    }
    if denied > 0 {
        m.notes
            .push(format!("{denied} entries not readable (root only)"));
    }
    m.summary = summarize(&m.dimms);
    m.theoretical_bandwidth = theoretical_bandwidth(&m.dimms);
    if let Some(n) = invented_note(&m.dimms, sys.has_hypervisor_sign()) {
        m.notes.push(n);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_spellings() {
        let c = |l: &str, b: &str| channel_of(Some(l), Some(b));
        assert_eq!(
            c("CPU0_DIMM_A1", "BANK 0").as_deref(),
            Some("socket 0 channel A")
        );
        assert_eq!(
            c("CPU1_DIMM_A1", "BANK 0").as_deref(),
            Some("socket 1 channel A")
        );
        assert_eq!(c("DIMM_B0", "").as_deref(), Some("channel B"));
        assert_eq!(c("P1-DIMMC1", "").as_deref(), Some("socket 1 channel C"));
        assert_eq!(
            c("DIMM 0", "P0 CHANNEL A").as_deref(),
            Some("socket 0 channel A")
        );
        assert_eq!(
            c("DIMM 0", "P0_Node1_Channel3_Dimm0").as_deref(),
            Some("socket 0 node 1 channel 3")
        );
        assert_eq!(
            c("Controller1-ChannelA-DIMM0", "BANK 0").as_deref(),
            Some("controller 1 channel A")
        );
        assert_eq!(c("DIMM 0", "").as_deref(), None);
        assert_eq!(c("A1", "Not Specified").as_deref(), None);
        assert_eq!(channel_of(None, None), None);
    }

    #[test]
    fn short_and_wrong_structures_are_errors() {
        assert!(parse(&[17, 4, 0]).is_err());
        assert!(parse(&[16, 0x15, 0, 0]).is_err());
        assert!(parse(&[17, 0x10, 0, 0, 0, 0]).is_err());
        let mut r = vec![17u8, 0x28];
        r.resize(0x20, 0);
        assert!(parse(&r).unwrap_err().contains("shorter than its length"));
    }

    #[test]
    fn size_encodings() {
        let mk = |size: u16, ext: u32| {
            let mut r = vec![0u8; 0x22];
            r[0] = 17;
            r[1] = 0x22;
            r[0x0C..0x0E].copy_from_slice(&size.to_le_bytes());
            r[0x1C..0x20].copy_from_slice(&ext.to_le_bytes());
            r.extend_from_slice(&[0, 0]);
            parse(&r).unwrap()
        };
        assert_eq!(mk(16384, 0).size_bytes, Some(16 << 30));
        assert!(mk(0, 0).empty);
        assert_eq!(mk(0, 0).size_bytes, None);
        assert_eq!(mk(0xFFFF, 0).size_bytes, None);
        assert!(!mk(0xFFFF, 0).empty);
        assert_eq!(mk(0x8000 | 512, 0).size_bytes, Some(512 * 1024));
        assert_eq!(mk(0x7FFF, 131072).size_bytes, Some(128 << 30));
    }
}
