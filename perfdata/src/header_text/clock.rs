//! Local time as perf prints it: C's `ctime` (the `captured on` line) and the broken-down
//! time of CLOCK_DATA's reference (`strftime("%F %T")`).

/// A time broken down in the local time zone (C's `struct tm`, with the year and month
/// as people write them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LocalTime {
    pub year: i64,
    /// 1 to 12.
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// 0 (Sunday) to 6.
    pub weekday: u32,
}

impl LocalTime {
    /// `localtime_r`: the C library's conversion, which follows `TZ` as perf's does
    /// (`None` where it fails). Without a C library of that kind, UTC.
    #[cfg(unix)]
    pub fn of(seconds: i64) -> Option<Self> {
        let t = libc::time_t::try_from(seconds).ok()?;
        // SAFETY: `tm` is plain data that localtime_r fills; both pointers are to live
        // locals, and localtime_r keeps neither.
        let tm = unsafe {
            let mut tm: libc::tm = std::mem::zeroed();
            if libc::localtime_r(&t, &mut tm).is_null() {
                return None;
            }
            tm
        };
        Some(LocalTime {
            year: i64::from(tm.tm_year) + 1900,
            month: u32::try_from(tm.tm_mon).ok()? + 1,
            day: u32::try_from(tm.tm_mday).ok()?,
            hour: u32::try_from(tm.tm_hour).ok()?,
            minute: u32::try_from(tm.tm_min).ok()?,
            second: u32::try_from(tm.tm_sec).ok()?,
            weekday: u32::try_from(tm.tm_wday).ok()?,
        })
    }

    /// UTC (no C library time zones here).
    #[cfg(not(unix))]
    pub fn of(seconds: i64) -> Option<Self> {
        Some(Self::utc(seconds))
    }

    /// The civil date and time in UTC (days from the epoch by Howard Hinnant's
    /// `civil_from_days`).
    #[cfg_attr(unix, allow(dead_code))]
    pub fn utc(seconds: i64) -> Self {
        let days = seconds.div_euclid(86_400);
        let secs = seconds.rem_euclid(86_400) as u32;
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        LocalTime {
            year,
            month,
            day,
            hour: secs / 3600,
            minute: secs / 60 % 60,
            second: secs % 60,
            // 1970-01-01 was a Thursday.
            weekday: (days + 4).rem_euclid(7) as u32,
        }
    }
}

/// C's `ctime` of `seconds` since the epoch (`Sun Nov 29 01:02:12 2026\n`, glibc's
/// `asctime` format); `(null)` (without a newline) where it fails, as printf shows the
/// NULL it returns.
pub(super) fn ctime(seconds: i64) -> Vec<u8> {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    // glibc's asctime fails when the year does not fit an int.
    match LocalTime::of(seconds).filter(|t| i32::try_from(t.year).is_ok()) {
        Some(t) => format!(
            "{} {}{:3} {:02}:{:02}:{:02} {}\n",
            DAYS[t.weekday as usize % 7],
            MONTHS[(t.month as usize + 11) % 12],
            t.day,
            t.hour,
            t.minute,
            t.second,
            t.year
        )
        .into_bytes(),
        None => b"(null)".to_vec(),
    }
}
