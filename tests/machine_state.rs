//! SMT and turbo switches (`placement::machine_state`) on fake sysfs trees in
//! temporary directories: write, restore on drop / error / panic / signal,
//! refusal with the kernel's reason, refusal without root (injected, since
//! tests may run as root where a read-only file is still writable), and the
//! inverted `intel_pstate/no_turbo`.
//!
//! The restore registry is process-wide and the signal test raises SIGINT,
//! so every test takes `LOCK` (one at a time in this binary).

use cpuscope::base::Sysroot;
use cpuscope::placement::machine_state::{
    self, boost_control, plan, smt_control, Knob, Privilege, Setting, Want,
};
use std::fs;
use std::path::Path;
use std::sync::Mutex;

static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

const CPU: &str = "sys/devices/system/cpu";

/// A fake sysfs root holding `files` (path under the CPU directory, contents).
fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Sysroot) {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join(CPU)).unwrap();
    for (p, v) in files {
        let f = d.path().join(CPU).join(p);
        fs::create_dir_all(f.parent().unwrap()).unwrap();
        fs::write(f, format!("{v}\n")).unwrap();
    }
    let sys = Sysroot::new(d.path()).unwrap();
    (d, sys)
}

fn read(d: &Path, p: &str) -> String {
    fs::read_to_string(d.join(CPU).join(p))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn smt_switch_writes_and_restores_on_drop() {
    let _l = lock();
    let (d, sys) = tree(&[("smt/control", "on")]);
    let mut p = plan(&sys, Knob::Smt, Want::Both, Privilege::Root).unwrap();
    assert_eq!(p.found, Some(Setting::On));
    // Current state first, then the other.
    assert_eq!(p.settings, vec![Some(Setting::On), Some(Setting::Off)]);
    let sw = p.switch.as_mut().expect("both is a change");
    sw.set(Setting::On).unwrap();
    assert_eq!(read(d.path(), "smt/control"), "on");
    sw.set(Setting::Off).unwrap();
    assert_eq!(read(d.path(), "smt/control"), "off");
    drop(p);
    assert_eq!(read(d.path(), "smt/control"), "on");
}

#[test]
fn smt_off_found_off_is_restored_to_off() {
    let _l = lock();
    let (d, sys) = tree(&[("smt/control", "off")]);
    let mut p = plan(&sys, Knob::Smt, Want::Both, Privilege::Root).unwrap();
    assert_eq!(p.settings, vec![Some(Setting::Off), Some(Setting::On)]);
    p.switch.as_mut().unwrap().set(Setting::On).unwrap();
    assert_eq!(read(d.path(), "smt/control"), "on");
    p.switch.as_mut().unwrap().restore().unwrap();
    assert_eq!(read(d.path(), "smt/control"), "off");
}

fn measure_then_fail(sys: &Sysroot) -> anyhow::Result<()> {
    let mut p = plan(sys, Knob::Smt, Want::Off, Privilege::Root)?;
    p.switch.as_mut().unwrap().set(Setting::Off)?;
    anyhow::bail!("the measurement failed")
}

#[test]
fn switch_restores_on_the_error_path_and_on_panic() {
    let _l = lock();
    let (d, sys) = tree(&[("smt/control", "on")]);
    assert!(measure_then_fail(&sys).is_err());
    assert_eq!(read(d.path(), "smt/control"), "on");

    let sys2 = sys.clone();
    let r = std::panic::catch_unwind(move || {
        let mut p = plan(&sys2, Knob::Smt, Want::Off, Privilege::Root).unwrap();
        p.switch.as_mut().unwrap().set(Setting::Off).unwrap();
        assert_eq!(
            fs::read_to_string(sys2.path("/sys/devices/system/cpu/smt/control")).unwrap(),
            "off"
        );
        panic!("boom");
    });
    assert!(r.is_err());
    assert_eq!(read(d.path(), "smt/control"), "on");
}

#[test]
fn the_signal_registry_restores_while_the_guard_is_alive() {
    let _l = lock();
    let (d, sys) = tree(&[("smt/control", "on"), ("intel_pstate/no_turbo", "0")]);
    let mut smt = plan(&sys, Knob::Smt, Want::Off, Privilege::Root).unwrap();
    let mut turbo = plan(&sys, Knob::Turbo, Want::Off, Privilege::Root).unwrap();
    smt.switch.as_mut().unwrap().set(Setting::Off).unwrap();
    turbo.switch.as_mut().unwrap().set(Setting::Off).unwrap();
    assert_eq!(read(d.path(), "smt/control"), "off");
    assert_eq!(read(d.path(), "intel_pstate/no_turbo"), "1");

    // What the SIGINT/SIGTERM handler and the panic hook call.
    assert_eq!(machine_state::restore_registered_under(d.path()), 2);
    assert_eq!(read(d.path(), "smt/control"), "on");
    assert_eq!(read(d.path(), "intel_pstate/no_turbo"), "0");

    // A real SIGINT through the installed handler.
    fs::write(d.path().join(CPU).join("smt/control"), "off").unwrap();
    machine_state::install_signal_restore().unwrap();
    // SAFETY: raise has no preconditions; the handler only writes files.
    assert_eq!(unsafe { libc::raise(libc::SIGINT) }, 0);
    assert_eq!(read(d.path(), "smt/control"), "on");

    // Dropped guards leave the registry: nothing is written afterwards.
    drop(smt);
    drop(turbo);
    fs::write(d.path().join(CPU).join("smt/control"), "off").unwrap();
    assert_eq!(machine_state::restore_registered_under(d.path()), 0);
    assert_eq!(read(d.path(), "smt/control"), "off");
}

#[test]
fn refuses_with_the_kernels_reason() {
    let _l = lock();
    for (v, why) in [
        ("notsupported", "exposes no SMT"),
        ("notimplemented", "implements no SMT control"),
    ] {
        let (d, sys) = tree(&[("smt/control", v)]);
        for w in [Want::On, Want::Off, Want::Both] {
            let e = plan(&sys, Knob::Smt, w, Privilege::Root)
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("says '{v}'")) && e.contains(why), "{e}");
            assert!(e.starts_with("--smt "), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        assert_eq!(read(d.path(), "smt/control"), v);
        // as-is never reads the switch.
        let p = plan(&sys, Knob::Smt, Want::AsIs, Privilege::User(1000)).unwrap();
        assert_eq!(p.settings, vec![None]);
        assert!(p.switch.is_none());
    }

    let (d, sys) = tree(&[("smt/control", "forceoff")]);
    for w in [Want::On, Want::Both] {
        let e = plan(&sys, Knob::Smt, w, Privilege::Root)
            .unwrap_err()
            .to_string();
        assert!(e.contains("forceoff") && e.contains("reboot"), "{e}");
    }
    // Off is already the state: measured, labelled, nothing written.
    let p = plan(&sys, Knob::Smt, Want::Off, Privilege::Root).unwrap();
    assert_eq!(p.settings, vec![Some(Setting::Off)]);
    assert!(p.switch.is_none());
    assert_eq!(read(d.path(), "smt/control"), "forceoff");

    let (_d, sys) = tree(&[]);
    let e = plan(&sys, Knob::Smt, Want::Both, Privilege::Root)
        .unwrap_err()
        .to_string();
    assert!(e.contains("smt/control is absent"), "{e}");
    let e = plan(&sys, Knob::Turbo, Want::Off, Privilege::Root)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--turbo off") && e.contains("no boost switch"),
        "{e}"
    );
}

