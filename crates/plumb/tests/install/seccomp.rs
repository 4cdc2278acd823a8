//! A seccomp profile standing in for `RuntimeDefault`: what containerd's and Docker's default
//! profiles refuse a container without `CAP_SYS_ADMIN` and friends (all of them are dropped
//! here), written as a deny list over runc's allow-by-default. The refusals that matter to Plumb
//! are the namespace ones: `unshare`, `setns`, `mount` and `clone` with a `CLONE_NEW*` flag, which
//! is what its render sandbox (`unshare --user --mount --net`) needs; `clone3` answers ENOSYS as
//! in those profiles, so the C library falls back to `clone`, whose flags a filter can read.

use serde_json::{Value, json};

/// Refused with EPERM, as the default profiles do without the capability that allows them.
const DENIED: &[&str] = &[
    "acct",
    "add_key",
    "bpf",
    "clock_adjtime",
    "clock_settime",
    "create_module",
    "delete_module",
    "finit_module",
    "fsconfig",
    "fsmount",
    "fsopen",
    "fspick",
    "get_kernel_syms",
    "init_module",
    "ioperm",
    "iopl",
    "kcmp",
    "kexec_file_load",
    "kexec_load",
    "keyctl",
    "lookup_dcookie",
    "mount",
    "mount_setattr",
    "move_mount",
    "name_to_handle_at",
    "nfsservctl",
    "open_by_handle_at",
    "open_tree",
    "perf_event_open",
    "pivot_root",
    "process_vm_readv",
    "process_vm_writev",
    "ptrace",
    "query_module",
    "quotactl",
    "reboot",
    "request_key",
    "setdomainname",
    "sethostname",
    "setns",
    "settimeofday",
    "swapoff",
    "swapon",
    "sysfs",
    "_sysctl",
    "umount",
    "umount2",
    "unshare",
    "uselib",
    "userfaultfd",
    "ustat",
    "vm86",
    "vm86old",
];

/// `CLONE_NEWNS`, `CLONE_NEWCGROUP`, `CLONE_NEWUTS`, `CLONE_NEWIPC`, `CLONE_NEWUSER`,
/// `CLONE_NEWPID`, `CLONE_NEWNET`.
const CLONE_NEW: &[u64] = &[
    0x0002_0000,
    0x0200_0000,
    0x0400_0000,
    0x0800_0000,
    0x1000_0000,
    0x2000_0000,
    0x4000_0000,
];

const EPERM: u32 = 1;
const ENOSYS: u32 = 38;

/// The profile, in runc's `linux.seccomp` form.
pub fn runtime_default() -> Value {
    let mut rules = vec![
        json!({"names": DENIED, "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM}),
        json!({"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": ENOSYS}),
    ];
    for flag in CLONE_NEW {
        rules.push(json!({
            "names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM,
            "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}]
        }));
    }
    json!({
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
        "syscalls": rules,
    })
}
