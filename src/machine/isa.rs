//! Instruction-set extensions: SIMD level, vector width, crypto, atomics.
//!
//! Read from `/proc/cpuinfo` `flags` (x86) or `Features` (ARM); the raw list
//! is kept. The SVE vector length comes from
//! `/proc/sys/abi/sve_default_vector_length` on the live root.

use super::identity::{unavailable, CpuInfo, Unavailable};
use crate::base::Sysroot;
use serde::{Deserialize, Serialize};

/// What the CPU can execute, as the kernel reports it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Isa {
    /// `x86` or `arm`, or `unknown` when no flag list was found.
    pub family: String,
    /// The raw flag list of the first CPU (`flags` on x86, `Features` on ARM).
    pub flags: Vec<String>,
    /// Where `flags` was read.
    pub flags_source: Option<String>,
    /// CPUs whose flag list differs from the first CPU's (hybrid parts,
    /// mixed steppings); empty when all CPUs agree.
    pub cpus_with_other_flags: Vec<usize>,
    /// SIMD levels present, oldest first: `SSE2`, `SSE4.2`, `AVX`, `AVX2`,
    /// `FMA`, `AVX-512`, `AVX10`... / `NEON`, `SVE`, `SVE2`, `SME`.
    pub simd: Vec<String>,
    /// AVX-512 subsets present: `F`, `CD`, `BW`, `DQ`, `VL`, `VNNI`, `BF16`...
    pub avx512: Vec<String>,
    /// AMX parts present: `TILE`, `BF16`, `INT8`, `FP16`.
    pub amx: Vec<String>,
    /// Crypto and checksum extensions: `AES-NI`, `PCLMULQDQ`, `SHA`, `VAES`...
    /// / `AES`, `PMULL`, `SHA1`, `SHA2`, `SHA3`, `SHA512`, `SM3`, `SM4`, `CRC32`.
    pub crypto: Vec<String>,
    /// Other facts that matter for performance work: `LSE atomics`,
    /// `dot product`, `FP16`, `BF16`, `I8MM`, `BMI2`, `POPCNT`, `RDTSCP`...
    pub other: Vec<String>,
    /// Widest SIMD register in bits (512 for AVX-512, 256 for AVX, 128 for
    /// SSE/NEON, SVE length when known).
    pub widest_vector_bits: Option<u32>,
    /// ARM SVE vector length in bits, when it could be read.
    pub sve_vector_bits: Option<u32>,
    /// Null fields with the reason.
    pub unavailable: Unavailable,
}

impl Isa {
    pub fn has_flag(&self, f: &str) -> bool {
        self.flags.iter().any(|x| x == f)
    }
}

struct Named(&'static str, &'static str);

// x86 kernel flag -> display name, in order.
const X86_SIMD: &[Named] = &[
    Named("mmx", "MMX"),
    Named("sse", "SSE"),
    Named("sse2", "SSE2"),
    Named("pni", "SSE3"),
    Named("ssse3", "SSSE3"),
    Named("sse4_1", "SSE4.1"),
    Named("sse4_2", "SSE4.2"),
    Named("sse4a", "SSE4a"),
    Named("avx", "AVX"),
    Named("avx2", "AVX2"),
    Named("fma", "FMA"),
    Named("avx_vnni", "AVX-VNNI"),
    Named("avx512f", "AVX-512"),
    Named("avx10", "AVX10"),
];

const X86_AVX512: &[Named] = &[
    Named("avx512f", "F"),
    Named("avx512cd", "CD"),
    Named("avx512bw", "BW"),
    Named("avx512dq", "DQ"),
    Named("avx512vl", "VL"),
    Named("avx512_vnni", "VNNI"),
    Named("avx512_bf16", "BF16"),
    Named("avx512_fp16", "FP16"),
    Named("avx512ifma", "IFMA"),
    Named("avx512vbmi", "VBMI"),
    Named("avx512_vbmi2", "VBMI2"),
    Named("avx512_bitalg", "BITALG"),
    Named("avx512_vpopcntdq", "VPOPCNTDQ"),
    Named("avx512_vp2intersect", "VP2INTERSECT"),
    Named("avx512er", "ER"),
    Named("avx512pf", "PF"),
    Named("avx512_4vnniw", "4VNNIW"),
    Named("avx512_4fmaps", "4FMAPS"),
];

