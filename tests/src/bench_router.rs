//! The production routers called in-process, without a socket, for the benchmarks that measure
//! the gateway's own work. Built only with the `bench` feature (axum and tower are optional).

use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{Request, StatusCode};
use axum::response::Response;
use tower::ServiceExt;

/// `req` through a clone of `router`, as every request of the gateway is served.
pub async fn call(router: &axum::Router, req: Request<Body>) -> Result<Response, String> {
    router.clone().oneshot(req).await.map_err(|e| e.to_string())
}

/// [`call`] with the whole answer read: its status and body (at most 16 MiB).
pub async fn call_read(
    router: &axum::Router,
    req: Request<Body>,
) -> Result<(StatusCode, Bytes), String> {
    let resp = call(router, req).await?;
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 16 * 1024 * 1024)
        .await
        .map_err(|e| e.to_string())?;
    Ok((status, bytes))
}

/// How long `req` took through `router` (the answer's head, not its body); an error unless it
/// answered 200.
pub async fn timed_200(router: &axum::Router, req: Request<Body>) -> Result<Duration, String> {
    let t = Instant::now();
    let resp = call(router, req).await?;
    let elapsed = t.elapsed();
    if resp.status() != 200 {
        return Err(format!("status {}", resp.status()));
    }
    Ok(elapsed)
}

/// The bytes of `body` taken frame by frame, as a connection writes an answer out, counted and
/// not joined into one buffer (joining is a copy no server makes).
pub async fn drain(body: Body) -> Result<usize, String> {
    let mut body = std::pin::pin!(body);
    let mut bytes = 0;
    while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        if let Ok(data) = frame.map_err(|e| e.to_string())?.into_data() {
            bytes += data.len();
        }
    }
    Ok(bytes)
}
