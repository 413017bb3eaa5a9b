//! Stacks that perf's unwinder (libunwind, in perf 6.1) cut short where perfdata's went on
//! to the stack's true end, so that checks 8, 10, 11 and 12 compare what both unwound and
//! count the rest apart instead of failing a row on a known limitation of the referee.
//!
//! A stack of perf's is *cut short* against one of ours when its frames are a proper
//! suffix of ours (the same leaf side, fewer frames at the root) and one of two things
//! shows that perf stopped, not that perfdata invented frames:
//! * perf said so: its stack starts with `[truncated]` (its `ffffffffffffffff [unknown]`
//!   frame, renamed by `analyses::perf_folded`). perf 6.1's libunwind memory callback
//!   refuses the last word of the stack copy (`addr + 8 >= end`), so it stops one frame
//!   before the copy's end, which perfdata reads;
//! * ours reaches an outermost frame: the entry point `_start`, or a thread's `clone` /
//!   `clone3`, where glibc's CFI ends every stack (`cfi_undefined rip`), or
//!   `_dl_start_user`, the label in ld.so's `_start` whose `call _dl_init` runs every
//!   initializer the loader runs (no CFI: the entry code). Garbage frames do not end
//!   there. Seen: glibc's `clone3` ends its FDE before its `syscall`
//!   instruction, so a sample taken in the kernel during `pthread_create` has no CFI for
//!   its first user frame: libunwind stops, perfdata steps by the return address at the
//!   stack pointer (the leaf has pushed nothing) and goes on; and libgcc_s's
//!   `_Unwind_RaiseException` epilogue, where libunwind gives up on a saved register
//!   below the stack pointer.
//!
//! And one more: perf's walk went one frame astray before it stopped (its root-most
//! frame is not ours, every other one is) while ours reaches an outermost frame. Where a
//! function has no CFI (the program's `_fini`), libunwind follows rbp, which code built
//! without frame pointers uses for data: one wrong frame, then it gives up.
//!
//! Either way the weight stays in the comparison: a cut-short stack of perf's is matched
//! to ours, never dropped, and the checks print how much they matched this way. More
//! than [`CUT_SHORT_MAX`] percent of perf's weight is not a limitation any more but a
//! difference, and fails.

use std::collections::BTreeMap;

/// The most of perf's weight (percent) that may be matched as cut short.
pub const CUT_SHORT_MAX: f64 = 5.0;

/// Frames that end a stack by their CFI: a walk that reached one is complete.
const OUTERMOST: [&str; 5] = ["_start", "_dl_start_user", "clone", "clone3", "__clone3"];

/// The frame perf's `ffffffffffffffff [unknown]` end of an unfinished walk becomes.
const TRUNCATED: &str = "[truncated]";

/// Whether `theirs` (root first, `;`-separated frames) is `ours` cut short by perf's
/// unwinder.
pub fn is_cut_short(theirs: &str, ours: &str) -> bool {
    let t: Vec<&str> = theirs.split(';').collect();
    let o: Vec<&str> = ours.split(';').collect();
    let (t, perf_said) = match t.split_first() {
        Some((&first, rest)) if first == TRUNCATED => (rest, true),
        _ => (&t[..], false),
    };
    let o = match o.split_first() {
        Some((&first, rest)) if first == TRUNCATED => rest,
        _ => &o[..],
    };
    if t.is_empty() || t.len() >= o.len() {
        return false;
    }
    let finished = OUTERMOST.contains(&o[0]);
    if o.ends_with(t) {
        return perf_said || finished;
    }
    // perf's last step went astray before it gave up: libunwind, finding no CFI, follows
    // rbp for one frame (seen in the program's `_fini`, which has none, at exit). Every
    // frame of perf's but that root-most one is ours, and ours reaches the root.
    finished && t.len() >= 2 && o.ends_with(&t[1..])
}

