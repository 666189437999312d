//! A CPU set and a memory policy for a *child process* (`cpuscope tune`):
//! checked and turned into the kernel's masks before fork, applied in the
//! child between fork and exec with two raw syscalls (no allocation, no
//! lock: async-signal-safe), and written as the `numactl` / `taskset`
//! command line that reproduces it by hand.
//!
//! Both settings are inherited across exec and by every process and thread
//! the command starts, exactly as `numactl --physcpubind=… --membind=… CMD`
//! would leave them.

use super::mempolicy::{self, MemPolicy, NodeMask};
use super::pin::{mask_from_set, WORD_BITS};
use crate::base::cpuset::{CpuSet, MAX_ID};
use anyhow::{bail, Result};

/// Where a child runs and where its memory goes.
#[derive(Clone, Debug)]
pub struct Binding {
    /// CPUs the child may run on (None: inherited, no binding).
    pub cpus: Option<CpuSet>,
    /// Its memory policy (None: inherited).
    pub memory: Option<MemPolicy>,
    cpu_mask: Vec<libc::c_ulong>,
    mem_mode: libc::c_int,
    node_mask: Vec<libc::c_ulong>,
    maxnode: libc::c_ulong,
}

impl Binding {
    /// No binding: the child inherits this process's CPUs and policy.
    pub fn none() -> Binding {
        Binding {
            cpus: None,
            memory: None,
            cpu_mask: Vec::new(),
            mem_mode: 0,
            node_mask: Vec::new(),
            maxnode: 0,
        }
    }

    /// Check `cpus` and `memory` (a node that does not exist or is outside
    /// this process's allowed nodes is a one-line error) and prepare the masks.
    pub fn new(cpus: Option<&CpuSet>, memory: Option<&MemPolicy>) -> Result<Binding> {
        let mut b = Binding::none();
        if let Some(set) = cpus {
            if set.is_empty() {
                bail!("cannot bind to an empty CPU list");
            }
            let max = set.iter().last().unwrap_or(0);
            if max > MAX_ID {
                bail!("cannot bind to CPUs {set}: CPU {max} is larger than {MAX_ID}");
            }
            b.cpu_mask = mask_from_set(set, max / WORD_BITS + 1);
            b.cpus = Some(set.clone());
        }
        if let Some(policy) = memory {
            if let Some(why) = mempolicy::numa_unavailable_reason() {
                bail!("cannot use memory policy {policy}: {why}");
            }
            mempolicy::check_nodes(policy)?;
            b.mem_mode = policy.mode();
            let nodes = policy.nodes();
            if !nodes.is_empty() {
                let m = NodeMask::from_set(&nodes);
                b.node_mask = m.words;
                b.maxnode = m.maxnode;
            }
            b.memory = Some(policy.clone());
        }
        Ok(b)
    }

    /// Apply to the calling thread (in a forked child, before exec): 0, or
    /// the errno of the syscall that failed. Only raw syscalls on buffers
    /// made before fork.
    pub fn apply_raw(&self) -> i32 {
        if !self.cpu_mask.is_empty() {
            let bytes = self.cpu_mask.len() * std::mem::size_of::<libc::c_ulong>();
            // SAFETY: the mask is `bytes` long and readable; tid 0 = this thread.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_sched_setaffinity,
                    0 as libc::pid_t,
                    bytes,
                    self.cpu_mask.as_ptr(),
                )
            };
            if r != 0 {
                // SAFETY: reading errno of this thread.
                return unsafe { *libc::__errno_location() };
            }
        }
        if self.memory.is_some() {
            let (ptr, maxnode) = if self.node_mask.is_empty() {
                (std::ptr::null(), 0)
            } else {
                (self.node_mask.as_ptr(), self.maxnode)
            };
            // SAFETY: the mask holds at least maxnode-1 bits (or NULL with 0).
            let r = unsafe { libc::syscall(libc::SYS_set_mempolicy, self.mem_mode, ptr, maxnode) };
            if r != 0 {
                // SAFETY: reading errno of this thread.
                return unsafe { *libc::__errno_location() };
            }
        }
        0
    }

    /// The shell command line that runs `argv` (with `env` set) bound the
    /// same way with the standard tools: plain, `taskset -c`, or `numactl`.
    pub fn command_line(&self, env: &[(String, String)], argv: &[String]) -> String {
        let mut parts: Vec<String> = env
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_quote(v)))
            .collect();
        match (&self.cpus, &self.memory) {
            (None, None) => {}
            (Some(c), None) => {
                parts.push("taskset".into());
                parts.push("-c".into());
                parts.push(c.to_string());
            }
            (cpus, Some(m)) => {
                parts.push("numactl".into());
                if let Some(c) = cpus {
                    parts.push(format!("--physcpubind={c}"));
                }
                match m {
                    MemPolicy::Default => {}
                    MemPolicy::Local => parts.push("--localalloc".into()),
                    MemPolicy::Bind(n) => parts.push(format!("--membind={n}")),
                    MemPolicy::Preferred(n) => parts.push(format!("--preferred={n}")),
                    MemPolicy::Interleave(n) => parts.push(format!("--interleave={n}")),
                }
                parts.push("--".into());
            }
        }
        parts.extend(argv.iter().map(|a| shell_quote(a)));
        parts.join(" ")
    }
}

/// `s` as one word for a POSIX shell: as is when it holds only safe
/// characters, else in single quotes (a `'` written `'\''`).
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("abc-1.2/x"), "abc-1.2/x");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("echo \"7^99\" | bc"), "'echo \"7^99\" | bc'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn command_lines() {
        let cmd = argv(&["bash", "-c", "echo \"7^9\" | bc"]);
        assert_eq!(
            Binding::none().command_line(&[], &cmd),
            "bash -c 'echo \"7^9\" | bc'"
        );
        let mut b = Binding::none();
        b.cpus = Some(CpuSet::parse("0-3").unwrap());
        assert_eq!(b.command_line(&[], &cmd[..1]), "taskset -c 0-3 bash");
        b.memory = Some(MemPolicy::Bind(CpuSet::from_ids([1])));
        let env = vec![("OMP_NUM_THREADS".to_string(), "4".to_string())];
        assert_eq!(
            b.command_line(&env, &cmd[..1]),
            "OMP_NUM_THREADS=4 numactl --physcpubind=0-3 --membind=1 -- bash"
        );
        b.memory = Some(MemPolicy::Interleave(CpuSet::parse("0-1").unwrap()));
        assert!(b.command_line(&[], &cmd[..1]).contains("--interleave=0-1"));
        b.memory = Some(MemPolicy::Preferred(2));
        b.cpus = None;
        assert_eq!(
            b.command_line(&[], &cmd[..1]),
            "numactl --preferred=2 -- bash"
        );
    }

    #[test]
    fn checks() {
        assert!(Binding::new(Some(&CpuSet::new()), None).is_err());
        let b = Binding::new(Some(&CpuSet::from_ids([0])), None).unwrap();
        assert_eq!(b.cpu_mask, vec![1]);
    }
}
