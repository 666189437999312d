//! Identity, ISA, frequency, knobs, devices and numa_maps parts of `machine`,
//! read from small fake roots and from the live machine.

#[path = "common/fake_root.rs"]
mod fake_root;
use fake_root::{fake_root, write};
#[path = "common/bin.rs"]
mod bin;
#[path = "common/skip.rs"]
mod skip;
use cpuscope::base::Sysroot;
use cpuscope::machine::{devices, freq, identity, isa, knobs, process};
use std::fs;
use std::os::unix::fs::symlink;

// ---------------------------------------------------------------- identity

#[test]
fn identity_arm_big_little_from_sysfs_midr() {
    let d = fake_root();
    let r = d.path();
    for cpu in 0..8 {
        // cpu0-3 Cortex-A53 r0p4, cpu4-7 Cortex-A73 r0p2
        let midr = if cpu < 4 {
            "0x00000000410fd034"
        } else {
            "0x00000000410fd092"
        };
        write(
            r,
            &format!("sys/devices/system/cpu/cpu{cpu}/regs/identification/midr_el1"),
            &format!("{midr}\n"),
        );
    }
    let sys = Sysroot::new(r).unwrap();
    let id = identity::read(&sys);
    assert_eq!(id.architecture, "aarch64");
    assert_eq!(id.arm_cores.len(), 2);
    let a53 = &id.arm_cores[0];
    assert_eq!(a53.part_name.as_deref(), Some("Cortex-A53"));
    assert_eq!(a53.cpus.to_string(), "0-3");
    assert_eq!(a53.stepping, "r0p4");
    assert_eq!(a53.midr_raw.as_deref(), Some("0x00000000410fd034"));
    assert_eq!(id.arm_cores[1].part_name.as_deref(), Some("Cortex-A73"));
    assert_eq!(id.vendor.as_deref(), Some("ARM"));
    assert!(id
        .model_name
        .unwrap()
        .contains("Cortex-A53 + ARM Cortex-A73"));
    // No microcode on ARM: null with a reason.
    assert!(id.microcode.is_none());
    assert!(id.unavailable.contains_key("microcode"));
    // ARM without DMI: cannot tell whether virtual.
    assert_eq!(id.virtualization.is_virtual, None);
    assert!(id.virtualization.reason.is_some());
    // QEMU's virt board (the ARM lab's guests, and KVM guests on it) says so
    // in the device tree's root compatible.
    write(r, "proc/device-tree/compatible", "linux,dummy-virt\0");
    let id = identity::read(&sys);
    assert_eq!(id.virtualization.is_virtual, Some(true));
    assert!(id.virtualization.hypervisor.unwrap().contains("QEMU virt"));
}

#[test]
fn identity_arm_from_cpuinfo_only() {
    let d = fake_root();
    let r = d.path();
    write(
        r,
        "proc/cpuinfo",
        "processor\t: 0\nBogoMIPS\t: 100.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid\n\
         CPU implementer\t: 0x70\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0x663\nCPU revision\t: 3\n\n",
    );
    let id = identity::read(&Sysroot::new(r).unwrap());
    assert_eq!(id.architecture, "aarch64");
    assert_eq!(id.architecture_source, "/proc/cpuinfo shape");
    assert_eq!(id.vendor.as_deref(), Some("Phytium"));
    let c = &id.arm_cores[0];
    assert_eq!(c.midr, "0x701f6633");
    assert!(c.part_name.as_deref().unwrap().contains("FT-2500"));
    assert_eq!(c.midr_raw, None);
}

#[test]
fn identity_unknown_arm_part_keeps_raw_ids() {
    let d = fake_root();
    write(
        d.path(),
        "sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
        "0x00000000ee1f1231\n",
    );
    let id = identity::read(&Sysroot::new(d.path()).unwrap());
    let c = &id.arm_cores[0];
    assert_eq!(c.implementer, 0xee);
    assert_eq!(c.part, 0x123);
    assert_eq!(c.part_name, None);
    assert!(id.unavailable.contains_key("vendor"));
}

