//! The seccomp filter as one classic BPF program that finds a system call by binary search.
//!
//! seccompiler (which builds the program in earlier versions of this crate) compares the call's
//! number with each rule in turn and has one refusal per filter, so the refusals (`EPERM`) and
//! `clone3`'s "not implemented" took two filters. The kernel runs a new filter once for every
//! system call number as it is installed (to cache the calls it always allows), so a long chain
//! cost a confined run about 0.4 ms before its command started; a tree of the same rules costs
//! about a quarter of that, and every call of the command passes fewer instructions. The
//! program also refuses every number from `0x40000000` up: the x32 calls, which carry the
//! `x86_64` architecture with numbers a filter of `x86_64` numbers would never match.
//!
//! The program is checked against the rules it was built from by an interpreter in the tests,
//! for every number, and by the crate's tests that run the refused calls under the kernel.

use seccompiler::{BpfProgram, sock_filter};

/// What the filter does with one system call it names (any other is allowed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// Refused with this error number, whatever its arguments.
    Refuse(u32),
    /// Refused (`EPERM`) when the low 32 bits of argument `arg` equal one of `values` (an
    /// `ioctl` request, which the kernel reads as 32 bits).
    Equals { arg: u8, values: Vec<u32> },
    /// Refused (`EPERM`) when the low 32 bits of argument `arg` have any of `bits` set (flags
    /// all in the low 32 bits, such as `clone`'s namespaces).
    AnyBit { arg: u8, bits: u32 },
    /// Refused with `errno` unless the low 32 bits of argument `arg` equal one of `values` (a
    /// socket's family, of which a box allows a few).
    NotIn { arg: u8, values: Vec<u32>, errno: u32 },
}

/// `BPF_LD | BPF_W | BPF_ABS` (the class and size are 0), then `BPF_JMP | BPF_JEQ | BPF_K` and
/// the other jumps (the source `BPF_K` is 0), and `BPF_RET | BPF_K`.
const LD_W_ABS: u16 = 0x20;
const JEQ: u16 = 0x05 | 0x10;
const JGE: u16 = 0x05 | 0x30;
const JSET: u16 = 0x05 | 0x40;
const RET: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
/// Where `seccomp_data` holds the call's number, its architecture and its arguments.
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARGS: u32 = 16;
/// The first number no architecture's native calls reach (x32's start here).
const X32: u32 = 0x4000_0000;

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter { code, jt: 0, jf: 0, k }
}

fn jump(code: u16, k: u32, jt: usize, jf: usize) -> Result<sock_filter, String> {
    let off = |n: usize| u8::try_from(n).map_err(|_| format!("a jump of {n} instructions is too long for BPF"));
    Ok(sock_filter { code, jt: off(jt)?, jf: off(jf)?, k })
}

/// The audit architecture of the running build, as the kernel reports it in `seccomp_data`.
fn audit_arch() -> Result<u32, String> {
    match std::env::consts::ARCH {
        // EM_X86_64 and EM_AARCH64, 64-bit, little-endian.
        "x86_64" => Ok(62 | 0x8000_0000 | 0x4000_0000),
        "aarch64" => Ok(183 | 0x8000_0000 | 0x4000_0000),
        other => Err(format!("no seccomp filter for {other}")),
    }
}

/// The instructions that apply `check` to the call just found (every path returns).
fn handler(check: &Check) -> Result<Vec<sock_filter>, String> {
    let low = |arg: u8| ARGS + 8 * u32::from(arg);
    Ok(match check {
        Check::Refuse(errno) => vec![stmt(RET, RET_ERRNO | (errno & 0xffff))],
        Check::Equals { arg, values } => {
            let mut h = vec![stmt(LD_W_ABS, low(*arg))];
            for (i, v) in values.iter().enumerate() {
                // On a match, past the other comparisons and the allow, to the refusal.
                h.push(jump(JEQ, *v, values.len() - i, 0)?);
            }
            h.extend([stmt(RET, RET_ALLOW), stmt(RET, RET_ERRNO | libc::EPERM as u32)]);
            h
        }
        Check::NotIn { arg, values, errno } => {
            let mut h = vec![stmt(LD_W_ABS, low(*arg))];
            for (i, v) in values.iter().enumerate() {
                // On a match, past the other comparisons and the refusal, to the allow.
                h.push(jump(JEQ, *v, values.len() - i, 0)?);
            }
            h.extend([stmt(RET, RET_ERRNO | (errno & 0xffff)), stmt(RET, RET_ALLOW)]);
            h
        }
        Check::AnyBit { arg, bits } => vec![
            stmt(LD_W_ABS, low(*arg)),
            jump(JSET, *bits, 1, 0)?,
            stmt(RET, RET_ALLOW),
            stmt(RET, RET_ERRNO | libc::EPERM as u32),
        ],
    })
}

/// The search for the call's number (in the accumulator) among `rules`, sorted and distinct.
fn tree(rules: &[(u32, Check)]) -> Result<Vec<sock_filter>, String> {
    match rules {
        [] => Ok(vec![stmt(RET, RET_ALLOW)]),
        [(nr, check)] => {
            let h = handler(check)?;
            let mut out = vec![jump(JEQ, *nr, 0, h.len())?];
            out.extend(h);
            out.push(stmt(RET, RET_ALLOW));
            Ok(out)
        }
        _ => {
            let (left, right) = rules.split_at(rules.len() / 2);
            let l = tree(left)?;
            let mut out = vec![jump(JGE, right[0].0, l.len(), 0)?];
            out.extend(l);
            out.extend(tree(right)?);
            Ok(out)
        }
    }
}

