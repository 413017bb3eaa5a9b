//! The `perfdata` binary: the library's [`perfdata_cli::run`] with this process's
//! allocator tuning.

use std::process::ExitCode;

fn main() -> ExitCode {
    // glibc adapts its mmap and trim thresholds upwards as large buffers are freed; in a
    // long streaming run (`export`: Parquet page buffers, batch builders) freed memory
    // then stays in the heap and the resident set grows with the input (400 MB for a
    // 585 MB recording, with under 20 MB live). A fixed threshold turns the adaptation off:
    // 27 MB.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 20);
    }
    perfdata_cli::run()
}
