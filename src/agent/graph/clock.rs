//! The order in which ADK 2.13's asyncio tasks reach their events, kept as a count.
//!
//! In ADK every node run is an asyncio task, and every event a node makes goes through
//! one queue (`InvocationContext._enqueue_event`) that the Runner drains; the node then
//! waits until its event is stored. The events of nodes running together therefore come
//! in the order their tasks *put* them, and that order is the order of asyncio's ready
//! queue, a FIFO: a callback appended earlier runs earlier. No timer or I/O is involved
//! with scripted (or already answered) models, so the order is exact and deterministic.
//!
//! This module counts entries of that FIFO. Every actor (a node's task, a workflow's
//! loop, the Runner's consumer) is a chain: when its entry runs, it appends its next one
//! (a task's wake-up, a done callback, an `asyncio.wait` completion), so an actor that is
//! `k` entries away from its next action acts after every entry appended before each of
//! those `k`. Entries that are not on any actor's chain (a `gather`'s other children,
//! the abort task) change no relative order and are not counted. An actor due at entry
//! `at` with `left` more entries to go is a [`Due`]; [`Clock::tick`] appends an entry.
//!
//! The consumer (`Runner._consume_event_queue`) is modelled here: idle, it waits on a
//! `Queue.get` task, so a put reaches it three entries later (the getter's task, the
//! `asyncio.wait` completion, the consumer); it then stores every event queued by then,
//! in order, waking each producer one entry later, and arms a new `get` task (one entry),
//! which finds the events put meanwhile (two more entries) or waits again.

use std::collections::VecDeque;

/// An actor's next entry and how many more it waits through before it acts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Due {
    /// The index of its next entry in the ready queue.
    pub(super) at: u64,
    /// Entries after that one before it acts (0: it acts when `at` runs).
    pub(super) left: u32,
}

impl Due {
    /// One entry further: `true` when the actor acts now.
    pub(super) fn step(&mut self, clock: &mut Clock) -> bool {
        if self.left == 0 {
            return true;
        }
        self.left -= 1;
        self.at = clock.tick();
        false
    }
}

/// What the Runner's consumer is doing.
#[derive(Debug, Clone, Copy)]
enum Consumer {
    /// Waiting on a `Queue.get` task that found the queue empty.
    Idle,
    /// A new `Queue.get` task, created after storing a batch, runs at this entry.
    Arming(u64),
    /// On its way to storing what is queued.
    Waking(Due),
}

/// The ready queue's count, the events put and stored, and the consumer.
#[derive(Debug)]
pub(super) struct Clock {
    /// The index the next appended entry gets.
    next: u64,
    /// Events put so far (the next put's number).
    puts: u64,
    /// Events stored so far: puts below this number were stored.
    stored: u64,
    /// Each batch the consumer stored not yet resumed in full: its first put's number and
    /// the entry at which that put's producer resumes (the batch's others follow it).
    batches: VecDeque<(u64, u64)>,
    consumer: Consumer,
}

impl Default for Clock {
    fn default() -> Self {
        Clock {
            next: 0,
            puts: 0,
            stored: 0,
            batches: VecDeque::new(),
            consumer: Consumer::Idle,
        }
    }
}

impl Clock {
    /// Appends an entry: its index.
    pub(super) fn tick(&mut self) -> u64 {
        let at = self.next;
        self.next += 1;
        at
    }

    /// An actor puts an event now: the put's number, which [`Clock::resumes_at`] answers
    /// for once the consumer stored it.
    pub(super) fn put(&mut self) -> u64 {
        let number = self.puts;
        self.puts += 1;
        if let Consumer::Idle = self.consumer {
            // The getter's task wakes; then the `asyncio.wait` completion; then the consumer.
            let at = self.tick();
            self.consumer = Consumer::Waking(Due { at, left: 2 });
        }
        number
    }

    /// Events put so far: the number the next put gets.
    pub(super) fn puts(&self) -> u64 {
        self.puts
    }

    /// Events the consumer stored so far: every put numbered below this.
    pub(super) fn stored(&self) -> u64 {
        self.stored
    }

    /// The entry at which the producer of put `number` resumes (`None`: not stored yet).
    pub(super) fn resumes_at(&self, number: u64) -> Option<u64> {
        if number >= self.stored {
            return None;
        }
        let k = self.batches.partition_point(|&(first, _)| first <= number);
        let (first, at) = *self.batches.get(k.checked_sub(1)?)?;
        Some(at + (number - first))
    }

    /// The producer of put `number` resumed: earlier batches are done with.
    pub(super) fn resumed(&mut self, number: u64) {
        while self.batches.len() > 1 && self.batches[1].0 <= number {
            self.batches.pop_front();
        }
    }

    /// The consumer's next entry (`None`: it waits for a put).
    pub(super) fn consumer_due(&self) -> Option<u64> {
        match self.consumer {
            Consumer::Idle => None,
            Consumer::Arming(at) => Some(at),
            Consumer::Waking(due) => Some(due.at),
        }
    }

    /// Runs the consumer's entry.
    pub(super) fn step_consumer(&mut self) {
        match self.consumer {
            Consumer::Idle => {}
            Consumer::Arming(_) => {
                self.consumer = if self.puts > self.stored {
                    // The `get` returns at once: its completion, then the consumer.
                    let at = self.tick();
                    Consumer::Waking(Due { at, left: 1 })
                } else {
                    Consumer::Idle
                };
            }
            Consumer::Waking(mut due) => {
                if !due.step(self) {
                    self.consumer = Consumer::Waking(due);
                    return;
                }
                // Stores every queued event; each producer wakes one entry later, in order.
                if self.puts > self.stored {
                    self.batches.push_back((self.stored, self.next));
                    self.next += self.puts - self.stored;
                    self.stored = self.puts;
                }
                let at = self.tick();
                self.consumer = Consumer::Arming(at);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Clock;

    #[test]
    fn a_batch_resumes_in_order() {
        let mut clock = Clock::default();
        let a = clock.put();
        let b = clock.put();
        assert_eq!(clock.resumes_at(a), None);
        while clock.resumes_at(b).is_none() {
            clock.step_consumer();
        }
        let at = clock.resumes_at(a).unwrap();
        assert_eq!(clock.resumes_at(b), Some(at + 1));
        // The get task armed after the batch finds nothing and waits.
        clock.step_consumer();
        assert_eq!(clock.consumer_due(), None);
    }
}
