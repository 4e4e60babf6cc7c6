//! Measuring helpers of the benchmark binaries (`examples/*-bench.rs`): arguments, timed loops
//! with warm-up, percentiles, the calling thread's CPU clock. Std and libc only, so the readiness
//! probe compiles nothing more.

use std::future::Future;
use std::time::{Duration, Instant};

/// Positional argument `n` as a number, `default` when absent.
pub fn arg(n: usize, default: usize) -> Result<usize, String> {
    match std::env::args().nth(n) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|e| format!("argument {n} `{v}`: {e}")),
    }
}

/// Prints one figure of a benchmark as a `FIGURE` line beside its human table:
/// `FIGURE <bench> <measure> <value> <unit>`, measure without spaces. `make bench`
/// (tests/bench/run.py) collects these lines over several runs and writes the medians into
/// docs/benchmarks.md; nothing else reads them.
pub fn figure(bench: &str, measure: &str, value: f64, unit: &str) {
    debug_assert!(!measure.contains(char::is_whitespace), "{measure}");
    println!("FIGURE {bench} {measure} {value:.4} {unit}");
}

/// Milliseconds of `d`, for tables.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The `p`-th percentile of `times` (nearest rank; zero when empty).
pub fn pct(times: &[Duration], p: usize) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    let i = (sorted.len() * p / 100).min(sorted.len().saturating_sub(1));
    sorted.get(i).copied().unwrap_or_default()
}

/// Runs `op(i)` `warmup` times untimed (with `i` from `n`), then `n` times timed.
pub async fn time_each<F, Fut>(warmup: usize, n: usize, op: F) -> Result<Vec<Duration>, String>
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    for i in 0..warmup {
        op(n + i).await?;
    }
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let started = Instant::now();
        op(i).await?;
        times.push(started.elapsed());
    }
    Ok(times)
}

/// CPU time the calling thread has used so far (`CLOCK_THREAD_CPUTIME_ID`). The paired
/// benchmarks run each side's call on the thread that awaits it, so the difference over a call
/// is that side's own work, without the waits (linger, network, cluster) that make wall-clock
/// comparisons noisy.
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

/// The times of a paired run ([`time_pairs`]): each side's wall-clock time per call, and its
/// calling thread's CPU time over all its timed calls.
#[derive(Debug, Clone, Default)]
pub struct Pairs {
    /// Wall-clock time of each timed call of `a`.
    pub a: Vec<Duration>,
    /// Wall-clock time of each timed call of `b`.
    pub b: Vec<Duration>,
    /// CPU time of the calling thread over all timed calls of `a` ([`thread_cpu`]).
    pub a_cpu: Duration,
    /// CPU time of the calling thread over all timed calls of `b`.
    pub b_cpu: Duration,
}

/// Runs `a(i)` and `b(i)` alternately, `warmup` pairs untimed (with `i` from `n`), then `n`
/// pairs timed, `a` first on even `i` and `b` first on odd: on a shared two-core machine the
/// cluster's own pace drifts (compactions, JIT, GC), and interleaving exposes both sides to the
/// same drift instead of giving one side the good minute.
pub async fn time_pairs<A, FA, B, FB>(warmup: usize, n: usize, a: A, b: B) -> Result<Pairs, String>
where
    A: Fn(usize) -> FA,
    FA: Future<Output = Result<(), String>>,
    B: Fn(usize) -> FB,
    FB: Future<Output = Result<(), String>>,
{
    for i in 0..warmup {
        a(n + i).await?;
        b(n + i).await?;
    }
    let mut pairs = Pairs {
        a: Vec::with_capacity(n),
        b: Vec::with_capacity(n),
        ..Pairs::default()
    };
    for i in 0..n {
        for a_turn in if i % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        } {
            let cpu = thread_cpu();
            let started = Instant::now();
            if a_turn {
                a(i).await?;
                pairs.a.push(started.elapsed());
                pairs.a_cpu += thread_cpu().saturating_sub(cpu);
            } else {
                b(i).await?;
                pairs.b.push(started.elapsed());
                pairs.b_cpu += thread_cpu().saturating_sub(cpu);
            }
        }
    }
    Ok(pairs)
}

/// A benchmark's exit status: success, or `bench: error` on stderr and failure.
pub fn exit_code(bench: &str, outcome: Result<(), String>) -> std::process::ExitCode {
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{bench}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The markdown table row `| label p50 | direct ms | via ms | difference |` of two timings.
pub fn p50_row(label: &str, direct: &[Duration], via: &[Duration]) {
    let (d, v) = (ms(pct(direct, 50)), ms(pct(via, 50)));
    println!("| {label} p50 | {d:.2} ms | {v:.2} ms | {:+.2} ms |", v - d);
}

/// Microseconds of `d`, for the in-process figures.
pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The single-request p50 figures of a paired benchmark: direct fluss-rs, through the gateway,
/// and the gateway's overhead.
pub fn single_p50_figures(bench: &str, direct: Duration, gateway: Duration) {
    figure(bench, "single_p50_direct", ms(direct), "ms");
    figure(bench, "single_p50_gateway", ms(gateway), "ms");
    figure(bench, "single_p50_overhead", ms(gateway) - ms(direct), "ms");
}

/// Runs `timed` once to warm up, then `runs` times, and returns the median duration.
pub fn median_of(
    runs: usize,
    mut timed: impl FnMut() -> Result<Duration, String>,
) -> Result<Duration, String> {
    timed()?;
    let mut times = (0..runs).map(|_| timed()).collect::<Result<Vec<_>, _>>()?;
    times.sort_unstable();
    Ok(times[times.len() / 2])
}

/// Rows (or records) a second.
pub fn rate(rows: usize, elapsed: Duration) -> f64 {
    rows as f64 / elapsed.as_secs_f64()
}

/// splitmix64: a tiny, fast generator, good enough to vary the benchmarks' values (no crate
/// needed, the same sequence for the same seed on every machine).
pub struct Rng(pub u64);

impl Rng {
    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (modulo bias is irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True once in `n` draws (the rate of nulls in nullable columns, …).
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    /// Text of `min..=max` letters, digits, spaces, `_` and `-`.
    pub fn text(&mut self, min: u64, max: u64) -> String {
        const ALPHABET: &[u8] =
            b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-";
        let len = min + self.below(max - min + 1);
        (0..len)
            .map(|_| char::from(ALPHABET[self.below(ALPHABET.len() as u64) as usize]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let times: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(pct(&times, 50), Duration::from_millis(51));
        assert_eq!(pct(&times, 99), Duration::from_millis(100));
        assert_eq!(pct(&[], 50), Duration::ZERO);
    }
}