#[test]
fn without_root_it_says_what_it_needs_and_changes_nothing() {
    let _l = lock();
    let (d, sys) = tree(&[("smt/control", "on"), ("cpufreq/boost", "1")]);
    let user = Privilege::User(1000);
    let e = plan(&sys, Knob::Smt, Want::Both, user)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("needs root")
            && e.contains("writable /sys/devices/system/cpu/smt/control")
            && e.contains("uid 1000")
            && e.contains("--smt as-is"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
    let e = plan(&sys, Knob::Turbo, Want::Off, user)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("needs root") && e.contains("cpufreq/boost"),
        "{e}"
    );
    assert_eq!(read(d.path(), "smt/control"), "on");
    assert_eq!(read(d.path(), "cpufreq/boost"), "1");
    // Asking for the state already in force is no change: allowed, labelled.
    let p = plan(&sys, Knob::Smt, Want::On, user).unwrap();
    assert_eq!(p.settings, vec![Some(Setting::On)]);
    assert!(p.switch.is_none());
    // And the guard itself refuses without root.
    let c = smt_control(&sys).unwrap();
    assert!(c.take(user).is_err());
}

#[test]
fn boost_inversion_for_intel_pstate_no_turbo() {
    let _l = lock();
    // no_turbo = 0 means turbo ON.
    let (d, sys) = tree(&[("intel_pstate/no_turbo", "0"), ("cpufreq/boost", "1")]);
    let c = boost_control(&sys).unwrap();
    assert_eq!(c.current, Some(Setting::On));
    assert_eq!(c.files.len(), 1, "no_turbo wins, as machine::freq reads it");
    assert!(c.files[0].rel.ends_with("intel_pstate/no_turbo"));
    let mut p = plan(&sys, Knob::Turbo, Want::Both, Privilege::Root).unwrap();
    assert_eq!(p.settings, vec![Some(Setting::On), Some(Setting::Off)]);
    p.switch.as_mut().unwrap().set(Setting::Off).unwrap();
    assert_eq!(read(d.path(), "intel_pstate/no_turbo"), "1");
    assert_eq!(read(d.path(), "cpufreq/boost"), "1", "untouched");
    // machine::freq agrees that turbo is off now.
    let f = cpuscope::machine::freq::read(&sys);
    assert_eq!(f.boost.enabled, Some(false));
    drop(p);
    assert_eq!(read(d.path(), "intel_pstate/no_turbo"), "0");

    let (d, sys) = tree(&[("intel_pstate/no_turbo", "1")]);
    assert_eq!(boost_control(&sys).unwrap().current, Some(Setting::Off));
    let mut p = plan(&sys, Knob::Turbo, Want::On, Privilege::Root).unwrap();
    p.switch.as_mut().unwrap().set(Setting::On).unwrap();
    assert_eq!(read(d.path(), "intel_pstate/no_turbo"), "0");
    drop(p);
    assert_eq!(read(d.path(), "intel_pstate/no_turbo"), "1");
}