/// Folded stacks (`comm;root;…;leaf` → weight): moves the weight of each stack perf cut
/// short to the stack of ours it is a cut of, as far as ours has weight there that perf
/// lacks. Returns the weight moved.
pub fn reconcile_folded(theirs: &mut BTreeMap<String, u64>, ours: &BTreeMap<String, u64>) -> u64 {
    let excess = |a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>| -> Vec<(String, u64)> {
        a.iter()
            .filter_map(|(s, &w)| {
                let d = w.saturating_sub(b.get(s).copied().unwrap_or(0));
                (d > 0).then(|| (s.clone(), d))
            })
            .collect()
    };
    let perf_only = excess(theirs, ours);
    let mut ours_only = excess(ours, theirs);
    let mut moved = 0;
    for (p, mut w) in perf_only {
        let Some((p_comm, p_frames)) = p.split_once(';') else {
            continue;
        };
        for (o, room) in ours_only.iter_mut() {
            if w == 0 {
                break;
            }
            let Some((o_comm, o_frames)) = o.split_once(';') else {
                continue;
            };
            if *room == 0 || o_comm != p_comm || !is_cut_short(p_frames, o_frames) {
                continue;
            }
            let m = w.min(*room);
            *room -= m;
            w -= m;
            moved += m;
            take(theirs, &p, m);
            *theirs.entry(o.clone()).or_default() += m;
        }
    }
    moved
}

fn take(map: &mut BTreeMap<String, u64>, key: &str, w: u64) {
    if let Some(v) = map.get_mut(key) {
        *v -= w;
        if *v == 0 {
            map.remove(key);
        }
    }
}

/// Caller chains of one report row (`root;…;function` → share text, "1.23"): adds each
/// chain of perf's that is a cut of a chain of ours to that chain, as far as ours has a
/// larger share there than perf (to 0.01%: the shares are rounded). Returns the shares
/// moved, in hundredths of a percent.
pub fn reconcile_chains(
    theirs: &mut BTreeMap<String, String>,
    ours: &BTreeMap<String, String>,
) -> i64 {
    let hundredths = |p: &str| p.parse::<f64>().map_or(0, |v| (v * 100.0).round() as i64);
    let perf_only: Vec<String> = theirs
        .keys()
        .filter(|c| !ours.contains_key(*c))
        .cloned()
        .collect();
    // Each chain of ours with a larger share than perf's, and how much larger: perf's cut
    // chains go there (libunwind can cut one sample of a stack and finish the next).
    let mut room: Vec<(&String, i64)> = ours
        .iter()
        .map(|(o, s)| {
            let t = theirs.get(o).map_or(0, |t| hundredths(t));
            (o, hundredths(s) - t)
        })
        .filter(|&(_, r)| r > 0)
        .collect();
    let mut moved = 0;
    for p in perf_only {
        let share = hundredths(&theirs[&p]);
        let hit = room
            .iter()
            .position(|(o, r)| share <= r + 1 && is_cut_short(&p, o));
        if let Some(i) = hit {
            let o = room[i].0;
            room[i].1 -= share;
            theirs.remove(&p);
            moved += share;
            let sum = theirs.get(o).map_or(0, |t| hundredths(t)) + share;
            theirs.insert(o.clone(), format!("{:.2}", sum as f64 / 100.0));
        }
    }
    moved
}