#[test]
fn identity_x86_vm_from_flag_and_dmi() {
    let d = fake_root();
    let r = d.path();
    write(
        r,
        "proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n\
         model name\t: AMD EPYC 7763 64-Core Processor\nstepping\t: 1\nmicrocode\t: 0xa0011d1\n\
         flags\t\t: fpu sse sse2 avx avx2 hypervisor\n\n",
    );
    write(r, "sys/class/dmi/id/sys_vendor", "QEMU\n");
    write(
        r,
        "sys/class/dmi/id/product_name",
        "Standard PC (Q35 + ICH9, 2009)\n",
    );
    write(r, "proc/sys/kernel/hostname", "db1\n");
    write(r, "proc/sys/kernel/osrelease", "5.15.0-91-generic\n");
    let id = identity::read(&Sysroot::new(r).unwrap());
    assert_eq!(id.architecture, "x86_64");
    assert_eq!(id.vendor_name.as_deref(), Some("AMD"));
    assert_eq!(
        (id.family, id.model, id.stepping),
        (Some(25), Some(1), Some(1))
    );
    assert_eq!(id.microcode.as_deref(), Some("0xa0011d1"));
    assert_eq!(id.virtualization.is_virtual, Some(true));
    assert_eq!(id.virtualization.hypervisor.as_deref(), Some("KVM/QEMU"));
    assert_eq!(id.virtualization.evidence.len(), 2);
    assert_eq!(id.hostname.as_deref(), Some("db1"));
    assert_eq!(id.kernel_release.as_deref(), Some("5.15.0-91-generic"));
}

#[test]
fn identity_x86_bare_metal_and_xen() {
    let d = fake_root();
    let r = d.path();
    write(
        r,
        "proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: HygonGenuine\nmodel name\t: Hygon C86 5280 16-core Processor\nflags\t\t: fpu sse2\n\n",
    );
    write(
        r,
        "sys/devices/system/cpu/cpu0/microcode/version",
        "0x900000d\n",
    );
    let id = identity::read(&Sysroot::new(r).unwrap());
    assert_eq!(id.virtualization.is_virtual, Some(false));
    assert_eq!(id.vendor_name.as_deref(), Some("Hygon"));
    assert_eq!(id.microcode.as_deref(), Some("0x900000d"));
    assert!(id.unavailable.contains_key("hostname"));

    write(r, "sys/hypervisor/type", "xen\n");
    let id = identity::read(&Sysroot::new(r).unwrap());
    assert_eq!(id.virtualization.is_virtual, Some(true));
    assert_eq!(id.virtualization.hypervisor.as_deref(), Some("Xen"));
}

#[test]
fn identity_live() {
    let id = identity::read(&Sysroot::new("/").unwrap());
    assert_eq!(id.architecture, std::env::consts::ARCH);
    assert_eq!(id.architecture_source, "uname");
    assert!(id.model_name.is_some() || id.unavailable.contains_key("model_name"));
    assert!(id.kernel_release.is_some());
}

// --------------------------------------------------------------------- isa

#[test]
fn isa_x86_from_cpuinfo_and_hybrid_flags() {
    let d = fake_root();
    write(
        d.path(),
        "proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: sse sse2 avx avx2 fma avx_vnni aes sha_ni\n\n\
         processor\t: 1\nvendor_id\t: GenuineIntel\nflags\t\t: sse sse2 avx avx2 fma aes sha_ni\n\n",
    );
    let isa = isa::read(&Sysroot::new(d.path()).unwrap());
    assert_eq!(isa.family, "x86");
    assert_eq!(isa.widest_vector_bits, Some(256));
    assert!(isa.avx512.is_empty());
    assert!(isa.simd.contains(&"AVX2".to_string()));
    assert!(isa.crypto.contains(&"AES-NI".to_string()));
    assert_eq!(isa.cpus_with_other_flags, vec![1]);
    assert!(isa.has_flag("avx_vnni"));
}

#[test]
fn isa_arm_sve_length_unknown_off_live() {
    let d = fake_root();
    write(
        d.path(),
        "proc/cpuinfo",
        "processor\t: 0\nFeatures\t: fp asimd atomics sve sve2 i8mm bf16\nCPU implementer\t: 0x41\n\
         CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\nCPU revision\t: 1\n\n",
    );
    write(d.path(), "proc/sys/abi/sve_default_vector_length", "16\n");
    let isa = isa::read(&Sysroot::new(d.path()).unwrap());
    assert_eq!(isa.family, "arm");
    assert_eq!(isa.simd, vec!["NEON", "SVE", "SVE2"]);
    assert!(isa.other.contains(&"LSE atomics".to_string()));
    // A recorded root is not the live machine: the length is unknown, said so.
    assert_eq!(isa.sve_vector_bits, None);
    assert!(isa.unavailable["sve_vector_bits"].contains("live"));
    assert_eq!(isa.widest_vector_bits, Some(128));
}

#[test]
fn isa_without_cpuinfo_says_why() {
    let d = fake_root();
    let isa = isa::read(&Sysroot::new(d.path()).unwrap());
    assert!(isa.flags.is_empty());
    assert!(isa.unavailable.contains_key("flags"));
    assert_eq!(isa.widest_vector_bits, None);
}

// -------------------------------------------------------------------- freq

