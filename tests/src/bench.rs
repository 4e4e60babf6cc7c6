//! Measuring helpers of the benchmark binaries (`examples/*-bench.rs`): arguments, timed loops
//! with warm-up, percentiles. Pure std, so the readiness probe compiles nothing more.

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

/// Runs `a(i)` and `b(i)` alternately, `warmup` pairs untimed (with `i` from `n`), then `n`
/// pairs timed, `a` first on even `i` and `b` first on odd: on a shared two-core machine the
/// cluster's own pace drifts (compactions, JIT, GC), and interleaving exposes both sides to the
/// same drift instead of giving one side the good minute.
pub async fn time_pairs<A, FA, B, FB>(
    warmup: usize,
    n: usize,
    a: A,
    b: B,
) -> Result<(Vec<Duration>, Vec<Duration>), String>
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
    let (mut ta, mut tb) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        for a_turn in if i % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        } {
            let started = Instant::now();
            if a_turn {
                a(i).await?;
                ta.push(started.elapsed());
            } else {
                b(i).await?;
                tb.push(started.elapsed());
            }
        }
    }
    Ok((ta, tb))
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
