//! Deadlines: the one bound on every Fluss await of a request.
//!
//! fluss-rs has no request timeout, so nothing a request awaits may be unbounded. A
//! [`Deadline`] is min(request timeout, Lambda remaining time − margin): the margin leaves the
//! handler time to render the response before Lambda freezes the container. Expiry maps to
//! 504 `timeout`; for a write that means "outcome unknown" (the row may still land).

use std::collections::BTreeMap;
use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gateway_core::{ErrorCode, GatewayError};
use tokio::time::Instant;

use gateway_core::settings::{self, Slot, format_duration};

pub use gateway_core::settings::keys::deadline::{LAMBDA_DEADLINE_MARGIN_KEY, REQUEST_TIMEOUT_KEY};

/// Default request timeout (as the Fluss Gateway).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default Lambda margin: rendering and returning a response takes a few milliseconds, a
/// cold-path log flush more.
pub const DEFAULT_LAMBDA_DEADLINE_MARGIN: Duration = Duration::from_millis(500);

/// The instant by which a request's Fluss work must be done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    at: Instant,
    /// The budget it was created with, for messages ("within 5000 ms").
    budget: Duration,
}

impl Deadline {
    /// A deadline `budget` from now.
    pub fn after(budget: Duration) -> Self {
        Deadline {
            at: Instant::now() + budget,
            budget,
        }
    }

    /// min(`request_timeout`, time until `lambda_deadline` − `margin`). Without a Lambda
    /// deadline (standalone server, tests) the request timeout alone applies.
    pub fn for_request(
        request_timeout: Duration,
        lambda_deadline: Option<SystemTime>,
        margin: Duration,
    ) -> Self {
        let budget = match lambda_deadline {
            None => request_timeout,
            Some(at) => {
                let remaining = at
                    .duration_since(SystemTime::now())
                    .unwrap_or(Duration::ZERO);
                request_timeout.min(remaining.saturating_sub(margin))
            }
        };
        Deadline::after(budget)
    }

    /// [`Deadline::for_request`] with Lambda's deadline as epoch milliseconds
    /// (`lambda_runtime::Context::deadline`).
    pub fn for_lambda(request_timeout: Duration, deadline_epoch_ms: u64, margin: Duration) -> Self {
        let at = UNIX_EPOCH + Duration::from_millis(deadline_epoch_ms);
        Deadline::for_request(request_timeout, Some(at), margin)
    }

    /// The instant itself.
    pub fn instant(&self) -> Instant {
        self.at
    }

    /// The budget the deadline was created with.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Time left (zero once expired).
    pub fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// Whether the deadline has passed.
    pub fn is_expired(&self) -> bool {
        Instant::now() >= self.at
    }

    /// This deadline, or `limit` from now if that is earlier (e.g. a probe's own bound).
    pub fn capped(&self, limit: Duration) -> Deadline {
        let other = Instant::now() + limit;
        if other < self.at {
            Deadline {
                at: other,
                budget: limit,
            }
        } else {
            *self
        }
    }

    /// The `timeout` error for `what` (e.g. "write", "lookup", "connect"). For a write it
    /// means the outcome is unknown; the write handler says so per row.
    pub fn timeout_error(&self, what: &str) -> GatewayError {
        GatewayError::new(
            ErrorCode::Timeout,
            format!(
                "{what} did not complete within {}",
                format_duration(self.budget)
            ),
        )
    }

    /// Awaits `fut` until the deadline; `None` when it expired first (the future is dropped,
    /// which for fluss-rs does not cancel work already handed to its background tasks).
    /// An expired deadline does not poll `fut` at all, so no work starts without budget.
    pub async fn race<F: Future>(&self, fut: F) -> Option<F::Output> {
        if self.is_expired() {
            return None;
        }
        tokio::time::timeout_at(self.at, fut).await.ok()
    }

    /// Awaits `fut` until the deadline; expiry is a `timeout` error naming `what`.
    pub async fn bound<F: Future>(&self, what: &str, fut: F) -> Result<F::Output, GatewayError> {
        self.race(fut).await.ok_or_else(|| self.timeout_error(what))
    }

    /// Awaits a fluss-rs call until the deadline and maps its error to the wire. Prefer
    /// `PooledConnection::call`, which also feeds the connection's health.
    pub async fn run<T, F>(&self, what: &str, fut: F) -> Result<T, GatewayError>
    where
        F: Future<Output = fluss::error::Result<T>>,
    {
        match self.bound(what, fut).await? {
            Ok(v) => Ok(v),
            Err(e) => Err(GatewayError::from(&e)),
        }
    }
}

/// How request deadlines are computed; built once per container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeadlinePolicy {
    /// The longest a request may take.
    pub request_timeout: Duration,
    /// Kept back from Lambda's deadline.
    pub lambda_margin: Duration,
}

impl Default for DeadlinePolicy {
    fn default() -> Self {
        DeadlinePolicy {
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            lambda_margin: DEFAULT_LAMBDA_DEADLINE_MARGIN,
        }
    }
}