const X86_AMX: &[Named] = &[
    Named("amx_tile", "TILE"),
    Named("amx_bf16", "BF16"),
    Named("amx_int8", "INT8"),
    Named("amx_fp16", "FP16"),
    Named("amx_complex", "COMPLEX"),
];

const X86_CRYPTO: &[Named] = &[
    Named("aes", "AES-NI"),
    Named("pclmulqdq", "PCLMULQDQ"),
    Named("sha_ni", "SHA"),
    Named("vaes", "VAES"),
    Named("vpclmulqdq", "VPCLMULQDQ"),
    Named("gfni", "GFNI"),
    Named("sm3", "SM3"),
    Named("sm4", "SM4"),
    Named("rdrand", "RDRAND"),
    Named("rdseed", "RDSEED"),
];

const X86_OTHER: &[Named] = &[
    Named("popcnt", "POPCNT"),
    Named("bmi1", "BMI1"),
    Named("bmi2", "BMI2"),
    Named("adx", "ADX"),
    Named("f16c", "F16C"),
    Named("movbe", "MOVBE"),
    Named("erms", "ERMS (fast rep movsb)"),
    Named("fsrm", "FSRM (fast short rep mov)"),
    Named("clflushopt", "CLFLUSHOPT"),
    Named("clwb", "CLWB"),
    Named("rtm", "TSX RTM"),
    Named("rdtscp", "RDTSCP"),
    Named("waitpkg", "WAITPKG (umwait/tpause)"),
    Named("movdir64b", "MOVDIR64B"),
];

const ARM_SIMD: &[Named] = &[
    Named("asimd", "NEON"),
    Named("neon", "NEON"),
    Named("sve", "SVE"),
    Named("sve2", "SVE2"),
    Named("sme", "SME"),
    Named("sme2", "SME2"),
];

const ARM_CRYPTO: &[Named] = &[
    Named("aes", "AES"),
    Named("pmull", "PMULL"),
    Named("sha1", "SHA1"),
    Named("sha2", "SHA2"),
    Named("sha3", "SHA3"),
    Named("sha512", "SHA512"),
    Named("sm3", "SM3"),
    Named("sm4", "SM4"),
    Named("crc32", "CRC32"),
    Named("rng", "RNG"),
];

const ARM_OTHER: &[Named] = &[
    Named("atomics", "LSE atomics"),
    Named("lse2", "LSE2"),
    Named("asimddp", "dot product"),
    Named("fphp", "FP16"),
    Named("asimdhp", "FP16 SIMD"),
    Named("asimdfhm", "FP16 FML"),
    Named("bf16", "BF16"),
    Named("i8mm", "I8MM"),
    Named("asimdrdm", "RDM"),
    Named("jscvt", "JSCVT"),
    Named("fcma", "FCMA"),
    Named("lrcpc", "LRCPC"),
    Named("dcpop", "DC CVAP"),
    Named("sb", "SB"),
    Named("bti", "BTI"),
    Named("paca", "pointer auth"),
    Named("mte", "MTE"),
];

fn pick(flags: &[String], table: &[Named]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for Named(flag, name) in table {
        if flags.iter().any(|f| f == flag) && !out.iter().any(|o| o == name) {
            out.push((*name).to_string());
        }
    }
    out
}

/// Read the SVE default vector length (bytes in the file) on the live root.
fn sve_length_bits(sys: &Sysroot) -> Result<u32, String> {
    if !sys.is_live() {
        return Err(
            "unknown: the SVE length is only readable on the live machine \
                    (/proc/sys/abi/sve_default_vector_length)"
                .into(),
        );
    }
    match sys.read_string("/proc/sys/abi/sve_default_vector_length") {
        Some(s) => match s.parse::<u32>() {
            Ok(bytes) if bytes > 0 => Ok(bytes * 8),
            _ => Err(format!("unknown: sve_default_vector_length reads '{s}'")),
        },
        None => Err("unknown: /proc/sys/abi/sve_default_vector_length is not readable".into()),
    }
}