#[test]
fn freq_acpi_cpufreq_turbo_placeholder() {
    let d = fake_root();
    let r = d.path();
    write(
        r,
        "proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8269CY CPU @ 2.50GHz\n\
         cpu MHz\t\t: 1200.000\nflags\t\t: sse2 constant_tsc nonstop_tsc\n\n\
         processor\t: 1\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8269CY CPU @ 2.50GHz\n\
         cpu MHz\t\t: 2400.000\nflags\t\t: sse2 constant_tsc nonstop_tsc\n\n",
    );
    for cpu in 0..2 {
        let b = format!("sys/devices/system/cpu/cpu{cpu}/cpufreq");
        write(r, &format!("{b}/cpuinfo_max_freq"), "2501000\n");
        write(r, &format!("{b}/cpuinfo_min_freq"), "1200000\n");
        write(r, &format!("{b}/scaling_cur_freq"), "1200000\n");
        write(r, &format!("{b}/scaling_driver"), "acpi-cpufreq\n");
        write(r, &format!("{b}/scaling_governor"), "powersave\n");
    }
    write(r, "sys/devices/system/cpu/cpufreq/boost", "1\n");
    let f = freq::read(&Sysroot::new(r).unwrap());
    assert!(f.cpufreq);
    assert_eq!(f.nominal_mhz, Some(2500.0));
    assert_eq!((f.min_khz, f.max_khz), (Some(1_200_000), Some(2_501_000)));
    assert_eq!(f.drivers.len(), 1);
    assert_eq!(f.drivers[0].value, "acpi-cpufreq");
    assert_eq!(f.boost.enabled, Some(true));
    assert!(f.notes.iter().any(|n| n.contains("nominal + 1 MHz")));
    assert!(f.notes.iter().any(|n| n.contains("powersave")));
    let dec = f.declared.unwrap();
    assert_eq!((dec.min_mhz, dec.max_mhz), (1200.0, 2400.0));
    assert!(dec.label.contains("not measured"));
    let tsc = f.tsc.unwrap();
    assert!(tsc.constant && tsc.nonstop && !tsc.known_freq);
    assert!(f.unavailable.contains_key("base_khz"));
}