/// The program for `rules` (system call numbers of this architecture): another architecture's
/// calls kill the process, numbers from `0x40000000` up are refused (`EPERM`), each named call
/// gets its check, and every other call is allowed.
pub(crate) fn program(rules: &[(i64, Check)]) -> Result<BpfProgram, String> {
    let mut sorted: Vec<(u32, Check)> = Vec::with_capacity(rules.len());
    for (nr, check) in rules {
        let nr = u32::try_from(*nr).ok().filter(|n| *n < X32).ok_or(format!("no system call {nr}"))?;
        sorted.push((nr, check.clone()));
    }
    sorted.sort_by_key(|(nr, _)| *nr);
    if sorted.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err("a system call named twice".into());
    }
    let mut out = vec![
        stmt(LD_W_ABS, ARCH),
        jump(JEQ, audit_arch()?, 1, 0)?,
        stmt(RET, RET_KILL_PROCESS),
        stmt(LD_W_ABS, NR),
        jump(JGE, X32, 0, 1)?,
        stmt(RET, RET_ERRNO | libc::EPERM as u32),
    ];
    out.extend(tree(&sorted)?);
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Runs `prog` as the kernel would on a call: what it returns.
    fn run(prog: &[sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        steps(prog, arch, nr, args).0
    }

    /// What `prog` returns for a call, and how many instructions it ran.
    fn steps(prog: &[sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> (u32, usize) {
        let word = |k: u32| match k {
            NR => nr,
            ARCH => arch,
            k if k >= ARGS && (k - ARGS).is_multiple_of(4) && k < ARGS + 48 => {
                let a = args[((k - ARGS) / 8) as usize];
                if (k - ARGS).is_multiple_of(8) { a as u32 } else { (a >> 32) as u32 }
            }
            _ => panic!("a load at {k}"),
        };
        let (mut pc, mut acc, mut ran) = (0usize, 0u32, 0);
        loop {
            let i = &prog[pc];
            pc += 1;
            ran += 1;
            match i.code {
                LD_W_ABS => acc = word(i.k),
                RET => return (i.k, ran),
                JEQ | JGE | JSET => {
                    let hit = match i.code {
                        JEQ => acc == i.k,
                        JGE => acc >= i.k,
                        _ => acc & i.k != 0,
                    };
                    pc += usize::from(if hit { i.jt } else { i.jf });
                }
                c => panic!("an instruction {c:#x}"),
            }
        }
    }

    fn rules() -> Vec<(i64, Check)> {
        let mut r: Vec<(i64, Check)> = (0..60).map(|i| (i * 7 + 3, Check::Refuse(1))).collect();
        r.push((16, Check::Equals { arg: 1, values: vec![0x5412, 0x541c] }));
        r.push((56, Check::AnyBit { arg: 0, bits: 0x1000_0000 | 0x2_0000 }));
        r.push((435, Check::Refuse(38)));
        r.push((41, Check::NotIn { arg: 0, values: vec![1, 2, 10], errno: 97 }));
        r
    }

    #[test]
    fn every_number_gets_its_rule() {
        let rules = rules();
        let prog = program(&rules).unwrap();
        let arch = audit_arch().unwrap();
        let eperm = RET_ERRNO | 1;
        for nr in 0..1000u32 {
            let want = match rules.iter().find(|(n, _)| *n == i64::from(nr)).map(|(_, c)| c) {
                None => RET_ALLOW,
                Some(Check::Refuse(e)) => RET_ERRNO | e,
                Some(_) => continue,
            };
            assert_eq!(run(&prog, arch, nr, [0; 6]), want, "{nr}");
        }
        // Arguments: the low 32 bits decide.
        for (arg1, want) in [(0x5412, eperm), (0x541c, eperm), (0x5413, RET_ALLOW), ((1 << 32) | 0x5412, eperm)] {
            assert_eq!(run(&prog, arch, 16, [0, arg1, 0, 0, 0, 0]), want, "ioctl {arg1:#x}");
        }
        for (flags, want) in [(0x1000_0000 | 0x11, eperm), (0x2_0000, eperm), (0x11, RET_ALLOW), (1 << 40, RET_ALLOW)] {
            assert_eq!(run(&prog, arch, 56, [flags, 0, 0, 0, 0, 0]), want, "clone {flags:#x}");
        }
        for (family, want) in
            [(1, RET_ALLOW), (2, RET_ALLOW), (10, RET_ALLOW), (16, RET_ERRNO | 97), (40, RET_ERRNO | 97)]
        {
            assert_eq!(run(&prog, arch, 41, [family, 0, 0, 0, 0, 0]), want, "socket {family}");
        }
        // x32 and beyond, and another architecture.
        for nr in [X32, X32 | 4100, u32::MAX] {
            assert_eq!(run(&prog, arch, nr, [0; 6]), eperm, "{nr:#x}");
        }
        assert_eq!(run(&prog, 0x4000_0003, 41, [0; 6]), RET_KILL_PROCESS);
    }

    #[test]
    fn the_search_is_short() {
        let prog = program(&rules()).unwrap();
        let arch = audit_arch().unwrap();
        // A call passes the header (5 instructions) and about log2(63) comparisons.
        let most = (0..1000).map(|nr| steps(&prog, arch, nr, [0; 6]).1).max().unwrap();
        assert!(most <= 5 + 7 + 4, "{most} instructions");
    }

    #[test]
    fn refuses_what_it_cannot_build() {
        assert!(program(&[(1, Check::Refuse(1)), (1, Check::Refuse(2))]).is_err());
        assert!(program(&[(-1, Check::Refuse(1))]).is_err());
        assert!(program(&[(i64::from(X32), Check::Refuse(1))]).is_err());
        assert!(program(&[]).is_ok());
    }
}
