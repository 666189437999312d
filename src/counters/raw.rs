//! The kernel interface: `struct perf_event_attr` as laid out in
//! `linux/perf_event.h`, the `perf_event_open` system call and the ioctls
//! cpuscope uses. Everything unsafe about counters lives here.

use std::os::fd::{FromRawFd, OwnedFd};

/// `perf_event_attr.type` values.
pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_TRACEPOINT: u32 = 2;
pub const PERF_TYPE_HW_CACHE: u32 = 3;
pub const PERF_TYPE_RAW: u32 = 4;
pub const PERF_TYPE_BREAKPOINT: u32 = 5;

/// `read_format` bits.
pub const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
pub const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
pub const PERF_FORMAT_ID: u64 = 1 << 2;
pub const PERF_FORMAT_GROUP: u64 = 1 << 3;

/// The read format of every group cpuscope opens.
pub const GROUP_READ_FORMAT: u64 = PERF_FORMAT_GROUP
    | PERF_FORMAT_TOTAL_TIME_ENABLED
    | PERF_FORMAT_TOTAL_TIME_RUNNING
    | PERF_FORMAT_ID;

/// Bits of the flags word (the bitfield after `read_format`).
pub const FLAG_DISABLED: u64 = 1 << 0;
pub const FLAG_INHERIT: u64 = 1 << 1;
pub const FLAG_EXCLUDE_USER: u64 = 1 << 4;
pub const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
pub const FLAG_EXCLUDE_HV: u64 = 1 << 6;
pub const FLAG_ENABLE_ON_EXEC: u64 = 1 << 12;

/// Sizes of published versions of the struct.
pub const PERF_ATTR_SIZE_VER5: u32 = 112;
pub const PERF_ATTR_SIZE_VER8: u32 = 136;

/// `_IO('$', 0)`, `_IO('$', 1)`, `_IO('$', 3)`.
pub const PERF_EVENT_IOC_ENABLE: u64 = 0x2400;
pub const PERF_EVENT_IOC_DISABLE: u64 = 0x2401;
pub const PERF_EVENT_IOC_RESET: u64 = 0x2403;
/// `_IOR('$', 7, __u64 *)`.
pub const PERF_EVENT_IOC_ID: u64 = 0x8008_2407;
/// Apply an enable/disable/reset ioctl to the whole group.
pub const PERF_IOC_FLAG_GROUP: u64 = 1;

/// `struct perf_event_attr` up to `config3` (PERF_ATTR_SIZE_VER8). Unions are
/// represented by the member cpuscope uses (`sample_period`, `wakeup_events`,
/// `config1`, `config2`); the bitfield is the `flags` word.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerfEventAttr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    pub flags: u64,
    pub wakeup_events: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved_2: u16,
    pub aux_sample_size: u32,
    pub reserved_3: u32,
    pub sig_data: u64,
    pub config3: u64,
}

const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == PERF_ATTR_SIZE_VER8 as usize);

impl PerfEventAttr {
    /// A counting (not sampling) attr for `type_`/`config`.
    pub fn counting(type_: u32, config: u64) -> Self {
        PerfEventAttr {
            type_,
            size: PERF_ATTR_SIZE_VER8,
            config,
            read_format: GROUP_READ_FORMAT,
            ..Default::default()
        }
    }

    pub fn set_flag(&mut self, flag: u64, on: bool) {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
    }

    pub fn has_flag(&self, flag: u64) -> bool {
        self.flags & flag != 0
    }
}

/// `perf_event_open(attr, pid, cpu, group_fd, flags)`; on failure the errno.
pub fn perf_event_open(
    attr: &PerfEventAttr,
    pid: i32,
    cpu: i32,
    group_fd: i32,
) -> Result<OwnedFd, i32> {
    const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
    // SAFETY: attr points to a properly sized, initialised struct that the
    // kernel only reads; the other arguments are plain integers.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const PerfEventAttr,
            pid as libc::c_long,
            cpu as libc::c_long,
            group_fd as libc::c_long,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: the kernel returned a fresh file descriptor that we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// An ioctl without a pointer argument (enable, disable, reset).
pub fn ioctl_arg(fd: i32, request: u64, arg: u64) -> Result<(), i32> {
    // SAFETY: these requests take an integer argument; fd is ours.
    let r = unsafe { libc::ioctl(fd, request as _, arg as libc::c_ulong) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// The kernel's id of an event (matches the ids in a group read).
pub fn event_id(fd: i32) -> Result<u64, i32> {
    let mut id: u64 = 0;
    // SAFETY: PERF_EVENT_IOC_ID writes one u64 to the pointer.
    let r = unsafe { libc::ioctl(fd, PERF_EVENT_IOC_ID as _, &mut id as *mut u64) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(id)
    }
}

/// `read()` into a buffer of u64 words; returns the number of words read.
pub fn read_words(fd: i32, buf: &mut [u64]) -> Result<usize, i32> {
    loop {
        // SAFETY: buf is a valid writable region of the given byte length.
        let n = unsafe {
            libc::read(
                fd,
                buf.as_mut_ptr() as *mut libc::c_void,
                std::mem::size_of_val(buf),
            )
        };
        if n < 0 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err(e);
        }
        return Ok(n as usize / 8);
    }
}

pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Symbolic name of an errno value (`ENOENT`), or `errno N`.
pub fn errno_name(e: i32) -> String {
    let s = match e {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EINTR => "EINTR",
        libc::E2BIG => "E2BIG",
        libc::EBADF => "EBADF",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::ENODEV => "ENODEV",
        libc::EINVAL => "EINVAL",
        libc::EMFILE => "EMFILE",
        libc::ENFILE => "ENFILE",
        libc::ENOSPC => "ENOSPC",
        libc::ENOSYS => "ENOSYS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EOVERFLOW => "EOVERFLOW",
        _ => return format!("errno {e}"),
    };
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn attr_layout_matches_perf_event_h() {
        assert_eq!(offset_of!(PerfEventAttr, config), 8);
        assert_eq!(offset_of!(PerfEventAttr, read_format), 32);
        assert_eq!(offset_of!(PerfEventAttr, flags), 40);
        assert_eq!(offset_of!(PerfEventAttr, wakeup_events), 48);
        assert_eq!(offset_of!(PerfEventAttr, config1), 56);
        assert_eq!(offset_of!(PerfEventAttr, config2), 64);
        assert_eq!(offset_of!(PerfEventAttr, sample_regs_intr), 96);
        assert_eq!(offset_of!(PerfEventAttr, aux_sample_size), 112);
        assert_eq!(offset_of!(PerfEventAttr, config3), 128);
        const { assert!(PERF_ATTR_SIZE_VER8 >= PERF_ATTR_SIZE_VER5) };
    }

    #[test]
    fn flags_set_and_clear() {
        let mut a = PerfEventAttr::counting(PERF_TYPE_HARDWARE, 0);
        a.set_flag(FLAG_DISABLED | FLAG_INHERIT, true);
        assert!(a.has_flag(FLAG_INHERIT));
        a.set_flag(FLAG_INHERIT, false);
        assert!(!a.has_flag(FLAG_INHERIT));
        assert!(a.has_flag(FLAG_DISABLED));
        assert_eq!(a.read_format, 0xf);
    }

    #[test]
    fn errno_names() {
        assert_eq!(errno_name(libc::ENOENT), "ENOENT");
        assert_eq!(errno_name(9999), "errno 9999");
    }
}
