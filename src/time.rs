//! UTC calendar times from Unix seconds, without a time zone database: the CLI's listings
//! and the timestamps memory entries carry.

/// A moment split into UTC calendar fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcTime {
    /// Year.
    pub year: i64,
    /// Month, 1-12.
    pub month: u32,
    /// Day of the month, 1-31.
    pub day: u32,
    /// Hour, 0-23.
    pub hour: u32,
    /// Minute, 0-59.
    pub minute: u32,
    /// Second, 0-59.
    pub second: u32,
    /// Microseconds, 0-999999.
    pub micros: u32,
}

impl UtcTime {
    /// The UTC time of `seconds` since the Unix epoch (rounded to the microsecond).
    pub fn from_unix(seconds: f64) -> UtcTime {
        let total_micros = (seconds * 1e6).round() as i64;
        let secs = total_micros.div_euclid(1_000_000);
        let micros = total_micros.rem_euclid(1_000_000) as u32;
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        UtcTime {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
            micros,
        }
    }

    /// Python's `datetime.isoformat()` of a naive datetime: `2026-11-21T21:42:34.280000`,
    /// the fraction left out when it is zero.
    pub fn isoformat(&self) -> String {
        let mut out = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        );
        if self.micros != 0 {
            out.push_str(&format!(".{:06}", self.micros));
        }
        out
    }

    /// `2026-11-21 21:42:34Z`: to the second, for listings.
    pub fn short(&self) -> String {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

#[cfg(test)]
mod tests {
    use super::UtcTime;

    #[test]
    fn formats_utc_times() {
        assert_eq!(UtcTime::from_unix(0.0).short(), "1970-01-01 00:00:00Z");
        assert_eq!(
            UtcTime::from_unix(1_795_297_354.28).short(),
            "2026-11-21 21:42:34Z"
        );
        // datetime.fromtimestamp(1795297354.28, tz=utc).isoformat() without the offset.
        assert_eq!(
            UtcTime::from_unix(1_795_297_354.28).isoformat(),
            "2026-11-21T21:42:34.280000"
        );
        assert_eq!(
            UtcTime::from_unix(951_782_400.0).isoformat(),
            "2000-02-29T00:00:00"
        );
    }
}
