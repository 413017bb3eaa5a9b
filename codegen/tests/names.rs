//! Rust names derived from spec names.

use codegen::names::{screaming_snake, snake};
use codegen::rust::rust_name;

#[test]
fn record_and_feature_constants() {
    for (name, want) in [
        ("Mmap2", "MMAP2"),
        ("HeaderAttr", "HEADER_ATTR"),
        ("SwitchCpuWide", "SWITCH_CPU_WIDE"),
        ("AuxOutputHwId", "AUX_OUTPUT_HW_ID"),
        ("Nrcpus", "NRCPUS"),
        ("CPUTopology", "CPU_TOPOLOGY"),
        ("Compressed2", "COMPRESSED2"),
    ] {
        assert_eq!(screaming_snake(name), want);
    }
}

#[test]
fn trailer_fields_and_keywords() {
    assert_eq!(snake("SampleId"), "sample_id");
    assert_eq!(snake("Sched2Stat"), "sched2_stat");
    assert_eq!(rust_name("type"), "type_");
    assert_eq!(rust_name("priv"), "priv_");
    assert_eq!(rust_name("pid"), "pid");
}
