#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    perfdata_fuzz::analyses::analyses(data);
});
