//! The background sweep of idle per-caller connections. Without it an idle caller's connection
//! (its TCP connections and writer on every Fluss server it talked to) stayed open until a new
//! caller arrived and made room, which in a quiet container may be never: a thousand warm
//! containers each holding a few forgotten callers' connections is load on every server.

use std::time::Duration;

/// The shortest and longest time between two sweeps.
const MIN_PERIOD: Duration = Duration::from_millis(100);
const MAX_PERIOD: Duration = Duration::from_secs(60);

/// Half the shortest of the clusters' idle timeouts: an idle connection goes between one and
/// one and a half idle timeouts after its last use.
pub(super) fn period(idle_timeouts: impl Iterator<Item = Duration>) -> Duration {
    idle_timeouts
        .min()
        .map_or(MAX_PERIOD, |shortest| shortest / 2)
        .clamp(MIN_PERIOD, MAX_PERIOD)
}

/// Runs `sweep` every `period` on the current runtime until it answers `false` (the pool is
/// gone); `false` when there is no runtime to run it on (the next caller tries again).
pub(super) fn spawn(period: Duration, sweep: impl Fn() -> bool + Send + 'static) -> bool {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return false;
    };
    runtime.spawn(async move {
        loop {
            tokio::time::sleep(period).await;
            if !sweep() {
                return;
            }
        }
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_is_half_the_shortest_idle_timeout_within_bounds() {
        let secs = |s: &[u64]| period(s.iter().map(|s| Duration::from_secs(*s)));
        assert_eq!(secs(&[600, 4]), Duration::from_secs(2));
        assert_eq!(secs(&[3600]), MAX_PERIOD);
        assert_eq!(secs(&[0]), MIN_PERIOD);
        assert_eq!(secs(&[]), MAX_PERIOD);
    }
}