#[test]
fn freq_hybrid_and_no_turbo() {
    let d = fake_root();
    let r = d.path();
    for (cpu, max) in [(0, 5_200_000), (1, 5_200_000), (2, 3_900_000)] {
        let b = format!("sys/devices/system/cpu/cpu{cpu}/cpufreq");
        write(r, &format!("{b}/cpuinfo_max_freq"), &format!("{max}\n"));
        write(r, &format!("{b}/scaling_driver"), "intel_pstate\n");
        write(
            r,
            &format!("{b}/energy_performance_preference"),
            "balance_performance\n",
        );
        write(r, &format!("{b}/base_frequency"), "1900000\n");
    }
    write(r, "sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
    write(r, "sys/devices/system/cpu/intel_pstate/status", "active\n");
    let f = freq::read(&Sysroot::new(r).unwrap());
    assert_eq!(f.max_khz_groups.len(), 2);
    assert_eq!(f.max_khz_groups[1].cpus.to_string(), "2");
    assert_eq!(f.base_khz, Some(1_900_000));
    assert_eq!(f.boost.enabled, Some(false));
    assert_eq!(f.pstate_status.as_deref(), Some("intel_pstate active"));
    assert_eq!(f.epp[0].value, "balance_performance");
    assert!(f.notes.iter().any(|n| n.contains("hybrid")));
}

#[test]
fn freq_vm_without_cpufreq_says_why() {
    let d = fake_root();
    write(
        d.path(),
        "proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu MHz\t\t: 2000.000\nflags\t\t: sse2 hypervisor tsc_known_freq\n\n",
    );
    let f = freq::read(&Sysroot::new(d.path()).unwrap());
    assert!(!f.cpufreq);
    assert!(f
        .cpufreq_reason
        .as_deref()
        .unwrap()
        .contains("typical of VMs"));
    assert_eq!(f.max_khz, None);
    assert!(f.unavailable.contains_key("max_khz"));
    let dec = f.declared.unwrap();
    assert!(dec.note.unwrap().contains("TSC"));
    assert_eq!(f.boost.enabled, None);
    assert!(f.boost.reason.is_some());
}

// ------------------------------------------------------------------- knobs

#[test]
fn knobs_values_reasons_and_pmu() {
    let d = fake_root();
    let r = d.path();
    write(
        r,
        "sys/kernel/mm/transparent_hugepage/enabled",
        "[always] madvise never\n",
    );
    write(r, "proc/sys/kernel/numa_balancing", "1\n");
    write(r, "proc/sys/kernel/perf_event_paranoid", "2\n");
    write(r, "sys/devices/system/cpu/isolated", "2-3\n");
    write(r, "sys/bus/event_source/devices/cpu/type", "4\n");
    write(
        r,
        "sys/bus/event_source/devices/cpu/caps/pmu_name",
        "skylake\n",
    );
    write(r, "sys/bus/event_source/devices/software/type", "1\n");
    write(
        r,
        "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
        "512\n",
    );
    write(
        r,
        "sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
        "500\n",
    );
    write(
        r,
        "sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages",
        "512\n",
    );
    write(
        r,
        "proc/cmdline",
        "BOOT_IMAGE=/vmlinuz isolcpus=2-3 quiet\n",
    );
    let k = knobs::read(&Sysroot::new(r).unwrap());
    let thp = k.get("thp_enabled").unwrap();
    assert_eq!(thp.value.as_deref(), Some("always"));
    assert_eq!(thp.raw.as_deref(), Some("[always] madvise never"));
    assert!(!thp.why.is_empty());
    assert_eq!(k.value("numa_balancing"), Some("1"));
    assert!(k.get("perf_event_paranoid").unwrap().note.is_some());
    // Missing files: null + reason, never a made-up value.
    let z = k.get("zone_reclaim_mode").unwrap();
    assert!(z.value.is_none() && z.reason.is_some());
    assert_eq!(k.isolated_cpus.as_ref().unwrap().to_string(), "2-3");
    assert_eq!(k.value("cmdline:isolcpus"), Some("2-3"));
    assert_eq!(k.pmu.present, Some(true));
    assert_eq!(k.pmu.pmu_name.as_deref(), Some("skylake"));
    assert_eq!(k.hugepages.len(), 1);
    assert_eq!(
        (
            k.hugepages[0].size_kb,
            k.hugepages[0].nr,
            k.hugepages[0].free
        ),
        (2048, Some(512), Some(500))
    );
    assert_eq!(k.hugepages[0].per_node.len(), 1);
    assert_eq!(k.hugepages[0].per_node[0].node, 1);
}

#[test]
fn knobs_no_pmu_in_vm() {
    let d = fake_root();
    let r = d.path();
    write(
        r,
        "proc/cpuinfo",
        "processor\t: 0\nflags\t\t: sse2 hypervisor\n\n",
    );
    write(r, "sys/bus/event_source/devices/software/type", "1\n");
    write(r, "sys/bus/event_source/devices/tracepoint/type", "2\n");
    let k = knobs::read(&Sysroot::new(r).unwrap());
    assert_eq!(k.pmu.present, Some(false));
    assert!(k.pmu.reason.as_deref().unwrap().contains("VM"));
    assert_eq!(k.pmu.all_devices, vec!["software", "tracepoint"]);
}

#[test]
fn knobs_live() {
    let k = knobs::read(&Sysroot::new("/").unwrap());
    // Every knob has either a value or a reason.
    for knob in &k.knobs {
        assert!(
            knob.value.is_some() || knob.reason.is_some(),
            "{}",
            knob.name
        );
    }
    assert!(k.pmu.present == Some(true) || k.pmu.reason.is_some());
}

// ----------------------------------------------------------------- devices

fn nic_root() -> tempfile::TempDir {
    let d = fake_root();
    let r = d.path();
    let pci = "sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0";
    write(r, &format!("{pci}/numa_node"), "1\n");
    write(r, &format!("{pci}/msi_irqs/100"), "msix\n");
    write(r, &format!("{pci}/msi_irqs/101"), "msix\n");
    write(r, &format!("{pci}/net/eth0/speed"), "25000\n");
    write(r, &format!("{pci}/net/eth0/operstate"), "up\n");
    write(r, "sys/bus/pci/drivers/mlx5_core/bind", "");
    symlink(
        "../../../../bus/pci/drivers/mlx5_core",
        r.join(format!("{pci}/driver")),
    )
    .unwrap();
    symlink(
        "../../../0000:3b:00.0",
        r.join(format!("{pci}/net/eth0/device")),
    )
    .unwrap();
    fs::create_dir_all(r.join("sys/class/net")).unwrap();
    symlink(
        "../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/net/eth0",
        r.join("sys/class/net/eth0"),
    )
    .unwrap();
    write(r, "sys/devices/virtual/net/br0/operstate", "up\n");
    symlink("../../devices/virtual/net/br0", r.join("sys/class/net/br0")).unwrap();
    write(r, "sys/devices/virtual/net/lo/operstate", "unknown\n");
    symlink("../../devices/virtual/net/lo", r.join("sys/class/net/lo")).unwrap();
    write(r, "sys/devices/system/node/node0/cpulist", "0-1\n");
    write(r, "sys/devices/system/node/node1/cpulist", "2-3\n");
    write(
        r,
        "proc/interrupts",
        "           CPU0       CPU1       CPU2       CPU3\n\
         \x20 0:         40          0          0          0  IR-IO-APIC    2-edge      timer\n\
         100:      5000       7000          0          0  IR-PCI-MSI 1572864-edge      mlx5_comp0@pci:0000:3b:00.0\n\
         101:         0       9000          0          1  IR-PCI-MSI 1572865-edge      mlx5_comp1@pci:0000:3b:00.0\n\
         LOC:       100        100        100        100   Local timer interrupts\n",
    );
    write(r, "proc/irq/100/smp_affinity_list", "0-3\n");
    write(r, "proc/irq/100/effective_affinity_list", "0\n");
    write(r, "proc/irq/101/smp_affinity_list", "1\n");
    d
}

#[test]
fn devices_nic_irqs_on_the_wrong_node() {
    let d = nic_root();
    let dv = devices::read(&Sysroot::new(d.path()).unwrap());
    assert_eq!(dv.nics.len(), 2, "lo is skipped");
    let br = dv.nics.iter().find(|n| n.name == "br0").unwrap();
    assert!(br.is_virtual);
    let eth = dv.nics.iter().find(|n| n.name == "eth0").unwrap();
    assert!(!eth.is_virtual);
    assert_eq!(eth.driver.as_deref(), Some("mlx5_core"));
    assert_eq!(eth.pci_address.as_deref(), Some("0000:3b:00.0"));
    assert_eq!(eth.numa_node, Some(1));
    assert_eq!(eth.speed_mbps, Some(25000));
    let ids: Vec<u32> = eth.irqs.iter().map(|i| i.irq).collect();
    assert_eq!(ids, vec![100, 101]);
    assert_eq!(eth.irqs[0].total, Some(12000));
    assert_eq!(
        eth.irqs[0]
            .effective_affinity_list
            .as_ref()
            .unwrap()
            .to_string(),
        "0"
    );
    assert_eq!(eth.served_cpus.to_string(), "0-1,3");
    assert_eq!(eth.irq_nodes, vec![0, 1]);
    let w = eth.warning.as_deref().unwrap();
    assert!(w.contains("node 1") && w.contains("0-1"), "{w}");
    assert_eq!(dv.warnings.len(), 1);
    let t = dv.interrupts.unwrap();
    assert_eq!(t.per_cpu.len(), 4);
    assert_eq!(t.per_cpu[1].device, 16000);
    assert_eq!(t.per_cpu[1].all, 16100);
    assert_eq!(t.per_node[0].device, 5040 + 16000);
    assert_eq!(t.per_node[1].device, 1);
}

#[test]
fn devices_no_affinity_and_live() {
    let d = nic_root();
    let r = d.path();
    fs::write(
        r.join("sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/numa_node"),
        "-1\n",
    )
    .unwrap();
    let dv = devices::read(&Sysroot::new(r).unwrap());
    let eth = dv.nics.iter().find(|n| n.name == "eth0").unwrap();
    assert_eq!(eth.numa_node, Some(-1));
    assert!(eth.numa_affinity.starts_with("no affinity"));
    assert!(eth.warning.is_none());

    let live = devices::read(&Sysroot::new("/").unwrap());
    assert!(live.nics.iter().all(|n| n.name != "lo"));
    assert!(live.interrupts.is_some());
}

// --------------------------------------------------------------- numa-maps

/// A numa_maps in the seed machines' shape (FT2500 seed 002: a process bound
/// to node 6 whose memory spilled to node 2), plus a hugetlb and a file mapping.
const NUMA_MAPS: &str = "\
00400000 default file=/usr/sbin/mysqld mapped=3000 mapmax=4 N6=3000 kernelpagesize_kB=4
01c00000 default heap anon=1270166 dirty=1270166 active=9 N2=1270166 kernelpagesize_kB=4
7f0000000000 bind:6 anon=3662400 dirty=3662400 N6=3662400 kernelpagesize_kB=4
7f1000000000 default file=/dev/hugepages/pool huge dirty=8 N6=8 kernelpagesize_kB=2048
7f2000000000 default file=/usr/lib64/lib\\040with\\040space.so mapped=20 mapmax=1580 N6=20 kernelpagesize_kB=4
7ffd00000000 default stack anon=33 dirty=33 N6=33 kernelpagesize_kB=4
7ffe00000000 default
";

fn numa_maps_root() -> tempfile::TempDir {
    let d = fake_root();
    let r = d.path();
    write(r, "proc/54723/numa_maps", NUMA_MAPS);
    write(
        r,
        "proc/54723/status",
        "Name:\tmysqld\nThreads:\t120\nCpus_allowed_list:\t48-55\nMems_allowed_list:\t0-15\nVmRSS:\t19000000 kB\n",
    );
    write(
        r,
        "proc/54723/sched",
        "mysqld (54723, #threads: 120)\n---\nnuma_preferred_nid : 6\nnuma_pages_migrated : 12\n\
         total_numa_faults : 99\ncurrent_node=6, numa_group_id=0\n\
         numa_faults node=6 task_private=50 task_shared=2 group_private=0 group_shared=0\n",
    );
    write(
        r,
        "proc/vmstat",
        "nr_free_pages 1\nnuma_hit 100\nnuma_miss 7\n",
    );
    d
}

#[test]
fn numa_maps_fixture_summary() {
    let d = numa_maps_root();
    let p = process::read(&Sysroot::new(d.path()).unwrap(), 54723).unwrap();
    let s = &p.summary;
    let node = |n: usize| {
        s.per_node
            .iter()
            .find(|u| u.node == n)
            .unwrap()
            .amount
            .clone()
    };
    assert_eq!(node(2).pages, 1_270_166);
    assert_eq!(node(6).pages, 3000 + 3_662_400 + 8 + 20 + 33);
    // Huge pages are counted at 2 MiB, the rest at 4 KiB.
    assert_eq!(
        node(6).bytes,
        (3000 + 3_662_400 + 20 + 33) * 4096 + 8 * 2 * 1024 * 1024
    );
    assert_eq!(s.huge.pages, 8);
    assert_eq!(s.anon.pages, 1_270_166 + 3_662_400 + 33);
    assert_eq!(s.dirty.pages, 1_270_166 + 3_662_400 + 8 + 33);
    assert_eq!(s.mapped.pages, 3020);
    assert_eq!(s.mapmax, 1580);
    // active= absent means all pages active (hugetlb excluded).
    assert_eq!(s.active.pages, 3000 + 9 + 3_662_400 + 20 + 33);
    assert_eq!(s.mappings, 7);
    assert_eq!(s.mappings_resident, 6);
    assert_eq!(s.page_sizes_kb, vec![4, 2048]);
    assert_eq!(s.policies[0].policy, "bind:6");
    assert!((node(2).gib() - 4.85).abs() < 0.01, "seed says 4.85 GB");
    assert_eq!(
        p.mappings[4].file.as_deref(),
        Some("/usr/lib64/lib\\040with\\040space.so")
    );
    assert_eq!(p.status.name.as_deref(), Some("mysqld"));
    assert_eq!(
        p.status.cpus_allowed_list.as_ref().unwrap().to_string(),
        "48-55"
    );
    assert_eq!(p.status.mems_allowed_list.as_ref().unwrap().len(), 16);
    let sc = p.sched.as_ref().unwrap();
    assert_eq!(sc.numa_preferred_nid, Some(6));
    assert_eq!(sc.faults[0].task_private, 50);
    assert_eq!(p.vmstat_numa.get("numa_miss"), Some(&7));
}

#[test]
fn numa_maps_command_text_and_json() {
    let d = numa_maps_root();
    let root = d.path().to_str().unwrap();
    let out = bin::command()
        .args(["--sysroot", root, "numa-maps", "54723"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("pid 54723 (mysqld)"));
    assert!(text.contains("allowed CPUs : 48-55"));
    assert!(text.contains("allowed nodes: 0-15"));
    let n2 = text.lines().find(|l| l.starts_with("N2 ")).unwrap();
    assert!(n2.contains("1270166") && n2.contains("4.85 GiB"), "{n2}");
    assert!(text.contains("huge"));
    let out = bin::command()
        .args(["--sysroot", root, "numa-maps", "54723", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pid"], 54723);
    assert_eq!(v["summary"]["huge"]["pages"], 8);
}

#[test]
fn numa_maps_bad_pids_fail_in_one_line() {
    let d = numa_maps_root();
    let root = d.path().to_str().unwrap();
    for (pid, needle) in [
        ("abc", "bad PID"),
        ("-3", "bad PID"),
        ("0", "bad PID"),
        ("99999999999", "bad PID"),
        ("4242", "no process with PID 4242"),
    ] {
        let out = bin::command()
            .args(["--sysroot", root, "numa-maps", "--", pid])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{pid}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("cpuscope: error:") && err.contains(needle),
            "{err}"
        );
    }
    // A process whose numa_maps cannot be read.
    write(d.path(), "proc/77/status", "Name:\tx\n");
    let out = bin::command()
        .args(["--sysroot", root, "numa-maps", "77"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("numa_maps does not exist"), "{err}");
}

#[test]
fn numa_maps_live_self() {
    let pid = std::process::id();
    let p = process::read(&Sysroot::new("/").unwrap(), pid).unwrap();
    assert_eq!(p.pid, pid);
    assert!(p.summary.total.pages > 0);
    assert!(p.summary.mappings_resident > 0);
    assert!(!p.summary.per_node.is_empty());
    let cpus = p.status.cpus_allowed_list.as_ref().unwrap();
    assert!(!cpus.is_empty());
    assert!(p.status.name.is_some());
    // Per-node pages add up to the total.
    let sum: u64 = p.summary.per_node.iter().map(|n| n.amount.pages).sum();
    assert_eq!(sum, p.summary.total.pages);
}

#[test]
fn info_sections_render_live() {
    let sys = Sysroot::new("/").unwrap();
    let info = cpuscope::machine::discover(&sys).unwrap();
    use cpuscope::report::info_sections as s;
    assert!(s::identity(&info).starts_with("Identity\n"));
    assert!(s::isa(&info).contains("SIMD:"));
    assert!(s::frequency(&info).contains("not measured"));
    assert!(s::knobs(&info).contains("thp_enabled"));
    assert!(s::devices(&info).starts_with("Network devices"));
}

/// The NUMA memory section of this machine: node meminfo, /proc/zoneinfo
/// watermarks, the vm reclaim knobs decoded, numastat; one line per node.
#[test]
fn numa_memory_live() {
    let sys = Sysroot::new("/").unwrap();
    if !sys.exists("/sys/devices/system/node/node0") {
        // A kernel without NUMA: nothing to read (the section is absent).
        skip::skip_or_fail(
            "numa_memory_live: no /sys/devices/system/node/node0 (a kernel without NUMA)",
        );
        return;
    }
    let info = cpuscope::machine::discover(&sys).unwrap();
    let mm = &info.numa_memory;
    assert_eq!(mm.nodes.len(), info.numa_nodes.len());
    let z = mm.zone_reclaim_mode.as_ref().expect("zone_reclaim_mode");
    assert!(!z.meaning.is_empty());
    assert!(mm.min_free_kbytes.is_some());
    assert!(mm.page_bytes.is_some());
    for n in &mm.nodes {
        assert!(n.total_bytes.is_some() && n.free_bytes.is_some());
        if n.total_bytes != Some(0) {
            assert!(
                !n.zones.is_empty(),
                "node {}: zones from /proc/zoneinfo",
                n.node
            );
            assert!(n.watermark_pages("high").is_some());
        }
        assert!(n.numastat.is_some(), "node {}", n.node);
    }
    let out = bin::command().arg("info").output().unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    let sec: Vec<&str> = t
        .lines()
        .skip_while(|l| !l.starts_with("NUMA memory"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(sec.iter().any(|l| l.contains("zone_reclaim_mode")), "{t}");
    assert!(sec.iter().any(|l| l.contains("min/low/high")), "{t}");
    assert!(sec.len() <= 4 + info.numa_nodes.len().min(4) + 4, "{t}");
    let j = bin::command().args(["info", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert!(v["numa_memory"]["nodes"][0]["numastat"]["numa_hit"].is_u64());
    assert!(v["numa_memory"]["zone_reclaim_mode"]["bits"].is_array());
}

/// `numa-maps PID` shows the process's numastat per node (numastat -p).
#[test]
fn numa_maps_numastat_of_this_process() {
    let pid = std::process::id().to_string();
    let out = bin::command().args(["numa-maps", &pid]).output().unwrap();
    if !out.status.success() {
        // A kernel without NUMA: one line saying so.
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        skip::skip_or_fail(&format!(
            "numa_maps_numastat_of_this_process: numa-maps failed: {}",
            err.trim_end()
        ));
        return;
    }
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.contains("numastat -p (MiB)"), "{t}");
    for k in ["Huge", "Heap", "Stack", "Private"] {
        assert!(t.lines().any(|l| l.trim_start().starts_with(k)), "{k}: {t}");
    }
    let j = bin::command()
        .args(["numa-maps", &pid, "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    let per = v["numastat"].as_array().unwrap();
    assert!(!per.is_empty());
    let total: u64 = per.iter().map(|n| n["total_bytes"].as_u64().unwrap()).sum();
    assert_eq!(total, v["summary"]["total"]["bytes"].as_u64().unwrap());
}

#[test]
fn numastat_p_by_kind() {
    let maps = process::parse_numa_maps(
        "00400000 default file=/bin/x mapped=2 N0=2 kernelpagesize_kB=4\n\
         01000000 default heap anon=3 dirty=3 N0=1 N1=2 kernelpagesize_kB=4\n\
         7ffd0000 default stack anon=1 dirty=1 N1=1 kernelpagesize_kB=4\n\
         7f000000 default file=/dev/hugepages/x huge dirty=1 N1=1 kernelpagesize_kB=2048\n",
    );
    let s = process::numastat_of(&maps);
    assert_eq!(s.len(), 2);
    assert_eq!(
        (s[0].node, s[0].private_bytes, s[0].heap_bytes),
        (0, 8192, 4096)
    );
    assert_eq!(
        (s[1].heap_bytes, s[1].stack_bytes, s[1].huge_bytes),
        (8192, 4096, 2 << 20)
    );
    assert_eq!(s[1].total_bytes, 8192 + 4096 + (2 << 20));
}

// ---------------------------------------------------------------- caches

/// An arm64 kernel booted with a device tree that describes no caches (QEMU
/// virt, the ARM lab's guests): cpuN/cache lists L1d and L1i with a level, a
/// type and a sharing list, no size. The core's knowledge-base entry (Neoverse
/// N1: 64 KiB L1d/L1i, 1 MiB L2 per core) fills the sizes and adds the private
/// L2, each labelled with its entry and source; nothing is invented where the
/// entry is silent.
#[test]
fn caches_a_device_tree_leaves_out_come_from_the_knowledge_base() {
    let d = fake_root();
    let r = d.path();
    write(r, "sys/devices/system/cpu/online", "0-3\n");
    write(r, "sys/devices/system/cpu/possible", "0-3\n");
    write(r, "sys/devices/system/cpu/present", "0-3\n");
    for cpu in 0..4 {
        let c = format!("sys/devices/system/cpu/cpu{cpu}");
        write(
            r,
            &format!("{c}/regs/identification/midr_el1"),
            "0x00000000414fd0c1\n",
        );
        write(
            r,
            &format!("{c}/topology/physical_package_id"),
            &format!("{}\n", cpu / 2),
        );
        write(
            r,
            &format!("{c}/topology/cluster_id"),
            &format!("{}\n", cpu / 2),
        );
        write(
            r,
            &format!("{c}/topology/core_id"),
            &format!("{}\n", cpu % 2),
        );
        write(
            r,
            &format!("{c}/topology/thread_siblings_list"),
            &format!("{cpu}\n"),
        );
        write(
            r,
            &format!("{c}/topology/core_siblings_list"),
            &format!("{}-{}\n", cpu / 2 * 2, cpu / 2 * 2 + 1),
        );
        for (i, kind) in [(0, "Data"), (1, "Instruction")] {
            write(r, &format!("{c}/cache/index{i}/level"), "1\n");
            write(r, &format!("{c}/cache/index{i}/type"), &format!("{kind}\n"));
            write(
                r,
                &format!("{c}/cache/index{i}/shared_cpu_list"),
                &format!("{cpu}\n"),
            );
            write(
                r,
                &format!("{c}/cache/index{i}/shared_cpu_map"),
                &format!("{:x}\n", 1u32 << cpu),
            );
        }
    }
    let sys = Sysroot::new(r).unwrap();
    let info = cpuscope::machine::discover(&sys).unwrap();
    assert_eq!(info.uarch.primary().unwrap().id, "neoverse-n1");
    let named = |n: &str| info.caches_named(n);
    for n in ["L1d", "L1i"] {
        let v = named(n);
        assert_eq!(v.len(), 4, "{n}");
        for c in v {
            assert_eq!(c.size_bytes, Some(64 << 10), "{n}");
            assert!(!c.documented_only);
            let src = c.size_source.as_deref().unwrap();
            assert!(
                src.contains("Neoverse N1") && src.contains("not reported by the kernel"),
                "{src}"
            );
        }
    }
    let l2 = named("L2");
    assert_eq!(l2.len(), 4, "one documented private L2 per core");
    for c in &l2 {
        assert!(c.documented_only);
        assert_eq!(c.size_bytes, Some(1 << 20));
        assert_eq!(c.shared_cpu_list.len(), 1);
    }
    // No L3 figure in the entry: no L3 invented.
    assert!(named("L3").is_empty());
    // info shows the sizes marked and their source.
    let out = bin::command()
        .args(["info", "--sysroot", r.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("64 KiB*"), "{text}");
    assert!(
        text.contains("* L1d, L1i: documented, not reported by the kernel: Arm Neoverse N1")
            && text.contains("* L2: documented, not reported by the kernel: Arm Neoverse N1"),
        "{text}"
    );
    // Sizes the kernel does report are never replaced.
    let kb = info.caches_named("L1d")[0].size_bytes;
    write(r, "sys/devices/system/cpu/cpu0/cache/index0/size", "32K\n");
    let info = cpuscope::machine::discover(&sys).unwrap();
    let l1d0 = info
        .caches_named("L1d")
        .into_iter()
        .find(|c| c.shared_cpu_list.contains(0))
        .unwrap();
    assert_eq!(l1d0.size_bytes, Some(32 << 10));
    assert!(l1d0.size_source.is_none());
    assert_eq!(kb, Some(64 << 10));
}