/// The line a check prints about the weight it matched as cut short, if any.
pub fn note(moved: f64) -> Option<String> {
    (moved > 0.0).then(|| {
        format!(
            "{moved:.2}% of perf's weight in stacks perf's unwinder cut short and perfdata \
             finished (matched to ours; see conformance/src/cut_short.rs)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_needs_perfs_word_or_an_outermost_frame_of_ours() {
        // libunwind stopped without a marker; ours reaches _start.
        assert!(is_cut_short(
            "clone3;entry_SYSCALL_64;copy_process",
            "_start;main;pthread_create;clone3;entry_SYSCALL_64;copy_process"
        ));
        // dwarf-cpp: a sample in one of libstdc++'s initializers, run by the loader.
        assert!(is_cut_short(
            "[libstdc++.so.6.0.30]",
            "_dl_start_user;_dl_init;call_init;[libstdc++.so.6.0.30]"
        ));
        // perf said it stopped; ours has one frame more, then the copy ended.
        assert!(is_cut_short("[truncated];b;leaf", "[truncated];a;b;leaf"));
        // Ours has more frames but nothing shows perf stopped: a real difference.
        assert!(!is_cut_short("b;leaf", "a;b;leaf"));
        // Not a suffix, or not shorter.
        assert!(!is_cut_short("[truncated];d;c;leaf", "_start;a;b;leaf"));
        assert!(!is_cut_short("_start;b;leaf", "_start;b;leaf"));
        assert!(!is_cut_short("[truncated]", "_start;leaf"));
    }

    #[test]
    fn perfs_one_astray_frame_before_it_stopped_is_matched_only_against_a_finished_walk() {
        // dwarf-cpp at exit: a page fault at `_fini`'s first instruction (no CFI).
        let ours = "_start;main;exit;__run_exit_handlers;_dl_fini;_fini;asm_exc_page_fault;k";
        let perf = "__run_exit_handlers;_fini;asm_exc_page_fault;k";
        assert!(is_cut_short(perf, ours));
        assert!(is_cut_short(&format!("[truncated];{perf}"), ours));
        // Ours did not reach the root: nothing says which walk is right.
        let ours_unfinished = "main;exit;__run_exit_handlers;_dl_fini;_fini;asm_exc_page_fault;k";
        assert!(!is_cut_short(perf, ours_unfinished));
        // Two frames of perf's that are not ours: a difference.
        assert!(!is_cut_short(
            "x;__run_exit_handlers;_fini;asm_exc_page_fault;k",
            ours
        ));
        // The leaf alone differs: a difference.
        assert!(!is_cut_short("leaf", "_start;main;other"));
    }

    #[test]
    fn folded_weight_moves_only_as_far_as_ours_lacks_it() {
        let mut theirs: BTreeMap<String, u64> = [
            ("p;_start;main;leaf".to_string(), 10),
            ("p;[truncated];leaf".to_string(), 5),
            ("p;other".to_string(), 1),
        ]
        .into();
        let ours: BTreeMap<String, u64> = [
            ("p;_start;main;leaf".to_string(), 13),
            ("p;other2".to_string(), 1),
        ]
        .into();
        // Ours has 3 more under _start than perf: 3 of perf's 5 cut ones move.
        assert_eq!(reconcile_folded(&mut theirs, &ours), 3);
        assert_eq!(theirs["p;_start;main;leaf"], 13);
        assert_eq!(theirs["p;[truncated];leaf"], 2);
        assert_eq!(theirs["p;other"], 1);
    }

    #[test]
    fn chains_are_renamed_only_at_the_same_share() {
        let mut theirs: BTreeMap<String, String> = [
            ("clone3;k".to_string(), "0.13".to_string()),
            ("x;k".to_string(), "0.50".to_string()),
        ]
        .into();
        let ours: BTreeMap<String, String> = [
            ("_start;main;clone3;k".to_string(), "0.13".to_string()),
            ("_start;x;k".to_string(), "0.40".to_string()),
        ]
        .into();
        assert_eq!(reconcile_chains(&mut theirs, &ours), 13);
        assert!(theirs.contains_key("_start;main;clone3;k"));
        assert!(theirs.contains_key("x;k"));
    }

    #[test]
    fn a_cut_chain_joins_the_whole_chain_that_both_sides_have() {
        // dwarf-cpp in CI: libunwind finished one throw's stack and cut another short.
        let whole = "_start;main;__cxa_throw;_Unwind_RaiseException;__gxx_personality_v0";
        let cut = "_Unwind_RaiseException;__gxx_personality_v0";
        let mut theirs: BTreeMap<String, String> = [
            (whole.to_string(), "1.05".to_string()),
            (cut.to_string(), "0.15".to_string()),
        ]
        .into();
        let ours: BTreeMap<String, String> = [(whole.to_string(), "1.20".to_string())].into();
        assert_eq!(reconcile_chains(&mut theirs, &ours), 15);
        assert_eq!(theirs, ours);
        // Only as far as ours has more than perf: a second cut stays a difference.
        let mut theirs: BTreeMap<String, String> = [
            (whole.to_string(), "1.05".to_string()),
            (cut.to_string(), "0.15".to_string()),
            (format!("[truncated];{cut}"), "0.30".to_string()),
        ]
        .into();
        assert_eq!(reconcile_chains(&mut theirs, &ours), 15);
        assert_eq!(theirs.len(), 2);
    }
}
