//! The memory fields: `data_src`, a sample's `perf_mem_data_src` word decoded as perf's
//! `perf_script__meminfo_scnprintf` prints it (`|OP LOAD|LVL L1 hit|SNP None|TLB L1 or
//! L2 hit|LCK No|BLK  N/A`).

/// The decoded text of a data source word.
pub fn describe(v: u64) -> String {
    let bits = |shift: u32, width: u32| (v >> shift) & ((1 << width) - 1);
    let (op, lvl, snoop, lock, dtlb) = (
        bits(0, 5),
        bits(5, 14),
        bits(19, 5),
        bits(24, 2),
        bits(26, 7),
    );
    let (lvl_num, remote, snoopx, blk, hops) = (
        bits(33, 4),
        bits(37, 1),
        bits(38, 2),
        bits(40, 3),
        bits(43, 3),
    );
    let mut s = String::from("|OP ");
    s.push_str(match op {
        o if o & 1 != 0 => "N/A",
        o if o & 2 != 0 => "LOAD",
        o if o & 4 != 0 => "STORE",
        o if o & 8 != 0 => "PFETCH",
        o if o & 16 != 0 => "EXEC",
        _ => "No",
    });
    s.push_str("|LVL ");
    s.push_str(&level(lvl, lvl_num, remote, hops));
    s.push_str("|SNP ");
    s.push_str(&snoop_text(snoop, snoopx));
    s.push_str("|TLB ");
    s.push_str(&tlb(dtlb));
    s.push_str("|LCK ");
    s.push_str(if lock & 1 != 0 {
        "N/A"
    } else if lock & 2 != 0 {
        "Yes"
    } else {
        "No"
    });
    s.push_str("|BLK ");
    if blk == 0 || blk & 1 != 0 {
        s.push_str(" N/A");
    } else {
        if blk & 2 != 0 {
            s.push_str(" Data");
        }
        if blk & 4 != 0 {
            s.push_str(" Addr");
        }
    }
    s
}

/// Names of the set bits of `m` from `names`, joined by ` or `.
fn either(mut m: u64, names: &[&str], out: &mut String) {
    for n in names {
        if m == 0 {
            break;
        }
        if m & 1 != 0 {
            if !out.is_empty() {
                out.push_str(" or ");
            }
            out.push_str(n);
        }
        m >>= 1;
    }
}

fn tlb(m: u64) -> String {
    const NAMES: [&str; 7] = ["N/A", "HIT", "MISS", "L1", "L2", "Walker", "Fault"];
    let (hit, miss) = (m & 2 != 0, m & 4 != 0);
    let mut out = String::new();
    either(m & !6, &NAMES, &mut out);
    if out.is_empty() {
        out.push_str("N/A");
    }
    if hit {
        out.push_str(" hit");
    }
    if miss {
        out.push_str(" miss");
    }
    out
}

fn level(m: u64, lvl_num: u64, remote: u64, hops: u64) -> String {
    const NAMES: [&str; 14] = [
        "N/A",
        "HIT",
        "MISS",
        "L1",
        "LFB",
        "L2",
        "L3",
        "Local RAM",
        "Remote RAM (1 hop)",
        "Remote RAM (2 hops)",
        "Remote Cache (1 hop)",
        "Remote Cache (2 hops)",
        "I/O",
        "Uncached",
    ];
    const HOPS: [&str; 5] = [
        "N/A",
        "core, same node",
        "node, same socket",
        "socket, same board",
        "board",
    ];
    let (hit, miss) = (m & 2 != 0, m & 4 != 0);
    let mut out = String::new();
    if remote != 0 {
        out.push_str("Remote ");
    }
    let mut printed = 0;
    if hops != 0 {
        out.push_str(HOPS.get(hops as usize).copied().unwrap_or("N/A"));
        out.push(' ');
    } else {
        let mut bits = m & !6;
        for n in NAMES {
            if bits == 0 {
                break;
            }
            if bits & 1 != 0 {
                if printed > 0 {
                    out.push_str(" or ");
                }
                printed += 1;
                out.push_str(n);
            }
            bits >>= 1;
        }
    }
    if lvl_num != 0 {
        if printed > 0 {
            out.push_str(" or ");
        }
        match lvl_num {
            0x0b => out.push_str("I/O"),
            0x0c => out.push_str("Any cache"),
            0x0d => out.push_str("LFB"),
            0x0e => out.push_str("RAM"),
            0x0f => out.push_str("N/A"),
            n => out.push_str(&format!("L{n}")),
        }
    }
    if out.is_empty() {
        out.push_str("N/A");
    }
    if hit {
        out.push_str(" hit");
    }
    if miss {
        out.push_str(" miss");
    }
    out
}

fn snoop_text(snoop: u64, snoopx: u64) -> String {
    let mut out = String::new();
    either(snoop, &["N/A", "None", "Hit", "Miss", "HitM"], &mut out);
    either(snoopx, &["Fwd", "Peer"], &mut out);
    if out.is_empty() {
        out.push_str("N/A");
    }
    out
}

/// perf's `get_page_size_name`: `4K`, `2M`, `N/A` for none.
pub fn page_size_name(size: Option<u64>) -> String {
    let Some(mut n) = size.filter(|&s| s != 0) else {
        return "N/A".into();
    };
    let units = ['B', 'K', 'M', 'G'];
    let mut i = 0;
    while n / 1024 > 1 && i < 3 {
        n /= 1024;
        i += 1;
    }
    format!("{n}{}", units[i])
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn a_software_events_word_is_all_not_available() {
        // PERF_MEM_NA, as the kernel fills it for events that know no data source.
        assert_eq!(
            describe(0x1e05080021),
            "|OP N/A|LVL N/A or N/A|SNP N/A|TLB N/A|LCK N/A|BLK  N/A"
        );
    }

    #[test]
    fn an_l1_load_hit() {
        // LOAD, LVL L1|HIT, SNP None, TLB L1|HIT, LCK No (0), lvl_num L1.
        let v = 0x2 | (0x0a << 5) | (0x2 << 19) | (0x0a << 26) | (1u64 << 33);
        assert_eq!(
            describe(v),
            "|OP LOAD|LVL L1 or L1 hit|SNP None|TLB L1 hit|LCK No|BLK  N/A"
        );
    }
}
