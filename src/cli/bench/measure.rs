//! What the bench reads from the operating system: the process's CPU time and its peak
//! resident memory, and the percentiles of a set of latencies.

use std::time::Duration;

/// CPU time (user + system) the whole process has used so far, every thread included.
pub(super) fn process_cpu() -> Duration {
    #[cfg(unix)]
    {
        use nix::time::{ClockId, clock_gettime};
        if let Ok(t) = clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID) {
            return Duration::new(
                u64::try_from(t.tv_sec()).unwrap_or_default(),
                u32::try_from(t.tv_nsec()).unwrap_or_default(),
            );
        }
    }
    Duration::ZERO
}

/// Starts a new peak-memory window, where the kernel allows it (Linux: writing `5` to
/// `/proc/self/clear_refs` resets the high-water mark); elsewhere the peak stays the
/// process's.
pub(super) fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident memory in KiB since the last [`reset_peak_rss`] (or process start).
pub(super) fn peak_rss_kib() -> u64 {
    let from_proc = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        });
    if let Some(kib) = from_proc {
        return kib;
    }
    #[cfg(unix)]
    {
        use nix::sys::resource::{UsageWho, getrusage};
        if let Ok(usage) = getrusage(UsageWho::RUSAGE_SELF) {
            // Linux and the BSDs report KiB; macOS reports bytes.
            let max = u64::try_from(usage.max_rss()).unwrap_or_default();
            return if cfg!(target_os = "macos") {
                max / 1024
            } else {
                max
            };
        }
    }
    0
}

/// The `q`-quantile (0..=1) of sorted latencies, in microseconds (nearest rank).
pub(super) fn percentile_us(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    let i = rank.clamp(1, sorted.len()) - 1;
    sorted[i].as_secs_f64() * 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let lat: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        assert_eq!(percentile_us(&lat, 0.5), 50.0);
        assert_eq!(percentile_us(&lat, 0.99), 99.0);
        assert_eq!(percentile_us(&lat[..1], 0.99), 1.0);
        assert_eq!(percentile_us(&[], 0.5), 0.0);
    }

    #[test]
    fn the_process_clock_moves_with_work() {
        let before = process_cpu();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        assert!(process_cpu() > before);
        assert!(peak_rss_kib() > 0);
    }
}