impl DeadlinePolicy {
    /// Reads [`REQUEST_TIMEOUT_KEY`] and [`LAMBDA_DEADLINE_MARGIN_KEY`] (dotted or environment
    /// form) from `map`; other keys are left to their owners.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, GatewayError> {
        let mut policy = DeadlinePolicy::default();
        settings::read(
            map,
            &[],
            &mut [
                (
                    REQUEST_TIMEOUT_KEY,
                    Slot::Duration {
                        slot: &mut policy.request_timeout,
                        allow_zero: false,
                    },
                ),
                (
                    LAMBDA_DEADLINE_MARGIN_KEY,
                    Slot::Duration {
                        slot: &mut policy.lambda_margin,
                        allow_zero: true,
                    },
                ),
            ],
            "deadline",
        )?;
        Ok(policy)
    }

    /// The deadline of a request (or event invocation) that started now, given Lambda's
    /// deadline in epoch milliseconds if there is one; an implausible one is ignored (see
    /// [`plausible_deadline`]).
    pub fn deadline(&self, lambda_deadline_epoch_ms: Option<u64>) -> Deadline {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        match lambda_deadline_epoch_ms.and_then(|ms| plausible_deadline(ms, now_ms)) {
            Some(ms) => Deadline::for_lambda(self.request_timeout, ms, self.lambda_margin),
            None => Deadline::after(self.request_timeout),
        }
    }
}

/// Lambda's deadline if it is a real epoch instant. `cargo lambda watch` (1.9) sends its
/// timeout itself (`600000`) instead of an instant; read as an epoch time it would expire every
/// request at once, so anything more than a minute in the past is ignored and the configured
/// timeout alone applies.
pub fn plausible_deadline(deadline_ms: u64, now_ms: u64) -> Option<u64> {
    (deadline_ms.saturating_add(60_000) >= now_ms).then_some(deadline_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plausible_lambda_deadlines_are_used() {
        let now = 1_796_231_613_621;
        assert_eq!(plausible_deadline(now + 3_000, now), Some(now + 3_000));
        // Just expired: a real deadline, the request fails fast with `timeout`.
        assert_eq!(plausible_deadline(now - 10, now), Some(now - 10));
        // cargo lambda watch's relative value.
        assert_eq!(plausible_deadline(600_000, now), None);
        let policy = DeadlinePolicy::default();
        assert!(policy.deadline(Some(600_000)).remaining() > Duration::from_secs(1));
    }

    fn epoch_ms_in(d: Duration) -> u64 {
        let at = SystemTime::now() + d;
        u64::try_from(
            at.duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis(),
        )
        .unwrap_or(u64::MAX)
    }

    #[test]
    fn the_earlier_of_request_timeout_and_lambda_remaining_minus_margin_wins() {
        let margin = Duration::from_millis(500);
        let d = Deadline::for_lambda(
            Duration::from_secs(30),
            epoch_ms_in(Duration::from_secs(3)),
            margin,
        );
        assert!(d.budget() <= Duration::from_millis(2_500), "{d:?}");
        assert!(d.budget() >= Duration::from_millis(2_300), "{d:?}");

        let d = Deadline::for_lambda(
            Duration::from_secs(1),
            epoch_ms_in(Duration::from_secs(900)),
            margin,
        );
        assert_eq!(d.budget(), Duration::from_secs(1));

        // Lambda time already below the margin: expired at once, never negative.
        let d = Deadline::for_lambda(
            Duration::from_secs(30),
            epoch_ms_in(Duration::from_millis(100)),
            margin,
        );
        assert!(d.is_expired());
        assert_eq!(d.remaining(), Duration::ZERO);
    }

    #[tokio::test]
    async fn expiry_is_a_timeout_error() {
        let d = Deadline::after(Duration::from_millis(20));
        let started = Instant::now();
        let err = d
            .bound("write", std::future::pending::<()>())
            .await
            .expect_err("must expire");
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(err.code(), ErrorCode::Timeout);
        assert_eq!(err.message(), "write did not complete within 20ms");
        assert_eq!(d.bound("x", async { 7 }).await, Err(d.timeout_error("x")));
        let fresh = Deadline::after(Duration::from_secs(5));
        assert_eq!(fresh.bound("x", async { 7 }).await, Ok(7));
    }

    #[tokio::test]
    async fn fluss_errors_are_mapped_by_run() {
        let d = Deadline::after(Duration::from_secs(5));
        let err = d
            .run("write", async {
                Err::<(), _>(fluss::error::Error::BufferExhausted {
                    message: "full".into(),
                })
            })
            .await
            .expect_err("error");
        assert_eq!(err.code(), ErrorCode::ResourceExhausted);
    }

    #[test]
    fn capped_takes_the_earlier_instant() {
        let d = Deadline::after(Duration::from_secs(30));
        assert_eq!(
            d.capped(Duration::from_secs(2)).budget(),
            Duration::from_secs(2)
        );
        let short = Deadline::after(Duration::from_millis(10));
        assert_eq!(short.capped(Duration::from_secs(2)), short);
    }

    #[test]
    fn policy_reads_both_key_forms() {
        let map: BTreeMap<String, String> = [
            ("FLUSS_GATEWAY__REST__REQUEST_TIMEOUT", "5s"),
            ("gateway.lambda.deadline-margin", "200ms"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let p = DeadlinePolicy::from_map(&map).expect("valid");
        assert_eq!(p.request_timeout, Duration::from_secs(5));
        assert_eq!(p.lambda_margin, Duration::from_millis(200));
        let bad: BTreeMap<String, String> =
            [("gateway.rest.request-timeout".to_owned(), "0s".to_owned())].into();
        let e = DeadlinePolicy::from_map(&bad).expect_err("zero timeout");
        assert!(e.message().contains("gateway.rest.request-timeout"));
        assert_eq!(p.deadline(None).budget(), Duration::from_secs(5));
    }
}