#[test]
fn per_policy_boost_files_switch_together_and_restore_each() {
    let _l = lock();
    let (d, sys) = tree(&[
        ("cpufreq/policy0/boost", "1"),
        ("cpufreq/policy2/boost", "0"),
    ]);
    let c = boost_control(&sys).unwrap();
    assert_eq!(c.files.len(), 2);
    assert_eq!(c.current, None, "mixed");
    let mut p = plan(&sys, Knob::Turbo, Want::Both, Privilege::Root).unwrap();
    assert_eq!(p.settings, vec![Some(Setting::On), Some(Setting::Off)]);
    let sw = p.switch.as_mut().unwrap();
    sw.set(Setting::On).unwrap();
    assert_eq!(read(d.path(), "cpufreq/policy0/boost"), "1");
    assert_eq!(read(d.path(), "cpufreq/policy2/boost"), "1");
    sw.set(Setting::Off).unwrap();
    assert_eq!(read(d.path(), "cpufreq/policy0/boost"), "0");
    assert_eq!(read(d.path(), "cpufreq/policy2/boost"), "0");
    drop(p);
    assert_eq!(read(d.path(), "cpufreq/policy0/boost"), "1");
    assert_eq!(read(d.path(), "cpufreq/policy2/boost"), "0");

    let (d, sys) = tree(&[("cpufreq/boost", "0")]);
    let mut p = plan(&sys, Knob::Turbo, Want::On, Privilege::Root).unwrap();
    p.switch.as_mut().unwrap().set(Setting::On).unwrap();
    assert_eq!(read(d.path(), "cpufreq/boost"), "1");
    drop(p);
    assert_eq!(read(d.path(), "cpufreq/boost"), "0");
}
