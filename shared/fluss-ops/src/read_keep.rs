//! Scanners kept between the reads of one consumer (issue `[reads]`, rows/s). A fresh scanner
//! costs a read a subscribe and a first fetch round trip, and drops whatever it fetched past
//! the answer: for a consumer paging through a log that was about half of each read's time. So
//! a read leaves its scanner here, under the cursor it answered with, together with the
//! records it fetched but did not answer; the read that brings that cursor takes the scanner
//! back and goes on where it stood, with what the scanner fetched in the meantime.
//!
//! Keeping is only ever a shortcut: the cursor alone says where to read. A read whose cursor
//! finds nothing here (another container, a cursor used twice, a consumer slower than
//! `keep_for`) reads with a fresh scanner and gets the same records.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use fluss_pool::PooledConnection;
use gateway_core::cursor::Cursor;

use crate::read_scanner::{Polled, Scanner};

/// What a kept scanner was made for: it serves only a read that asks for exactly this.
pub(crate) struct KeepKey {
    /// The connection it reads on (the caller's identity, and the connection's generation: a
    /// rebuilt connection leaves the old one's scanners unused).
    pub(crate) conn: Arc<PooledConnection>,
    /// Where the next record of each bucket is (and the table and partition).
    pub(crate) cursor: Cursor,
    /// The projection, as column indices.
    pub(crate) columns: Option<Vec<usize>>,
    /// Batches (Arrow answers) or records.
    pub(crate) batches: bool,
    /// The fetch sizes it was made with.
    pub(crate) fetch: (i32, i32),
}

impl KeepKey {
    fn same(&self, other: &KeepKey) -> bool {
        Arc::ptr_eq(&self.conn, &other.conn)
            && self.cursor == other.cursor
            && self.columns == other.columns
            && self.batches == other.batches
            && self.fetch == other.fetch
    }
}

/// A scanner kept after a read: it stands past `leftover`, the records of its last poll the
/// answer had no room for (the next read takes them first).
pub(crate) struct Kept {
    pub(crate) scanner: Scanner,
    pub(crate) leftover: Option<Polled>,
}

/// The scanners a container keeps between reads: at most `capacity`, each for at most
/// `keep_for` (the oldest goes first). Each holds what it fetched and has not answered, up to
/// one fetch (`fetch_sizes` of `read`: 1 MiB per bucket at most) plus one in flight.
#[derive(Clone)]
pub struct KeptScanners {
    shelf: Arc<Shelf<KeepKey, Kept>>,
}

impl std::fmt::Debug for KeptScanners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptScanners")
            .field("capacity", &self.shelf.capacity)
            .field("keep_for", &self.shelf.keep_for)
            .field("kept", &self.shelf.len())
            .finish()
    }
}

impl KeptScanners {
    /// Room for `capacity` scanners, each kept for `keep_for` (0 of either keeps none).
    pub fn new(capacity: usize, keep_for: Duration) -> Self {
        let capacity = if keep_for.is_zero() { 0 } else { capacity };
        KeptScanners {
            shelf: Arc::new(Shelf::new(capacity, keep_for)),
        }
    }

    pub(crate) fn take(&self, key: &KeepKey) -> Option<Kept> {
        self.shelf.take(|k| k.same(key))
    }

    pub(crate) fn keep(&self, key: KeepKey, kept: Kept) {
        self.shelf.put(key, kept);
    }
}

/// A few values under keys, each for a while; the oldest makes room.
struct Shelf<K, V> {
    capacity: usize,
    keep_for: Duration,
    items: Mutex<VecDeque<(K, V, Instant)>>,
}

impl<K, V> Shelf<K, V> {
    fn new(capacity: usize, keep_for: Duration) -> Self {
        Shelf {
            capacity,
            keep_for,
            items: Mutex::new(VecDeque::with_capacity(capacity)),
        }
    }

    fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(K, V, Instant)>> {
        // The deque holds no invariant a panic elsewhere could break.
        self.items.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Removes what has been kept too long; returns it, to be dropped outside the lock.
    fn expired(&self, items: &mut VecDeque<(K, V, Instant)>) -> Vec<(K, V, Instant)> {
        let now = Instant::now();
        let mut gone = Vec::new();
        while items
            .front()
            .is_some_and(|(_, _, at)| now.duration_since(*at) >= self.keep_for)
        {
            gone.extend(items.pop_front());
        }
        gone
    }

    /// The newest value whose key `matches`, taken off the shelf.
    fn take(&self, matches: impl Fn(&K) -> bool) -> Option<V> {
        let mut items = self.lock();
        let gone = self.expired(&mut items);
        let found = items
            .iter()
            .rposition(|(k, _, _)| matches(k))
            .and_then(|i| items.remove(i))
            .map(|(_, v, _)| v);
        drop(items);
        drop(gone);
        found
    }

    fn put(&self, key: K, value: V) {
        if self.capacity == 0 {
            return;
        }
        let mut items = self.lock();
        let mut gone = self.expired(&mut items);
        while items.len() >= self.capacity {
            gone.extend(items.pop_front());
        }
        items.push_back((key, value, Instant::now()));
        drop(items);
        drop(gone);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_taken_once_by_its_key() {
        let shelf = Shelf::new(2, Duration::from_secs(60));
        shelf.put(1, "a");
        shelf.put(2, "b");
        assert_eq!(shelf.take(|k| *k == 1), Some("a"));
        assert_eq!(shelf.take(|k| *k == 1), None);
        assert_eq!(shelf.len(), 1);
    }

    #[test]
    fn the_oldest_makes_room_and_the_newest_of_a_key_is_taken_first() {
        let shelf = Shelf::new(2, Duration::from_secs(60));
        shelf.put(1, "a");
        shelf.put(1, "b");
        shelf.put(2, "c");
        assert_eq!(shelf.len(), 2);
        assert_eq!(shelf.take(|k| *k == 1), Some("b"));
        assert_eq!(shelf.take(|k| *k == 1), None);
        shelf.put(3, "d");
        shelf.put(3, "e");
        assert_eq!(shelf.take(|k| *k == 3), Some("e"));
        assert_eq!(shelf.take(|k| *k == 3), Some("d"));
    }

    #[test]
    fn nothing_is_kept_past_its_time_or_without_room() {
        let shelf = Shelf::new(4, Duration::from_millis(30));
        shelf.put(1, "a");
        std::thread::sleep(Duration::from_millis(40));
        shelf.put(2, "b");
        assert_eq!(shelf.take(|k| *k == 1), None);
        assert_eq!(shelf.len(), 1);
        let none = Shelf::new(0, Duration::from_secs(60));
        none.put(1, "a");
        assert_eq!(none.take(|k| *k == 1), None);
    }
}