/// Summarise a flag list (x86 `flags` or ARM `Features`).
pub fn from_flags(flags: Vec<String>, arm: bool) -> Isa {
    let mut isa = Isa {
        family: if arm { "arm" } else { "x86" }.to_string(),
        ..Isa::default()
    };
    if arm {
        isa.simd = pick(&flags, ARM_SIMD);
        isa.crypto = pick(&flags, ARM_CRYPTO);
        isa.other = pick(&flags, ARM_OTHER);
        if isa.simd.iter().any(|s| s == "NEON") {
            isa.widest_vector_bits = Some(128);
        }
        if !flags.iter().any(|f| f == "atomics") {
            // Worth saying out loud: without LSE, every atomic is an LL/SC loop.
            isa.other
                .push("no LSE atomics (atomics are LL/SC loops)".to_string());
        }
    } else {
        isa.simd = pick(&flags, X86_SIMD);
        isa.avx512 = pick(&flags, X86_AVX512);
        isa.amx = pick(&flags, X86_AMX);
        isa.crypto = pick(&flags, X86_CRYPTO);
        isa.other = pick(&flags, X86_OTHER);
        let has = |f: &str| flags.iter().any(|x| x == f);
        isa.widest_vector_bits = if has("avx512f") {
            Some(512)
        } else if has("avx") {
            Some(256)
        } else if has("sse") || has("sse2") {
            Some(128)
        } else {
            None
        };
    }
    isa.flags = flags;
    isa
}

/// Read the ISA of the machine under `sys`.
pub fn read(sys: &Sysroot) -> Isa {
    let Some(ci) = CpuInfo::read(sys) else {
        let mut isa = Isa {
            family: "unknown".into(),
            ..Isa::default()
        };
        unavailable(
            &mut isa.unavailable,
            "flags",
            "/proc/cpuinfo is missing or unreadable",
        );
        unavailable(
            &mut isa.unavailable,
            "widest_vector_bits",
            "no flag list to read it from",
        );
        return isa;
    };
    let (key, arm) = if ci.first("flags").is_some() {
        ("flags", false)
    } else if ci.first("Features").is_some() {
        ("Features", true)
    } else {
        let mut isa = Isa {
            family: "unknown".into(),
            ..Isa::default()
        };
        unavailable(
            &mut isa.unavailable,
            "flags",
            "/proc/cpuinfo has neither 'flags' (x86) nor 'Features' (ARM)",
        );
        unavailable(
            &mut isa.unavailable,
            "widest_vector_bits",
            "no flag list to read it from",
        );
        return isa;
    };
    let split = |s: &str| -> Vec<String> { s.split_whitespace().map(str::to_string).collect() };
    let first = ci.first(key).map(split).unwrap_or_default();
    let mut isa = from_flags(first.clone(), arm);
    isa.flags_source = Some(format!("/proc/cpuinfo '{key}' of the first CPU"));
    for (cpu, v) in ci.per_cpu(key) {
        let mut a = split(v);
        let mut b = first.clone();
        a.sort();
        b.sort();
        if a != b {
            isa.cpus_with_other_flags.push(cpu);
        }
    }
    if arm && isa.has_flag("sve") {
        match sve_length_bits(sys) {
            Ok(bits) => {
                isa.sve_vector_bits = Some(bits);
                isa.widest_vector_bits = Some(bits.max(128));
            }
            Err(why) => {
                unavailable(&mut isa.unavailable, "sve_vector_bits", why);
            }
        }
    } else if arm {
        unavailable(
            &mut isa.unavailable,
            "sve_vector_bits",
            "no SVE on this CPU",
        );
    }
    if isa.widest_vector_bits.is_none() {
        unavailable(
            &mut isa.unavailable,
            "widest_vector_bits",
            "no SIMD extension found in the flag list",
        );
    }
    isa
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn x86_avx512_amx() {
        let isa = from_flags(
            f(
                "sse sse2 avx avx2 fma avx512f avx512cd avx512bw avx512dq avx512vl \
               avx512_vnni avx512_bf16 avx512_fp16 amx_tile amx_bf16 amx_int8 aes sha_ni vaes",
            ),
            false,
        );
        assert_eq!(isa.widest_vector_bits, Some(512));
        assert!(isa.simd.contains(&"AVX-512".to_string()));
        assert_eq!(isa.avx512, f("F CD BW DQ VL VNNI BF16 FP16"));
        assert_eq!(isa.amx, f("TILE BF16 INT8"));
        assert!(isa.crypto.contains(&"SHA".to_string()));
    }

    #[test]
    fn arm_features() {
        let isa = from_flags(f("fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid"), true);
        assert_eq!(isa.simd, vec!["NEON".to_string()]);
        assert_eq!(isa.widest_vector_bits, Some(128));
        assert!(isa.other.iter().any(|o| o.starts_with("no LSE")));
    }
}
